// loop_emitter.cpp — the generic kernel family: any element expression as
// a loop nest over the output in its physical order. One task is one row
// of the innermost physical axis; the row is computed `lanes` elements at a
// time, and its remainder with a masked vector (x86) or scalar code.
#include "codegen/kernel_emitters.h"

namespace tinyrt {

EmittedKernel emit_loop_kernel(EmitEnv &env, const Kernel &k, const std::string &name) {
  const Program &p = env.program;
  const Value &out = p.graph.v(k.out);
  const Target &T = env.target;
  int r = out.rank();

  // Physical order without size-1 axes: the last one is vectorized.
  std::vector<int> perm = p.perm_of(k.out);
  if (perm.empty())
    for (int a = 0; a < r; ++a) perm.push_back(a);
  std::vector<int> phys;
  for (int a : perm)
    if (out.shape[a] != 1) phys.push_back(a);
  int inner_axis = phys.empty() ? -1 : phys.back();
  int64_t inner = inner_axis < 0 ? 1 : out.shape[inner_axis];
  int64_t tasks = 1;
  for (size_t i = 0; i + 1 < phys.size(); ++i) tasks *= out.shape[phys[i]];
  bool empty = out.numel() == 0;

  std::map<int, int64_t> extents;
  for (int a = 0; a < r; ++a) extents[a] = out.shape[a];
  ExprP expr = simplify_with_ranges(k.expr, extents);

  llvm::IRBuilder<> b(env.module.getContext());
  llvm::Function *f = begin_kernel_function(env, b, name);
  llvm::Value *arena = f->getArg(0);
  EmittedKernel result{f, empty ? 1 : tasks};
  if (empty) {
    b.CreateRetVoid();
    return result;
  }
  std::vector<SlotRef> slots;
  for (int v : k.ins) slots.push_back(slot_for(env, b, arena, v));
  SlotRef out_slot = slot_for(env, b, arena, k.out);
  int L = T.f32_lanes();

  emit_counted_loop(b, f->getArg(1), f->getArg(2), [&](llvm::Value *t) {
    // Task index -> the outer physical axes.
    std::map<int, llvm::Value *> outer;
    llvm::Value *rem = t;
    for (size_t i = phys.size() - (phys.empty() ? 0 : 1); i-- > 0;) {
      llvm::Value *ext = b.getInt32((int32_t)out.shape[phys[i]]);
      outer[phys[i]] = i == 0 ? rem : b.CreateURem(rem, ext);
      if (i > 0) rem = b.CreateUDiv(rem, ext);
    }
    auto run = [&](int lanes, llvm::Value *j, llvm::Value *mask) {
      ExprEmitter em(b, T, lanes);
      em.set_slots(slots);
      em.set_mask(mask);
      std::vector<VVal> idx(r);
      for (int a = 0; a < r; ++a) {
        if (a == inner_axis) idx[a] = em.affine(j, 1);
        else if (outer.count(a)) idx[a] = em.uniform(outer[a]);
        else idx[a] = em.uniform(b.getInt32(0));
        em.bind(a, idx[a]);
      }
      em.store(out_slot, idx, em.emit(expr), out.dtype);
    };
    if (inner_axis < 0) {  // a single element per task
      run(1, b.getInt32(0), nullptr);
      return;
    }
    int64_t main = inner / L;
    if (main > 0)
      emit_counted_loop(b, b.getInt32(0), b.getInt32((int32_t)main),
                        [&](llvm::Value *j) { run(L, b.CreateMul(j, b.getInt32(L)), nullptr); }, "vec");
    int64_t tail = inner % L;
    if (tail == 0) return;
    if (T.masked_tail && L > 1) {
      std::vector<llvm::Constant *> m;
      for (int i = 0; i < L; ++i) m.push_back(b.getInt1(i < tail));
      run(L, b.getInt32((int32_t)(main * L)), llvm::ConstantVector::get(m));
    } else {
      emit_counted_loop(b, b.getInt32((int32_t)(main * L)), b.getInt32((int32_t)inner),
                        [&](llvm::Value *j) { run(1, j, nullptr); }, "tail");
    }
  }, "task");
  b.CreateRetVoid();
  return result;
}

}  // namespace tinyrt

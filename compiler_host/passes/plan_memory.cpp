// plan_memory.cpp — one arena for graph inputs, outputs and intermediates.
// Each buffer is live from the step that writes it to the last step that
// reads it (or a view of it; a guard's condition: the last step it
// guards); graph inputs from the start, outputs to the end. A kernel
// writes in place over an input that dies with it when it reads that input
// only at the output's own index (elementwise chains, residual adds in
// convolution epilogues). The planner (memory_planner.h) places the
// buffers, 64-byte aligned; the lower bound reported beside the arena is
// the peak of simultaneously live bytes.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "passes/memory_planner.h"
#include "passes/pass.h"

namespace tinyrt {

namespace {

constexpr int64_t kAlign = 64;

// Can kernel k (at step t) write its output over input slot s?
bool can_write_over(const Program &p, const Kernel &k, size_t s, const std::vector<int> &last_use,
                    const std::vector<bool> &viewed, int t) {
  const Graph &g = p.graph;
  int v = k.ins[s];
  const Value &in = g.v(v), &out = g.v(k.out);
  if (p.root(v) != v || viewed[v] || in.is_const() || last_use[v] != t || g.is_graph_output(v)) return false;
  for (int gi : g.inputs)
    if (gi == v) return false;  // the application's input stays intact
  if (in.shape != out.shape || dtype_bytes(in.dtype) != dtype_bytes(out.dtype) ||
      p.layout_strides(v) != p.layout_strides(k.out) || p.alias.count(k.out))
    return false;
  // A Winograd output transform reads its residual like a convolution's
  // epilogue; the other kinds without expression (recurrent: reads its
  // inputs at every step; a custom call; the input transform) never.
  bool epilogue = is_scheduled(k.kind) || k.kind == KernelKind::WinogradOut;
  if (!has_expr(k.kind) && !epilogue) return false;
  ExprP e = k.expr;
  if (epilogue) {
    if (s == 0 || k.ins[0] == v) return false;  // the convolution reads other pixels
    e = k.gemm.epilogue;
  }
  // v may sit in several slots (Gemm(y, y, y), ScatterElements(y, i, y)):
  // every read of it must be at the output's own index.
  if (epilogue)
    for (size_t o = 0; o < k.ins.size(); ++o)
      if (o != s && k.ins[o] == v) return false;
  bool identity = true;
  visit(e, [&](const Expr &x) {
    if (x.op == EOp::Load && k.ins[x.id] == v && !is_identity_load(x, x.id, in.shape)) identity = false;
  });
  return identity;
}

// A guarded kernel's step reads its guard's condition byte.
int guard_condition(const Graph &g, const Kernel &k) { return k.guard < 0 ? -1 : g.guards.at(k.guard).eff; }

// The last step reading each value (through itself or a view); kernel i
// runs at step i + 1, graph outputs are read at step `end`.
std::vector<int> last_uses(const Program &p, int end) {
  const Graph &g = p.graph;
  std::vector<int> last_use(g.values.size(), -1);
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    for (int v : p.kernels[i].ins) last_use[p.root(v)] = std::max(last_use[p.root(v)], (int)i + 1);
    if (int e = guard_condition(g, p.kernels[i]); e >= 0)
      last_use[p.root(e)] = std::max(last_use[p.root(e)], (int)i + 1);
  }
  for (int o : g.outputs) last_use[p.root(o)] = end;
  return last_use;
}

// The buffer owner of each value: itself, its view's root, or the input a
// kernel wrote over; *in_place counts the kernels that write over an input.
std::vector<int> buffer_owners(const Program &p, const std::vector<int> &last_use, int *in_place) {
  size_t nv = p.graph.values.size();
  std::vector<bool> viewed(nv, false);
  for (auto &kv : p.alias) viewed[p.root(kv.first)] = true;
  std::vector<int> owner(nv);
  for (size_t v = 0; v < nv; ++v) owner[v] = p.root((int)v);
  // A value several kernels write (a Winograd convolution's bands) goes
  // over an input only if, from its first writer on, no other kernel reads
  // that input: the writers read it at their own pixels, others anywhere.
  std::vector<int> first_writer(nv, -1);
  for (size_t i = 0; i < p.kernels.size(); ++i)
    if (first_writer[p.kernels[i].out] < 0) first_writer[p.kernels[i].out] = (int)i;
  auto others_read = [&](const Kernel &k, int v, size_t i) {
    for (size_t j = (size_t)first_writer[k.out]; j < i; ++j) {
      const Kernel &o = p.kernels[j];
      if (o.out == k.out) continue;
      for (int u : o.ins)
        if (p.root(u) == p.root(v)) return true;
    }
    return false;
  };
  *in_place = 0;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel &k = p.kernels[i];
    for (size_t s = 0; s < k.ins.size(); ++s)
      if (can_write_over(p, k, s, last_use, viewed, (int)i + 1) && !others_read(k, k.ins[s], i)) {
        owner[k.out] = owner[k.ins[s]];
        ++*in_place;
        break;
      }
  }
  for (size_t v = 0; v < nv; ++v) owner[v] = owner[p.root((int)v)];
  return owner;
}

// Each owner's live range, from the first step touching any value it holds
// to the last: graph inputs from step 0, outputs to `end`; constants and
// a GEMM's weights take no arena bytes, nor a branch error's placeholder.
void live_ranges(const Program &p, const std::vector<int> &owner, int end, std::vector<int> *first,
                 std::vector<int> *last) {
  const Graph &g = p.graph;
  first->assign(g.values.size(), -1);
  last->assign(g.values.size(), -1);
  auto touch = [&](int v, int t) {
    int o = owner[v];
    if ((*first)[o] < 0 || t < (*first)[o]) (*first)[o] = t;
    (*last)[o] = std::max((*last)[o], t);
  };
  for (int v : g.inputs) touch(v, 0);
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel &k = p.kernels[i];
    int t = (int)i + 1;
    for (size_t s = 0; s < k.ins.size(); ++s) {
      if (is_scheduled(k.kind) && (int)s != 0 && k.ins[s] == k.gemm.weight) continue;
      if (!g.v(k.ins[s]).is_const()) touch(k.ins[s], t);
    }
    if (int e = guard_condition(g, k); e >= 0) touch(e, t);
    if (k.kind != KernelKind::Fail) touch(k.out, t);
  }
  for (int o : g.outputs) touch(o, end);
}

// Every value's storage: constants in the code, the others at their
// owner's offset (views at their root's, with their own strides).
void assign_storage(Program &p, const std::vector<int> &owner, const std::vector<int64_t> &offset_of) {
  const Graph &g = p.graph;
  size_t nv = g.values.size();
  p.storage.assign(nv, {});
  for (size_t v = 0; v < nv; ++v)
    if (g.values[v].is_const()) {
      p.storage[v].where = Storage::Where::Const;
      p.storage[v].strides = p.layout_strides((int)v);
    }
  for (size_t v = 0; v < nv; ++v) {
    if (g.values[v].is_const() || p.alias.count((int)v) || offset_of[owner[v]] < 0) continue;
    Storage &s = p.storage[v];
    s.where = Storage::Where::Arena;
    s.offset = offset_of[owner[v]];
    s.strides = p.layout_strides((int)v);
  }
  for (auto &kv : p.alias) {
    int r = p.root(kv.first);
    Storage &s = p.storage[kv.first];
    s = p.storage[r];
    s.strides = row_major_strides(g.v(kv.first).shape);
  }
}

// The arena buffers (values that own their bytes, live at some step) and
// their requests: bytes and live steps.
void buffer_requests(const Program &p, std::vector<int> *owner, std::vector<int> *values,
                     std::vector<BufferRequest> *requests, int *in_place) {
  const Graph &g = p.graph;
  const int end = (int)p.kernels.size() + 1;  // kernel i runs at step i + 1
  *owner = buffer_owners(p, last_uses(p, end), in_place);
  std::vector<int> first, last;
  live_ranges(p, *owner, end, &first, &last);
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (first[v] < 0 || (*owner)[v] != (int)v || g.values[v].is_const()) continue;
    values->push_back((int)v);
    requests->push_back({sat_mul(g.values[v].numel(), dtype_bytes(g.values[v].dtype)), first[v], last[v]});
  }
}

}  // namespace

std::string ratio_text(double r) {
  char buf[32];
  snprintf(buf, sizeof buf, "%g", r);
  return buf;
}

int64_t planned_arena(const Program &p) {
  std::vector<int> owner, values;
  std::vector<BufferRequest> requests;
  int in_place = 0;
  buffer_requests(p, &owner, &values, &requests, &in_place);
  return plan_buffers(requests, kAlign).arena;
}

void hold_placed_arena(PassContext &c, const char *pass, const char *what,
                       const std::function<bool(PassContext &, int64_t)> &choose,
                       const std::function<int64_t(const Program &)> &placed_of) {
  auto arena_of = [&](const Program &q) { return placed_of ? placed_of(q) : planned_arena(q); };
  Program &p = c.program;
  int64_t cut = 0, before = -1;
  for (int attempt = 0;; ++attempt) {
    Program q = p;
    std::ostringstream lg;
    PassContext qc{q, c.target, c.log ? &lg : nullptr};
    const bool taken = choose(qc, cut);
    const int64_t placed = taken ? arena_of(q) : 0, budget = q.budgets.arena;
    if (placed > budget && before < 0) before = arena_of(p);
    const int64_t limit = std::max(budget, before);
    if (placed <= limit || cut > budget) {
      if (c.log) *c.log << lg.str();
      p = std::move(q);
      return;
    }
    cut = attempt < 3 ? cut + (placed - limit) : budget + 1;
    if (c.log)
      *c.log << "  " << pass << ": the arena placed with these " << what << " takes " << placed
             << " bytes, over the budget of " << budget << "; choosing again with each step's room cut by "
             << std::min(cut, budget) << " bytes\n";
  }
}

std::vector<int64_t> live_bytes(const Program &p) {
  const int n = (int)p.kernels.size();
  std::vector<int> owner, values;
  std::vector<BufferRequest> requests;
  int in_place = 0;
  buffer_requests(p, &owner, &values, &requests, &in_place);
  std::vector<int64_t> delta((size_t)n + 3, 0);  // per step: bytes that start, minus bytes that ended
  for (const BufferRequest &r : requests) {
    delta[(size_t)r.first] = sat_add(delta[(size_t)r.first], r.bytes);
    delta[(size_t)r.last + 1] -= r.bytes;
  }
  std::vector<int64_t> live((size_t)n, 0);
  int64_t at = delta[0];  // step 0: the inputs
  for (int i = 0; i < n; ++i) live[(size_t)i] = at = sat_add(at, delta[(size_t)i + 1]);
  return live;
}

void plan_memory(PassContext &c) {
  Program &p = c.program;
  Graph &g = p.graph;
  size_t nv = g.values.size();
  p.perm.resize(nv);  // values added since choose_layouts: row-major
  int in_place = 0;
  std::vector<int> owner, values;
  std::vector<BufferRequest> requests;
  buffer_requests(p, &owner, &values, &requests, &in_place);
  BufferPlan plan = plan_buffers(requests, kAlign);
  std::vector<int64_t> offset_of(nv, -1);
  for (size_t i = 0; i < values.size(); ++i) offset_of[values[i]] = plan.offsets[i];
  assign_storage(p, owner, offset_of);

  int64_t arena = plan.arena, bound = plan.lower_bound;
  // Custom-op calls store their status in one 64-byte slot at the end of
  // the arena (always live: it counts in the lower bound too).
  p.stats.call_status_offset = -1;
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Call) {
      p.stats.call_status_offset = align_up(arena, kAlign);
      arena = p.stats.call_status_offset + 64;
      bound += 64;
      break;
    }
  // Dynamic inputs and outputs keep their actual dimensions in a block
  // after it (always live: the application sets an input's before a run,
  // reads an output's after).
  auto dims_blocks = [&](const std::vector<int> &vals, std::vector<int64_t> *offsets) {
    offsets->assign(vals.size(), -1);
    for (size_t i = 0; i < vals.size(); ++i) {
      const Value &v = g.v(vals[i]);
      if (!v.is_dynamic()) continue;
      (*offsets)[i] = align_up(arena, kAlign);
      arena = (*offsets)[i] + 8 * std::max(v.rank(), 1);
      bound += 8 * std::max(v.rank(), 1);
    }
  };
  dims_blocks(g.inputs, &p.stats.input_dims);
  dims_blocks(g.outputs, &p.stats.output_dims);
  p.stats.sym_offsets.assign(g.syms.size(), -1);
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value &v = g.v(g.inputs[i]);
    for (int a = 0; a < v.rank(); ++a)
      if (v.dim(a) >= 0 && p.stats.sym_offsets[(size_t)v.dim(a)] < 0)
        p.stats.sym_offsets[(size_t)v.dim(a)] = p.stats.input_dims[i] + 8 * a;
  }
  // Data-dependent extents (DimSym::produced): the int64 their kernel
  // writes (Kernel::count, a holder no kernel lists, so not planned
  // above), in the same block (kernels after it loop to it; the last step
  // reports an output's).
  for (size_t s = 0; s < g.syms.size(); ++s) {
    const DimSym &d = g.syms[s];
    if (!d.produced) continue;
    if (d.holder < 0) {  // its op was dropped as unused: no kernel may loop to it
      for (const Kernel &k : p.kernels) {
        std::vector<int> vals = k.ins;
        vals.push_back(k.out);
        for (int v : vals)
          for (int a = 0; a < g.v(v).rank(); ++a)
            if (g.v(v).dim(a) == (int)s)
              fail_internal("the data-dependent dimension " + d.name + " has no kernel computing it");
      }
      continue;
    }
    p.stats.sym_offsets[s] = align_up(arena, 8);
    arena = p.stats.sym_offsets[s] + 8;
    bound += 8;
    p.storage.at((size_t)d.holder) = {Storage::Where::Arena, p.stats.sym_offsets[s], {}};
  }
  for (size_t s = 0; s < g.syms.size(); ++s)
    if (!g.syms[s].def && !g.syms[s].produced && p.stats.sym_offsets[s] < 0)
      fail_internal("the run-time dimension " + g.syms[s].name + " is no input's");
  int64_t cap = g.limits.max_arena_bytes;
  // --max-arena-bytes Rx: the winograd pass measured the plan without
  // transforms and set the budget from it.
  const bool ratio = g.limits.max_arena_ratio > 0 && p.budgets.base_arena > 0;
  if (ratio) cap = std::min(cap, p.budgets.arena);
  if (c.target.ptr_bytes == 4) cap = std::min<int64_t>(cap, int64_t(1) << 31);  // addresses are 32-bit
  if (arena > cap) {
    fail_unsupported("the memory plan needs an arena of " + std::to_string(arena) + " bytes, more than the limit of " +
                     std::to_string(cap) + " bytes" +
                     (ratio ? " (--max-arena-bytes " + ratio_text(g.limits.max_arena_ratio) + "x of the " +
                                  std::to_string(p.budgets.base_arena) + " bytes live at the peak without transforms)"
                      : c.target.ptr_bytes == 4 ? " on a 32-bit target"
                                                : " (raise it with --max-arena-bytes)"));
  }
  p.stats.arena_bytes = arena;
  p.stats.lower_bound_bytes = bound;
  p.stats.buffers.clear();
  for (size_t i = 0; i < values.size(); ++i)
    p.stats.buffers.push_back({values[i], plan.offsets[i], plan.bytes[i], requests[i].first, requests[i].last});
  if (c.log)
    *c.log << "  arena " << arena << " bytes, lower bound " << bound << " bytes, " << values.size() << " buffers, "
           << in_place << " written in place\n";
}

}  // namespace tinyrt

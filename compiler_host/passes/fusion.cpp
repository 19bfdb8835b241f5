#include "passes/fusion.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>

namespace tinyrt {

ReaderIndex::ReaderIndex(const Program &p)
    : g_(p.graph),
      readers_(p.graph.values.size()),
      external_(p.graph.values.size(), 0),
      value_guard_(p.graph.values.size(), -1) {
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const Kernel &kn = p.kernels[k];
    for (int v : kn.ins)
      if (readers_[v].empty() || readers_[v].back() != (int)k) readers_[v].push_back((int)k);
    value_guard_[kn.out] = kn.guard;
    kernel_guard_.push_back(kn.guard);
    if (kn.guard >= 0) external_[p.graph.guards.at(kn.guard).eff]++;  // the runtime tests it
  }
  for (int o : p.graph.outputs) external_[o]++;
  for (auto &kv : p.alias) external_[kv.second]++;
}

int ReaderIndex::only_reader(int v) const {
  if (readers_[v].size() != 1 || external_[v] != 0) return -1;
  int r = readers_[v][0];
  return g_.guard_implies(kernel_guard_[r], value_guard_[v]) ? r : -1;
}

std::vector<int> ReaderIndex::merged(int from, int into, const std::vector<int> &from_ins, int value) {
  std::vector<int> single;
  auto erase = [](std::vector<int> &r, int k) { r.erase(std::remove(r.begin(), r.end(), k), r.end()); };
  for (int u : from_ins) {
    std::vector<int> &r = readers_[u];
    size_t before = r.size();
    erase(r, from);
    if (std::find(r.begin(), r.end(), into) == r.end()) r.push_back(into);
    if (r.size() < before && r.size() == 1 && external_[u] == 0) single.push_back(u);
  }
  erase(readers_[value], into);
  erase(readers_[value], from);
  return single;
}

Worklist::Worklist(size_t n) {
  for (size_t i = 0; i < n; ++i) s_.insert(s_.end(), (int)i);
}

int Worklist::pop() {
  int k = *s_.begin();
  s_.erase(s_.begin());
  return k;
}

std::vector<int> merge_inputs(std::vector<int> &ins, const std::vector<int> &c_ins, int skip) {
  std::vector<int> map(c_ins.size(), -1);
  for (size_t s = 0; s < c_ins.size(); ++s) {
    if ((int)s == skip) continue;
    auto it = std::find(ins.begin(), ins.end(), c_ins[s]);
    if (it != ins.end()) {
      map[s] = (int)(it - ins.begin());
    } else {
      map[s] = (int)ins.size();
      ins.push_back(c_ins[s]);
    }
  }
  return map;
}

bool reads_only_identity(const ExprP &e, const std::vector<int> &ins, int v, const Shape &shape) {
  bool ok = true;
  visit(e, [&](const Expr &x) {
    if (x.op == EOp::Load && ins[x.id] == v && !is_identity_load(x, x.id, shape)) ok = false;
  });
  return ok;
}

bool inline_into(Program &p, int ki, int ci, size_t max_nodes) {
  const Kernel &prod = p.kernels[ki];
  Kernel &cons = p.kernels[ci];
  int sv = cons.slot_of(prod.out);
  TINYRT_CHECK(sv >= 0, "inline_into: the reader does not read the value");
  // The fused kernel's slots: the reader's without the inlined value, then
  // the producer's that it lacks. Both expressions are renumbered once,
  // straight to these slots (a chain's producer keeps its numbering, so its
  // expression is shared, not copied).
  std::vector<int> ins;
  std::vector<int> cons_map(cons.ins.size(), -1);
  for (size_t s = 0; s < cons.ins.size(); ++s)
    if ((int)s != sv) {
      cons_map[s] = (int)ins.size();
      ins.push_back(cons.ins[s]);
    }
  std::vector<int> prod_map = merge_inputs(ins, prod.ins, -1);
  int next_rvar = kFirstReduceVar;
  if (has_reduce(cons.expr)) next_rvar = std::max(kFirstReduceVar, max_var_id(cons.expr) + 1);
  ExprP pe = renumber_reduce_vars(remap_slots(prod.expr, prod_map), next_rvar, nullptr);
  // Loads of one element share one copy of the producer's expression,
  // which the code generator then computes once.
  std::map<std::string, ExprP> copies;
  ExprP merged = rewrite(cons.expr, [&](const ExprP &x) -> ExprP {
    if (x->op != EOp::Load) return nullptr;
    if (x->id != sv) return cons_map[x->id] == x->id ? nullptr : load(cons_map[x->id], x->type, x->a);
    ExprP &c = copies[to_string(x)];
    if (!c) c = substitute_vars(pe, x->a);
    return c;
  });
  if (expr_size(merged) > max_nodes) return false;
  cons.expr = std::move(merged);
  cons.ins = std::move(ins);
  cons.label = prod.label + "+" + cons.label;
  cons.nodes.insert(cons.nodes.begin(), prod.nodes.begin(), prod.nodes.end());
  return true;
}

bool is_elementwise_over(const Program &p, const Kernel &k, const Shape &shape) {
  return k.kind == KernelKind::Loop && !has_reduce(k.expr) && p.graph.v(k.out).shape == shape &&
         p.graph.v(k.out).dtype == DType::F32;
}

bool has_costly_op(const ExprP &e) {
  bool costly = false;
  visit(e, [&](const Expr &x) {
    if (is_math_function(x.op)) costly = true;
    switch (x.op) {
      case EOp::Sqrt:
      case EOp::Recip:
      case EOp::Reduce: costly = true; break;
      case EOp::Div:  // index arithmetic divides by constants, cheaply
        costly = costly || dtype_is_float(x.type);
        break;
      default: break;
    }
  });
  return costly;
}

double loads_per_element(const ExprP &e, int slot) {
  std::set<const Expr *> seen;
  std::set<std::string> loads;  // outside reductions, one element read twice is read once
  std::function<double(const ExprP &, bool)> walk = [&](const ExprP &x, bool in_reduce) -> double {
    if (!seen.insert(x.get()).second) return 0;
    if (x->op == EOp::Load) return x->id == slot && (in_reduce || loads.insert(to_string(x)).second) ? 1 : 0;
    double n = 0;
    for (const ExprP &a : x->a) n += walk(a, in_reduce || x->op == EOp::Reduce);
    if (x->op == EOp::Reduce)
      for (const RVar &r : x->rvars) n *= (double)r.extent;
    return n;
  };
  return walk(e, false);
}

std::vector<int> producers(const Program &p) {
  std::vector<int> r(p.graph.values.size(), -1);
  for (size_t k = 0; k < p.kernels.size(); ++k) r[p.kernels[k].out] = (int)k;
  return r;
}

void drop_kernels(Program &p, const std::vector<bool> &dead) {
  std::vector<Kernel> kept;
  kept.reserve(p.kernels.size());
  for (size_t k = 0; k < p.kernels.size(); ++k)
    if (!dead[k]) kept.push_back(std::move(p.kernels[k]));
  p.kernels = std::move(kept);
}

namespace {
// Types an epilogue may store: float, and the 8-bit and 32-bit integers of
// quantized models (the accumulators' vector width covers them).
bool epilogue_type(DType t) { return t == DType::F32 || t == DType::U8 || t == DType::I8 || t == DType::I32; }
}  // namespace

bool absorbable_reader(const Program &p, const Kernel &g, const Kernel &k) {
  int v = g.out;
  return k.kind == KernelKind::Loop && p.graph.v(k.out).shape == p.graph.v(v).shape && !has_reduce(k.expr) &&
         epilogue_type(p.graph.v(k.out).dtype) && reads_only_identity(k.expr, k.ins, v, p.graph.v(v).shape);
}

void absorb_reader(Program &p, ReaderIndex &readers, std::vector<bool> &dead, int gi, int ci) {
  Kernel &g = p.kernels[gi];
  Kernel &k = p.kernels[ci];
  int v = g.out;
  int sv = k.slot_of(v);
  std::vector<int> ins = g.ins;
  std::vector<int> map = merge_inputs(ins, k.ins, sv);
  // One rewrite in the reader's own slot numbering: its loads of v become
  // the GEMM's expression, the others move to the merged slots. (Renumbering
  // first would confuse a residual that the GEMM reads as input 0 with v:
  // Relu(Conv(x) + x) became Relu(2 * Conv(x)).)
  auto merged = [&](const ExprP &inner) {
    return rewrite(k.expr, [&](const ExprP &x) -> ExprP {
      if (x->op != EOp::Load) return nullptr;
      return x->id == sv ? inner : load(map[x->id], x->type, x->a);
    });
  };
  g.gemm.epilogue = merged(g.gemm.epilogue);
  g.expr = merged(g.expr);
  std::vector<int> gemm_ins = g.ins;
  g.ins = std::move(ins);
  g.out = k.out;
  g.label += "+" + k.label;
  g.nodes.insert(g.nodes.end(), k.nodes.begin(), k.nodes.end());
  g.guard = k.guard;  // which implies the GEMM's (only_reader)
  // The fused kernel runs where the reader ran: the reader's other inputs
  // (a residual) may be computed after the GEMM.
  k = std::move(g);
  dead[(size_t)gi] = true;
  readers.merged(gi, ci, gemm_ins, v);
}

int absorb_readers(Program &p, const PickReader &pick) {
  int fused = 0;
  ReaderIndex readers(p);
  std::vector<bool> dead(p.kernels.size(), false);
  for (size_t gi = 0; gi < p.kernels.size(); ++gi) {
    if (dead[gi] || !is_scheduled(p.kernels[gi].kind) || p.graph.is_graph_output(p.kernels[gi].out)) continue;
    int ci = pick(p, readers, dead, (int)gi);
    if (ci < 0) continue;
    absorb_reader(p, readers, dead, (int)gi, ci);
    ++fused;
  }
  drop_kernels(p, dead);
  return fused;
}

}  // namespace tinyrt

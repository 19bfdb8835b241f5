#include "passes/fusion.h"

#include <algorithm>

namespace tinyrt {

ReaderIndex::ReaderIndex(const Program &p)
    : readers_(p.graph.values.size()), external_(p.graph.values.size(), 0) {
  for (size_t k = 0; k < p.kernels.size(); ++k)
    for (int v : p.kernels[k].ins)
      if (readers_[v].empty() || readers_[v].back() != (int)k) readers_[v].push_back((int)k);
  for (int o : p.graph.outputs) external_[o]++;
  for (auto &kv : p.alias) external_[kv.second]++;
}

int ReaderIndex::only_reader(int v) const {
  return readers_[v].size() == 1 && external_[v] == 0 ? readers_[v][0] : -1;
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

}  // namespace tinyrt

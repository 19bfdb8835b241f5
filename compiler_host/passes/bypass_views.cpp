// bypass_views.cpp — a loop kernel reading a view with its viewed value's
// shape and type (Identity, a Reshape to the same shape) reads that value
// instead: the element at every index is the same. Views no one reads any
// more are dropped, so a value read only through such a view has one
// reader again and fuse_elementwise can inline it (a chain with an Identity
// between two elementwise ops stayed two kernels and a round trip through
// memory).
#include <algorithm>

#include "passes/pass.h"

namespace tinyrt {

void bypass_views(PassContext &c) {
  Program &p = c.program;
  const Graph &g = p.graph;
  auto bypassable = [&](int v) {
    int r = p.root(v);
    return r != v && g.v(v).shape == g.v(r).shape && g.v(v).dtype == g.v(r).dtype;
  };
  int bypassed = 0;
  for (Kernel &k : p.kernels) {
    if (k.kind != KernelKind::Loop) continue;
    bool any = false;
    for (int v : k.ins) any = any || bypassable(v);
    if (!any) continue;
    // The new slots, each value once (Add(x, Identity(x)) reads x once).
    std::vector<int> ins, map(k.ins.size());
    for (size_t s = 0; s < k.ins.size(); ++s) {
      int v = bypassable(k.ins[s]) ? p.root(k.ins[s]) : k.ins[s];
      bypassed += v != k.ins[s];
      auto it = std::find(ins.begin(), ins.end(), v);
      map[s] = (int)(it - ins.begin());
      if (it == ins.end()) ins.push_back(v);
    }
    k.expr = remap_slots(k.expr, map);
    k.ins = std::move(ins);
  }
  // Drop the views nothing reads now: not a kernel, not the application
  // (graph outputs), not another view.
  std::vector<int> reads(g.values.size(), 0);
  for (const Kernel &k : p.kernels) {
    for (int v : k.ins) reads[v]++;
    for (int v : k.call.outs) reads[v]++;
  }
  for (int o : g.outputs) reads[o]++;
  for (auto &kv : p.alias) reads[kv.second]++;
  int dropped = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = p.alias.begin(); it != p.alias.end();) {
      if (reads[it->first] == 0) {
        reads[it->second]--;
        it = p.alias.erase(it);
        ++dropped;
        changed = true;
      } else {
        ++it;
      }
    }
  }
  if (c.log) *c.log << "  " << bypassed << " reads of views bypassed, " << dropped << " views dropped\n";
}

}  // namespace tinyrt

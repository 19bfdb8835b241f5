// pass_test.h — what the passes' unit tests share: a program from a graph
// in the textual IR (ir/text.h), run through the pipeline up to the pass
// under test, and small queries on the result.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "ir/text.h"
#include "passes/pass.h"

namespace tinyrt::test {

// The graph `ir` run through every pass of the pipeline up to and including
// `last` (a pass's name), for `target`, with `options`.
inline Program run_until(const std::string &ir, const std::string &last, const std::string &target = "x86-64-avx2",
                         const PassOptions &options = {}, std::ostream *log = nullptr) {
  static std::map<std::string, Target> targets;
  auto it = targets.find(target);
  if (it == targets.end()) it = targets.emplace(target, resolve_target(target)).first;
  Program p;
  p.graph = parse_graph(ir);
  PassContext c{p, it->second, log};
  run_pipeline(c, options, last);
  return p;
}

// The same for a target already resolved (and adjusted).
inline Program run_until_with(const std::string &ir, const std::string &last, const Target &target,
                              const PassOptions &options = {}, std::ostream *log = nullptr) {
  Program p;
  p.graph = parse_graph(ir);
  PassContext c{p, target, log};
  run_pipeline(c, options, last);
  return p;
}

// The same with the graph's limits (the budgets, the model's own weight
// bytes) set by `limits` before the passes run.
inline Program run_until_limited(const std::string &ir, const std::string &last, const Target &target,
                                 const PassOptions &options, const std::function<void(Limits &)> &limits) {
  Program p;
  p.graph = parse_graph(ir);
  limits(p.graph.limits);
  PassContext c{p, target, nullptr};
  run_pipeline(c, options, last);
  return p;
}

// The target as tinyrt-compile --precision fp16 resolves it (driver:
// compile_target): its half tiles where it has half arithmetic.
inline Target half_target(const std::string &name) {
  Target t = resolve_target(name);
  if (t.half_arith) t.use_half_tiles();
  return t;
}

// The kernels' labels, in program order.
inline std::vector<std::string> labels(const Program &p) {
  std::vector<std::string> r;
  for (const Kernel &k : p.kernels) r.push_back(k.label);
  return r;
}

// The kernels, one a line: label, kind, inputs -> output (for messages).
inline std::string describe(const Program &p) {
  std::string r;
  for (const Kernel &k : p.kernels) {
    r += k.label + " (" + kernel_family(k.kind) + "):";
    for (int v : k.ins) r += " " + p.graph.v(v).name;
    r += " -> " + p.graph.v(k.out).name + "\n";
  }
  return r;
}

inline int count_kernels(const Program &p, KernelKind kind) {
  int n = 0;
  for (const Kernel &k : p.kernels) n += k.kind == kind;
  return n;
}

// The program's only kernel of this kind; null when it has none or several.
inline const Kernel *only(const Program &p, KernelKind kind) {
  const Kernel *found = nullptr;
  for (const Kernel &k : p.kernels)
    if (k.kind == kind) {
      if (found) return nullptr;
      found = &k;
    }
  return found;
}

// Nodes of op `op` (domain::op outside ai.onnx).
inline int count_nodes(const Graph &g, const std::string &op) {
  int n = 0;
  for (const Node &x : g.nodes) n += (x.domain.empty() ? x.op : x.domain + "::" + x.op) == op;
  return n;
}

inline int count_ops(const ExprP &e, EOp op) {
  int n = 0;
  if (e) visit(e, [&](const Expr &x) { n += x.op == op; });
  return n;
}

// The message of the CompileError that `f` throws, or "".
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const CompileError &e) {
    return e.what();
  }
  return "";
}

}  // namespace tinyrt::test

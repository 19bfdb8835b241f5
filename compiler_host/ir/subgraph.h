// subgraph.h — a subgraph (an If branch, a Loop or Scan body) as its node
// holds it: steps over names, not yet values of the graph. Its op splices a
// copy into the graph each time it needs one (ops/control_flow.cpp: an If's
// branch once, an unrolled loop's body once per iteration), resolving the
// names then. The frontend converts the model's subgraphs into this form at
// import, so no op or pass reads the model's file format.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tinyrt {

struct Subgraph {
  struct Step {
    std::string name;  // may be empty: named after its op when spliced
    std::string op, domain;
    std::vector<std::string> in, out;  // "" = omitted
    std::map<std::string, Attr> attrs;
  };
  std::string name;
  std::vector<std::string> inputs, outputs;
  std::vector<std::pair<std::string, ConstP>> initializers;
  std::vector<Step> steps;
};

// A subgraph spliced into `g`: its inputs are bound to `inputs`, names it
// does not define resolve to outer values, and its values are renamed with
// `prefix`. The nodes are returned (in order) for the caller to insert;
// `outputs` are the values of its outputs.
struct InlinedGraph {
  std::vector<Node> nodes;
  std::vector<int> outputs;
};

// The outer values a subgraph reads (the names it and its nested subgraphs
// use but do not define), each the latest value of that name in `g`. A
// Loop or Scan resolves them once for all its iterations (resolving all of
// g's names per iteration made unrolling quadratic), so values an iteration
// adds are not in scope of the next.
using Scope = std::map<std::string, int>;
Scope body_scope(const Graph &g, const Subgraph &body);
// The value node n's input `name` denotes in `ids` (-1 for "": omitted);
// throws when no value of that name is defined before the node.
int resolve_input(const Node &n, const std::string &name, const std::map<std::string, int> &ids);
// Rewrites the names `sub` reads from its enclosing graphs to the names of
// the values they denote in `ids` (when the enclosing steps are spliced).
void rename_free_names(Subgraph &sub, const std::map<std::string, int> &ids, const Graph &g);
InlinedGraph inline_subgraph(Graph &g, const Subgraph &body, const std::vector<int> &inputs, const std::string &prefix,
                             const Scope *outer = nullptr);

}  // namespace tinyrt

#include "ir/subgraph.h"

#include <set>

#include "ir/dialect.h"

namespace tinyrt {

namespace {

// Names a subgraph reads but does not define, its nested subgraphs' included.
void free_names(const Subgraph &sub, std::set<std::string> *out) {
  std::set<std::string> local, read;
  local.insert(sub.inputs.begin(), sub.inputs.end());
  for (auto &t : sub.initializers) local.insert(t.first);
  for (auto &st : sub.steps) {
    read.insert(st.in.begin(), st.in.end());
    for (auto &kv : st.attrs)
      if (kv.second.graph) free_names(*kv.second.graph, &read);
    local.insert(st.out.begin(), st.out.end());
  }
  read.insert(sub.outputs.begin(), sub.outputs.end());
  for (auto &r : read)
    if (!r.empty() && !local.count(r)) out->insert(r);
}

}  // namespace

// A nested subgraph refers to enclosing values by name: once the enclosing
// steps are spliced (renamed), its free names are rewritten to the names of
// the values they now denote, recursively.
void rename_free_names(Subgraph &sub, const std::map<std::string, int> &ids, const Graph &g) {
  std::set<std::string> local(sub.inputs.begin(), sub.inputs.end());
  for (auto &t : sub.initializers) local.insert(t.first);
  for (auto &st : sub.steps) local.insert(st.out.begin(), st.out.end());
  auto fix = [&](std::string *name) {
    if (name->empty() || local.count(*name)) return;
    auto it = ids.find(*name);
    if (it != ids.end()) *name = g.v(it->second).name;
  };
  for (auto &st : sub.steps) {
    for (auto &in : st.in) fix(&in);
    for (auto &kv : st.attrs)
      if (kv.second.graph) {
        auto copy = std::make_shared<Subgraph>(*kv.second.graph);
        rename_free_names(*copy, ids, g);
        kv.second.graph = copy;
      }
  }
  for (auto &o : sub.outputs) fix(&o);
}

namespace {

// One step as a node of `g`: inputs resolved through `ids`, outputs new
// values named prefix + name (unique when a subgraph is spliced more than
// once), added to `ids`.
Node splice_step(const Subgraph::Step &st, Graph &g, std::map<std::string, int> &ids, const std::string &prefix,
                 int &unnamed) {
  Node n;
  n.name = prefix + (st.name.empty() ? st.op + "_" + std::to_string(unnamed++) : st.name);
  n.op = st.op;
  n.domain = st.domain;
  auto dom = g.domain_opsets.find(n.domain);
  n.opset = dom != g.domain_opsets.end() ? dom->second : g.opset;
  for (auto &kv : st.attrs) {
    Attr a = kv.second;
    if (a.graph && !prefix.empty()) {
      auto sub = std::make_shared<Subgraph>(*a.graph);
      rename_free_names(*sub, ids, g);
      a.graph = sub;
    }
    n.attrs[kv.first] = std::move(a);
  }
  for (auto &in : st.in) n.in.push_back(resolve_input(n, in, ids));
  for (auto &out : st.out) {
    if (out.empty()) {
      n.out.push_back(-1);
      continue;
    }
    int id = g.add_value(prefix + out, DType::Undefined, {});
    g.v(id).shape_known = false;
    ids[out] = id;
    n.out.push_back(id);
  }
  if (g.dialect) g.dialect->check_node(n);
  return n;
}

}  // namespace

int resolve_input(const Node &n, const std::string &name, const std::map<std::string, int> &ids) {
  if (name.empty()) return -1;
  auto it = ids.find(name);
  if (it == ids.end()) fail_invalid(n.where() + ": input '" + name + "' is not produced before use");
  return it->second;
}

Scope body_scope(const Graph &g, const Subgraph &body) {
  std::set<std::string> wanted;
  free_names(body, &wanted);
  Scope s;
  for (const std::string &name : wanted)  // the latest value of a name wins
    if (int id = g.latest_value(name); id >= 0) s.emplace(name, id);
  return s;
}

InlinedGraph inline_subgraph(Graph &g, const Subgraph &body, const std::vector<int> &inputs, const std::string &prefix,
                             const Scope *outer) {
  if (inputs.size() != body.inputs.size())
    fail_invalid("subgraph '" + body.name + "' takes " + std::to_string(body.inputs.size()) + " inputs, got " +
                 std::to_string(inputs.size()));
  // Names in scope: the outer values the body reads, then the body's own
  // (its constants shared by every splice: ConstData is immutable).
  std::map<std::string, int> ids = outer ? *outer : body_scope(g, body);
  for (auto &t : body.initializers) ids[t.first] = g.add_const(prefix + t.first, t.second);
  for (size_t i = 0; i < body.inputs.size(); ++i) ids[body.inputs[i]] = inputs[i];
  InlinedGraph r;
  int unnamed = 0;
  for (auto &st : body.steps) r.nodes.push_back(splice_step(st, g, ids, prefix, unnamed));
  for (auto &name : body.outputs) {
    auto it = ids.find(name);
    if (it == ids.end()) fail_invalid("subgraph output '" + name + "' is never produced");
    r.outputs.push_back(it->second);
  }
  return r;
}

}  // namespace tinyrt

#include "frontend/onnx_functions.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/error.h"
#include "onnx/onnx_pb.h"

namespace tinyrt {

namespace {

using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;
using Key = std::pair<std::string, std::string>;  // (domain, name)

std::string norm_domain(const std::string &d) { return d == "ai.onnx" ? "" : d; }
std::string key_str(const Key &k) { return (k.first.empty() ? "ai.onnx" : k.first) + "::" + k.second; }

// What a node list becomes once every call in it is inlined: its node
// count (saturating) and how deeply calls and subgraphs nest below it.
struct Cost {
  int64_t nodes = 0;
  int height = 0;
};

// Every value name a graph and its subgraphs define or read.
void collect_names(const onnx::GraphProto &g, std::set<std::string> *names) {
  for (const auto &v : g.input()) names->insert(v.name());
  for (const auto &v : g.output()) names->insert(v.name());
  for (const auto &t : g.initializer()) names->insert(t.name());
  for (const auto &n : g.node()) {
    names->insert(n.input().begin(), n.input().end());
    names->insert(n.output().begin(), n.output().end());
    for (const auto &a : n.attribute()) {
      if (a.has_g()) collect_names(a.g(), names);
      for (const auto &sub : a.graphs()) collect_names(sub, names);
    }
  }
}

// Renames the names a subgraph reads from the enclosing function body
// (`names`: function-scope name -> its name after inlining). Names the
// subgraph or a subgraph around it defines shadow those (`shadowed`).
void rename_free(onnx::GraphProto &g, const std::map<std::string, std::string> &names, std::set<std::string> shadowed) {
  for (const auto &v : g.input()) shadowed.insert(v.name());
  for (const auto &t : g.initializer()) shadowed.insert(t.name());
  for (const auto &n : g.node()) shadowed.insert(n.output().begin(), n.output().end());
  auto fix = [&](std::string *s) {
    if (s->empty() || shadowed.count(*s)) return;
    auto it = names.find(*s);
    if (it != names.end()) *s = it->second;
  };
  for (auto &n : *g.mutable_node()) {
    for (auto &in : *n.mutable_input()) fix(&in);
    for (auto &a : *n.mutable_attribute()) {
      if (a.has_g()) rename_free(*a.mutable_g(), names, shadowed);
      for (auto &sub : *a.mutable_graphs()) rename_free(sub, names, shadowed);
    }
  }
  for (auto &o : *g.mutable_output()) fix(o.mutable_name());
}

// Replaces a body node's attribute references (ref_attr_name), its
// subgraphs' included, by the calling node's attributes of those names;
// a reference the call does not set is dropped (the op's default applies).
void substitute_refs(onnx::NodeProto &b, const onnx::NodeProto &call) {
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
  for (auto &a : *b.mutable_attribute()) {
    if (a.ref_attr_name().empty()) {
      if (a.has_g())
        for (auto &n : *a.mutable_g()->mutable_node()) substitute_refs(n, call);
      for (auto &sub : *a.mutable_graphs())
        for (auto &n : *sub.mutable_node()) substitute_refs(n, call);
      attrs.Add(std::move(a));
      continue;
    }
    for (const auto &ca : call.attribute())
      if (ca.name() == a.ref_attr_name()) {
        onnx::AttributeProto *r = attrs.Add();
        *r = ca;
        r->set_name(a.name());
        break;
      }
  }
  b.mutable_attribute()->Swap(&attrs);
}

class Inliner {
 public:
  Inliner(onnx::ModelProto &m, const Limits &lim) : m_(m), lim_(lim) {
    for (const auto &f : m.functions()) {
      Key k{norm_domain(f.domain()), f.name()};
      if (!fns_.emplace(k, &f).second) fail_invalid("the model defines function " + key_str(k) + " twice");
    }
  }

  void run() {
    if (fns_.empty()) return;
    // Check everything before copying anything.
    Cost c = cost_of(m_.graph().node(), 0, "the main graph");
    (void)c;
    for (auto &kv : fns_)
      if (used_.count(kv.first)) import_opsets(*kv.second);
    collect_names(m_.graph(), &names_);
    expand(m_.mutable_graph()->mutable_node());
    m_.clear_functions();
  }

 private:
  const onnx::FunctionProto *callee(const onnx::NodeProto &n) const {
    auto it = fns_.find({norm_domain(n.domain()), n.op_type()});
    return it == fns_.end() ? nullptr : it->second;
  }

  [[noreturn]] void too_deep(const std::string &where) const {
    fail_unsupported(where + ": model-local function calls and subgraphs nest more than " +
                     std::to_string(lim_.max_nesting) + " deep");
  }

  // The cost of `nodes` at nesting `depth` (0: the main graph). Recursion
  // stops at the nesting cap, so a chain of 20 000 functions costs 64
  // frames; a function that reaches itself is found on the way.
  Cost cost_of(const Nodes &nodes, int depth, const std::string &where) {
    if (depth > lim_.max_nesting) too_deep(where);
    Cost c;
    for (const auto &n : nodes) {
      const std::string nwhere = "node '" + n.name() + "' (" + n.op_type() + ") in " + where;
      if (const onnx::FunctionProto *f = callee(n)) {
        Cost fc = cost_of_function(*f, depth + 1, nwhere);
        c.nodes = sat_add(c.nodes, fc.nodes);
        c.height = std::max(c.height, fc.height + 1);
        added_ = sat_add(added_, fc.nodes);
        if (added_ > lim_.max_expanded_nodes)
          fail_unsupported(nwhere + ": inlining model-local functions would add more than " +
                           std::to_string(lim_.max_expanded_nodes) + " nodes (--max-expanded-nodes)");
      } else {
        c.nodes = sat_add(c.nodes, 1);
      }
      for (const auto &a : n.attribute()) {
        std::vector<const onnx::GraphProto *> subs;
        if (a.has_g()) subs.push_back(&a.g());
        for (const auto &s : a.graphs()) subs.push_back(&s);
        for (const onnx::GraphProto *s : subs) {
          Cost sc = cost_of(s->node(), depth + 1, "attribute " + a.name() + " of " + nwhere);
          c.nodes = sat_add(c.nodes, sc.nodes);
          c.height = std::max(c.height, sc.height + 1);
        }
      }
    }
    return c;
  }

  Cost cost_of_function(const onnx::FunctionProto &f, int depth, const std::string &where) {
    Key k{norm_domain(f.domain()), f.name()};
    auto done = cost_.find(k);
    if (done != cost_.end()) {
      if (depth + done->second.height > lim_.max_nesting) too_deep(where);
      return done->second;
    }
    for (size_t i = 0; i < stack_.size(); ++i)
      if (stack_[i] == k) {
        std::string cycle;
        for (size_t j = i; j < stack_.size(); ++j) cycle += key_str(stack_[j]) + " -> ";
        fail_unsupported(where + ": model-local function " + key_str(k) + " calls itself (" + cycle + key_str(k) +
                         "); recursion cannot be inlined");
      }
    stack_.push_back(k);
    // The body's cost, counted once per function however often it is
    // called; its calls' expansions are not counted as added here (the
    // caller adds the whole).
    int64_t saved = added_;
    Cost c = cost_of(f.node(), depth, "model-local function " + key_str(k));
    added_ = saved;
    stack_.pop_back();
    if (c.nodes > lim_.max_expanded_nodes)
      fail_unsupported(where + ": model-local function " + key_str(k) + " expands into more than " +
                       std::to_string(lim_.max_expanded_nodes) + " nodes (--max-expanded-nodes)");
    used_.insert(k);
    cost_[k] = c;
    return c;
  }

  // A function's nodes follow its own opset imports; tinyrt compiles one
  // version per domain, so they must agree with the model's (or add a
  // domain the model lacks).
  void import_opsets(const onnx::FunctionProto &f) {
    for (const auto &op : f.opset_import()) {
      std::string dom = norm_domain(op.domain());
      bool found = false;
      for (const auto &mop : m_.opset_import())
        if (norm_domain(mop.domain()) == dom) {
          found = true;
          if (mop.version() != op.version())
            fail_unsupported("model-local function " + key_str({norm_domain(f.domain()), f.name()}) +
                             " imports opset " + std::to_string(op.version()) + " of domain " +
                             (dom.empty() ? std::string("ai.onnx") : dom) + ", the model opset " +
                             std::to_string(mop.version()) + " (tinyrt compiles one opset per domain)");
        }
      if (!found) *m_.add_opset_import() = op;
    }
  }

  std::string fresh(const std::string &base) {
    std::string s = base;
    for (int k = 1; !names_.insert(s).second; ++k) s = base + "#" + std::to_string(k);
    return s;
  }

  void count_bytes(const onnx::NodeProto &n) {
    copied_ = sat_add(copied_, (int64_t)n.ByteSizeLong());
    if (copied_ > lim_.max_folded_bytes)
      fail_unsupported("node '" + n.name() + "' (" + n.op_type() +
                       "): inlining model-local functions copies more than " + std::to_string(lim_.max_folded_bytes) +
                       " bytes of nodes (--max-folded-bytes)");
  }

  // Inlines the calls in `nodes` and in their subgraphs, in place.
  void expand(Nodes *nodes) {
    Nodes out;
    for (auto &n : *nodes) {
      if (const onnx::FunctionProto *f = callee(n)) {
        instantiate(*f, n, &out);
        continue;
      }
      expand_subgraphs(n);
      out.Add(std::move(n));
    }
    nodes->Swap(&out);
  }

  void expand_subgraphs(onnx::NodeProto &n) {
    for (auto &a : *n.mutable_attribute()) {
      if (a.has_g()) expand(a.mutable_g()->mutable_node());
      for (auto &s : *a.mutable_graphs()) expand(s.mutable_node());
    }
  }

  // Appends the body of `f` called by `call` to `out`, expanded.
  void instantiate(const onnx::FunctionProto &f, const onnx::NodeProto &call, Nodes *out) {
    const std::string where = "node '" + call.name() + "' (" + call.op_type() + ")";
    if (call.input_size() > f.input_size() || call.output_size() > f.output_size())
      fail_invalid(where + ": calls model-local function " + f.name() + " with " + std::to_string(call.input_size()) +
                   " inputs and " + std::to_string(call.output_size()) + " outputs; it takes " +
                   std::to_string(f.input_size()) + " and " + std::to_string(f.output_size()));
    const std::string prefix = fresh(call.name().empty() ? f.name() : call.name()) + "/";
    std::map<std::string, std::string> names;  // function scope -> caller scope
    std::set<std::string> inputs;
    for (int i = 0; i < f.input_size(); ++i) {
      if (!inputs.insert(f.input(i)).second)
        fail_invalid("model-local function " + f.name() + " names input '" + f.input(i) + "' twice");
      names[f.input(i)] = i < call.input_size() ? call.input(i) : "";
    }
    std::map<std::string, std::string> outputs;
    for (int j = 0; j < f.output_size(); ++j) {
      if (inputs.count(f.output(j)) || outputs.count(f.output(j)))
        fail_invalid("model-local function " + f.name() + ": output '" + f.output(j) +
                     "' is also an input or another output");
      outputs[f.output(j)] =
          j < call.output_size() && !call.output(j).empty() ? call.output(j) : fresh(prefix + f.output(j));
    }
    for (const auto &body : f.node()) {
      onnx::NodeProto b = body;
      for (auto &in : *b.mutable_input()) {
        if (in.empty()) continue;
        auto it = names.find(in);
        if (it == names.end())
          fail_invalid("model-local function " + f.name() + ": node '" + b.name() + "' (" + b.op_type() + ") reads '" +
                       in + "', which is neither an input of the function nor computed before it");
        in = it->second;
      }
      for (auto &o : *b.mutable_output()) {
        if (o.empty()) continue;
        if (names.count(o))
          fail_invalid("model-local function " + f.name() + ": node '" + b.name() + "' (" + b.op_type() +
                       ") assigns '" + o + "', which is already defined");
        auto fo = outputs.find(o);
        std::string to = fo != outputs.end() ? fo->second : fresh(prefix + o);
        names[o] = to;
        o = to;
      }
      for (auto &a : *b.mutable_attribute()) {
        if (a.has_g()) rename_free(*a.mutable_g(), names, {});
        for (auto &s : *a.mutable_graphs()) rename_free(s, names, {});
      }
      substitute_refs(b, call);
      b.set_name(prefix + (b.name().empty() ? b.op_type() : b.name()));
      count_bytes(b);
      if (const onnx::FunctionProto *g = callee(b)) {
        instantiate(*g, b, out);
        continue;
      }
      expand_subgraphs(b);
      out->Add(std::move(b));
    }
    for (const auto &kv : outputs)
      if (!names.count(kv.first))
        fail_invalid("model-local function " + f.name() + ": output '" + kv.first + "' is never computed");
  }

  onnx::ModelProto &m_;
  const Limits &lim_;
  std::map<Key, const onnx::FunctionProto *> fns_;
  std::map<Key, Cost> cost_;
  std::set<Key> used_;
  std::vector<Key> stack_;
  int64_t added_ = 0, copied_ = 0;
  std::set<std::string> names_;
};

}  // namespace

void inline_local_functions(onnx::ModelProto &model, const Limits &lim) { Inliner(model, lim).run(); }

}  // namespace tinyrt

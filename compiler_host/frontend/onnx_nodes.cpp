#include "frontend/onnx_nodes.h"

#include "frontend/onnx_tensors.h"
#include "ir/dialect.h"
#include "onnx/onnx_pb.h"

namespace tinyrt {

namespace {

// Names starting with '_' are the compiler's own marks on the ops of the
// domains it implements (passes/quantize_dynamic.cpp, an If's merge and
// branch error); a file cannot set them.
void check_attribute_name(const Node &n, const std::string &name) {
  bool own = n.domain.empty() || n.domain == "ai.onnx" || n.domain == "com.microsoft" || n.domain == "tinyrt";
  if (own && !name.empty() && name[0] == '_')
    fail_unsupported(n.where() + ": attribute '" + name + "' is not supported");
}

Attr convert_attr(const onnx::AttributeProto &a, const std::string &where, int depth) {
  Attr r;
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      r.kind = Attr::Kind::Int;
      r.i = a.i();
      break;
    case onnx::AttributeProto::FLOAT:
      r.kind = Attr::Kind::Float;
      r.f = a.f();
      break;
    case onnx::AttributeProto::STRING:
      r.kind = Attr::Kind::String;
      r.s = a.s();
      break;
    case onnx::AttributeProto::INTS:
      r.kind = Attr::Kind::Ints;
      r.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      r.kind = Attr::Kind::Floats;
      r.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::STRINGS:
      r.kind = Attr::Kind::Strings;
      r.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case onnx::AttributeProto::TENSOR:
      r.kind = Attr::Kind::Tensor;
      r.t = const_from_tensor_proto(a.t());
      break;
    case onnx::AttributeProto::GRAPH:
      r.kind = Attr::Kind::Graph;  // spliced in by the op (If, Loop, Scan)
      r.graph = convert_subgraph(a.g(), depth + 1);
      break;
    default:
      r.kind = Attr::Kind::Other;  // type protos, sparse tensors: no op of ours reads them
      break;
  }
  return r;
}

}  // namespace

Node convert_node(const onnx::NodeProto &np, Graph &g, std::map<std::string, int> &ids, const std::string &prefix,
                  int &unnamed) {
  Node n;
  n.name = prefix + (np.name().empty() ? np.op_type() + "_" + std::to_string(unnamed++) : np.name());
  n.op = np.op_type();
  n.domain = np.domain();
  auto dom = g.domain_opsets.find(n.domain.empty() ? "" : n.domain);
  n.opset = dom != g.domain_opsets.end() ? dom->second : g.opset;
  for (auto &a : np.attribute()) {
    check_attribute_name(n, a.name());
    n.attrs[a.name()] = convert_attr(a, n.where(), 0);
    if (n.attrs[a.name()].graph && !prefix.empty()) {
      auto sub = std::make_shared<Subgraph>(*n.attrs[a.name()].graph);
      rename_free_names(*sub, ids, g);
      n.attrs[a.name()].graph = sub;
    }
  }
  for (auto &in : np.input()) n.in.push_back(resolve_input(n, in, ids));
  if (g.dialect) g.dialect->check_node(n);
  for (auto &out : np.output()) {
    if (out.empty()) {
      n.out.push_back(-1);
      continue;
    }
    if (ids.count(out) && prefix.empty()) fail_invalid(n.where() + ": output '" + out + "' is assigned twice");
    int id = g.add_value(prefix + out, DType::Undefined, {});
    g.v(id).shape_known = false;
    ids[out] = id;
    n.out.push_back(id);
  }
  return n;
}

std::shared_ptr<const Subgraph> convert_subgraph(const onnx::GraphProto &gp, int depth) {
  auto sub = std::make_shared<Subgraph>();
  sub->name = gp.name();
  for (auto &vi : gp.input()) sub->inputs.push_back(vi.name());
  for (auto &vi : gp.output()) sub->outputs.push_back(vi.name());
  for (auto &t : gp.initializer()) sub->initializers.emplace_back(t.name(), const_from_tensor_proto(t));
  for (auto &np : gp.node()) {
    Subgraph::Step st;
    st.name = np.name();
    st.op = np.op_type();
    st.domain = np.domain();
    st.in.assign(np.input().begin(), np.input().end());
    st.out.assign(np.output().begin(), np.output().end());
    Node named;  // for messages
    named.name = st.name.empty() ? st.op : st.name;
    named.op = st.op;
    named.domain = st.domain;
    for (auto &a : np.attribute()) {
      check_attribute_name(named, a.name());
      st.attrs[a.name()] = convert_attr(a, named.where(), depth);
    }
    sub->steps.push_back(std::move(st));
  }
  return sub;
}

}  // namespace tinyrt

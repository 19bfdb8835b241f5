#include "frontend/onnx_dialect.h"

#include "frontend/onnx_nodes.h"
#include "frontend/onnx_tensors.h"
#include "onnx/defs/function.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace tinyrt {

namespace {

class OnnxDialect : public Dialect {
 public:
  void check_node(const Node &n) const override;
  void check_shared_types(const Node &n, const Graph &g) const override;
  bool expand_function(const Node &n, Graph &g, std::vector<Node> *nodes) const override;
};

}  // namespace

// An input may be omitted ("" in the file, or a model-local function's
// formal input its call left out) only where the op's schema makes it
// optional: the ops' inference and lowering read every other input (a
// Concat reached through a function called with fewer inputs read value
// -1, found by fuzz_import). Every node from the file, a subgraph or a
// function body passes here.
void OnnxDialect::check_node(const Node &n) const {
  const onnx::OpSchema *s = onnx::OpSchemaRegistry::Schema(n.op, n.opset, n.domain == "ai.onnx" ? "" : n.domain);
  if (!s || s->inputs().empty()) return;
  const auto &formal = s->inputs();
  for (size_t k = 0; k < n.in.size(); ++k) {
    if (n.in[k] >= 0) continue;
    const auto &f = formal[std::min(k, formal.size() - 1)];
    if (k >= formal.size() && f.GetOption() != onnx::OpSchema::Variadic)
      continue;  // past the schema: the op's own checks
    if (f.GetOption() != onnx::OpSchema::Optional)
      fail_invalid(n.where() + ": input " + std::to_string(k) + " (" + f.GetName() +
                   ") is omitted, but the op requires it");
  }
}

// Inputs that share a type parameter of the op's ONNX schema (T of
// MatMul's A and B, of LayerNormalization's X, Scale and B, of every input
// of Concat or Sum) must have one element type: the kernels combine them
// without casts (a float16 Scale of a float32 LayerNormalization was an
// internal error; found by fuzz_import).
void OnnxDialect::check_shared_types(const Node &n, const Graph &g) const {
  const onnx::OpSchema *s = onnx::OpSchemaRegistry::Schema(n.op, n.opset, n.domain == "ai.onnx" ? "" : n.domain);
  if (!s || s->inputs().empty()) return;
  const auto &formal = s->inputs();
  std::map<std::string, size_t> first;  // type parameter -> first input of it
  for (size_t k = 0; k < n.in.size(); ++k) {
    if (n.in[k] < 0) continue;
    if (k >= formal.size() && formal.back().GetOption() != onnx::OpSchema::Variadic) break;
    const auto &f = formal[std::min(k, formal.size() - 1)];
    if (f.GetOption() == onnx::OpSchema::Variadic && !f.GetIsHomogeneous()) continue;
    const std::string &param = f.GetTypeStr();
    if (param.find('(') != std::string::npos) continue;  // a fixed type such as tensor(int64)
    auto it = first.emplace(param, k).first;
    DType a = g.v(n.in[it->second]).dtype, b = g.v(n.in[k]).dtype;
    auto name = [&](size_t i) { return formal[std::min(i, formal.size() - 1)].GetName(); };
    if (a != b)
      fail_invalid(n.where() + ": inputs " + std::to_string(it->second) + " (" + name(it->second) + ") and " +
                   std::to_string(k) + " (" + name(k) + ") must have the same type (" + param + "), not " +
                   dtype_name(a) + " and " + dtype_name(b));
  }
}

// ONNX functions: when the onnx library defines n's op by a function body
// (plain or built for the node's attributes and input types), that body
// with its inputs and outputs bound to n's.
bool OnnxDialect::expand_function(const Node &n, Graph &g, std::vector<Node> *nodes) const {
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(n.op, n.opset, n.domain);
  if (!schema) return false;
  // The node as a NodeProto, with input types for context-dependent bodies.
  onnx::NodeProto np;
  np.set_op_type(n.op);
  np.set_domain(n.domain);
  std::vector<onnx::TypeProto> types;
  for (int v : n.in) {
    np.add_input(v >= 0 ? g.v(v).name : "");
    onnx::TypeProto tp;
    if (v >= 0) {
      auto *tt = tp.mutable_tensor_type();
      tt->set_elem_type((int)g.v(v).dtype);
      for (auto d : g.v(v).shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    types.push_back(tp);
  }
  for (int v : n.out) np.add_output(v >= 0 ? g.v(v).name : "");
  for (auto &kv : n.attrs)
    if (kv.first[0] != '_') *np.add_attribute() = attribute_proto(kv.first, kv.second);
  onnx::FunctionProto fn;
  if (schema->HasContextDependentFunction()) {
    onnx::FunctionBodyBuildContextImpl ctx(np, types);
    if (!schema->BuildContextDependentFunction(ctx, fn)) return false;
  } else if (schema->HasFunction()) {
    fn = *schema->GetFunction();
  } else {
    return false;
  }
  // Bind: formal inputs to the node's values (missing optional ones stay
  // unnamed), attribute references to the node's attributes.
  std::map<std::string, int> ids;
  for (size_t i = 0; i < g.values.size(); ++i) ids[g.values[i].name] = (int)i;
  for (int i = 0; i < fn.input_size(); ++i)
    if (i < (int)n.in.size() && n.in[i] >= 0)
      ids[fn.input(i)] = n.in[i];
    else
      ids.erase(fn.input(i));
  std::string prefix = n.name + "/";
  int unnamed = 0;
  for (onnx::NodeProto body : fn.node()) {
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
    for (auto &a : body.attribute()) {
      if (a.ref_attr_name().empty()) {
        *attrs.Add() = a;
        continue;
      }
      auto it = n.attrs.find(a.ref_attr_name());
      if (it != n.attrs.end()) {
        *attrs.Add() = attribute_proto(a.name(), it->second);
        continue;
      }
      // Not set on the node: the op's default for that attribute, if any.
      auto def = schema->attributes().find(a.ref_attr_name());
      if (def != schema->attributes().end() && def->second.default_value.type() != onnx::AttributeProto::UNDEFINED) {
        onnx::AttributeProto r = def->second.default_value;
        r.set_name(a.name());
        *attrs.Add() = r;
      }
    }
    body.mutable_attribute()->Swap(&attrs);
    nodes->push_back(convert_node(body, g, ids, prefix, unnamed));
  }
  for (int i = 0; i < fn.output_size() && i < (int)n.out.size(); ++i) {
    if (n.out[i] < 0) continue;
    auto it = ids.find(fn.output(i));
    if (it == ids.end()) fail_invalid(n.where() + ": function body output '" + fn.output(i) + "' is never produced");
    Node id;
    id.op = "Identity";
    id.name = prefix + "output_" + std::to_string(i);
    id.in = {it->second};
    id.out = {n.out[i]};
    id.opset = g.opset;
    nodes->push_back(id);
  }
  return true;
}

std::shared_ptr<const Dialect> onnx_dialect() {
  static const std::shared_ptr<const Dialect> d = std::make_shared<OnnxDialect>();
  return d;
}

std::map<std::string, int> onnx_operator_versions() {
  std::map<std::string, int> latest;
  for (const auto &s : onnx::OpSchemaRegistry::get_all_schemas_with_history())
    if (s.domain().empty() && !s.Deprecated()) latest[s.Name()] = std::max(latest[s.Name()], s.SinceVersion());
  return latest;
}

}  // namespace tinyrt

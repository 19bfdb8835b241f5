// onnx_export.cpp — a Graph back to an ONNX model (export_onnx_model in
// onnx_import.h): what `tinyrt-compile --emit-qdq` writes after the
// quantization passes, so that another runtime can run the same quantized
// model.
#include <set>

#include "frontend/onnx_export.h"
#include "frontend/onnx_tensors.h"
#include "onnx/onnx_pb.h"

namespace tinyrt {

namespace {

void value_info(onnx::ValueInfoProto *vi, const Value &v) {
  vi->set_name(v.name);
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type((int)v.dtype);
  auto *shape = tt->mutable_shape();
  for (int64_t d : v.shape) shape->add_dim()->set_dim_value(d);
}

void tensor(onnx::TensorProto *t, const Value &v) {
  t->set_name(v.name);
  t->set_data_type((int)v.dtype);
  for (int64_t d : v.shape) t->add_dims(d);
  t->set_raw_data(std::string(v.data->bytes.begin(), v.data->bytes.end()));
}

}  // namespace

std::string export_onnx_model(const Graph &g) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("tinyrt");
  onnx::GraphProto *gp = m.mutable_graph();
  gp->set_name(g.name.empty() ? "tinyrt" : g.name);
  std::map<std::string, int> opsets;  // domain -> the highest opset its nodes use
  std::set<int> initializers;
  for (const Node &n : g.nodes) {
    onnx::NodeProto *np = gp->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op);
    if (!n.domain.empty()) np->set_domain(n.domain);
    for (int v : n.in) {
      np->add_input(v >= 0 ? g.v(v).name : "");
      if (v >= 0 && g.v(v).is_const()) initializers.insert(v);
    }
    for (int v : n.out) np->add_output(v >= 0 ? g.v(v).name : "");
    for (auto &kv : n.attrs)
      if (kv.first[0] != '_') *np->add_attribute() = attribute_proto(kv.first, kv.second);
    int &o = opsets[n.domain];
    o = std::max(o, n.opset);
  }
  for (int v : g.outputs)
    if (g.v(v).is_const()) initializers.insert(v);
  for (int v : initializers) tensor(gp->add_initializer(), g.v(v));
  for (int v : g.inputs) value_info(gp->add_input(), g.v(v));
  for (int v : g.outputs) value_info(gp->add_output(), g.v(v));
  opsets[""] = std::max(opsets[""], g.opset);
  for (auto &kv : opsets) {
    auto *op = m.add_opset_import();
    op->set_domain(kv.first);
    op->set_version(kv.second);
  }
  return m.SerializeAsString();
}

}  // namespace tinyrt

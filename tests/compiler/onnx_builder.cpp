#include "onnx_builder.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace tinyrt::test {

OnnxBuilder::OnnxBuilder(int opset) {
  m_.set_ir_version(8);
  m_.set_producer_name("tinyrt-tests");
  auto *op = m_.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m_.mutable_graph()->set_name("test");
}

void OnnxBuilder::input(const std::string &name, std::vector<int64_t> dims, int elem) {
  auto *vi = m_.mutable_graph()->add_input();
  vi->set_name(name);
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto *sh = tt->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0)
      sh->add_dim()->set_dim_param("batch");
    else
      sh->add_dim()->set_dim_value(d);
  }
}

void OnnxBuilder::output(const std::string &name, std::vector<int64_t> dims, int elem) {
  auto *vi = m_.mutable_graph()->add_output();
  vi->set_name(name);
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto *sh = tt->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0)
      sh->add_dim()->set_dim_param("d" + std::to_string(sh->dim_size()));
    else
      sh->add_dim()->set_dim_value(d);
  }
}

void OnnxBuilder::init(const std::string &name, std::vector<int64_t> dims, const std::vector<float> &v) {
  auto *t = m_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float x : v) t->add_float_data(x);
}

void OnnxBuilder::init_i64(const std::string &name, std::vector<int64_t> dims, const std::vector<int64_t> &v) {
  auto *t = m_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : v) t->add_int64_data(x);
}

onnx::NodeProto &OnnxBuilder::node(const std::string &op, std::vector<std::string> ins, std::vector<std::string> outs) {
  auto *n = m_.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(counter_++));
  for (auto &i : ins) n->add_input(i);
  for (auto &o : outs) n->add_output(o);
  return *n;
}

void OnnxBuilder::attr(onnx::NodeProto &n, const std::string &name, int64_t v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void OnnxBuilder::attr(onnx::NodeProto &n, const std::string &name, float v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void OnnxBuilder::attr(onnx::NodeProto &n, const std::string &name, const std::vector<int64_t> &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void OnnxBuilder::attr(onnx::NodeProto &n, const std::string &name, const std::string &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

std::string OnnxBuilder::save() const {
  char tmpl[] = "/tmp/tinyrt-test-XXXXXX.onnx";
  int fd = mkstemps(tmpl, 5);
  if (fd < 0) abort();
  close(fd);
  std::ofstream f(tmpl, std::ios::binary);
  m_.SerializeToOstream(&f);
  return tmpl;
}

}  // namespace tinyrt::test

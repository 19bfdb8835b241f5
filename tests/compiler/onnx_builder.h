// onnx_builder.h — builds small ONNX models in C++ for tests.
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace tinyrt::test {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int opset = 13);
  void input(const std::string &name, std::vector<int64_t> dims, int elem = onnx::TensorProto::FLOAT);
  void output(const std::string &name, std::vector<int64_t> dims, int elem = onnx::TensorProto::FLOAT);
  void init(const std::string &name, std::vector<int64_t> dims, const std::vector<float> &v);
  void init_i64(const std::string &name, std::vector<int64_t> dims, const std::vector<int64_t> &v);
  onnx::NodeProto &node(const std::string &op, std::vector<std::string> ins, std::vector<std::string> outs);
  static void attr(onnx::NodeProto &n, const std::string &name, int64_t v);
  static void attr(onnx::NodeProto &n, const std::string &name, float v);
  static void attr(onnx::NodeProto &n, const std::string &name, const std::vector<int64_t> &v);
  static void attr(onnx::NodeProto &n, const std::string &name, const std::string &v);
  // Writes the model to a fresh temporary file and returns its path.
  std::string save() const;
  onnx::ModelProto &model() { return m_; }

 private:
  onnx::ModelProto m_;
  int counter_ = 0;
};

}  // namespace tinyrt::test

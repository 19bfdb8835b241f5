// Bad input gets a precise error naming the problem, never a crash.
#include <gtest/gtest.h>

#include <fstream>

#include "driver/compiler.h"
#include "onnx_builder.h"

using namespace tinyrt;
using tinyrt::test::OnnxBuilder;

namespace {

CompileError compile_error(const std::string &path, CompileOptions opt = {}) {
  opt.target = "x86-64-avx2";
  try {
    compile_model(path, opt);
  } catch (const CompileError &e) {
    return e;
  }
  ADD_FAILURE() << "compiled without error";
  return CompileError(CompileError::Kind::Internal, "");
}

// A valid one-op model (for option errors).
std::string relu_model() {
  OnnxBuilder b;
  b.input("x", {3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", {3});
  return b.save();
}

}  // namespace

TEST(Errors, GarbageFileIsInvalidModel) {
  std::string path = "/tmp/tinyrt-test-garbage.onnx";
  std::ofstream(path) << "this is not a protobuf \xff\xff\xff";
  CompileError e = compile_error(path);
  EXPECT_EQ(e.kind(), CompileError::Kind::InvalidModel);
  EXPECT_NE(std::string(e.what()).find("not an ONNX model"), std::string::npos) << e.what();
}

TEST(Errors, MissingFileIsUsage) {
  CompileError e = compile_error("/nonexistent/model.onnx");
  EXPECT_EQ(e.kind(), CompileError::Kind::Usage);
  EXPECT_NE(std::string(e.what()).find("/nonexistent/model.onnx"), std::string::npos);
}

TEST(Errors, UnsupportedOpNamesNodeAndOp) {
  OnnxBuilder b;
  b.input("x", {1, 4});
  auto &n = b.node("Multinomial", {"x"}, {"y"});
  n.set_name("find_them");
  b.output("y", {1, 1}, onnx::TensorProto::INT32);
  CompileError e = compile_error(b.save());
  EXPECT_EQ(e.kind(), CompileError::Kind::Unsupported);
  EXPECT_NE(std::string(e.what()).find("node 'find_them' (Multinomial)"), std::string::npos) << e.what();
}

TEST(Errors, UnsupportedAttributeValueIsNamed) {
  OnnxBuilder b(15);
  b.input("x", {1, 2, 3});
  for (const char *p : {"s", "b", "m", "v"}) b.init(p, {2}, {1, 1});
  auto &n = b.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "rm", "rv"});
  OnnxBuilder::attr(n, "training_mode", (int64_t)1);
  b.output("y", {1, 2, 3});
  b.output("rm", {2});
  b.output("rv", {2});
  CompileError e = compile_error(b.save());
  EXPECT_EQ(e.kind(), CompileError::Kind::Unsupported);
  EXPECT_NE(std::string(e.what()).find("training_mode"), std::string::npos) << e.what();
}

TEST(Errors, DynamicDimensionAsksForInputShape) {
  OnnxBuilder b;
  b.input("x", {-1, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", {-1, 3});
  std::string path = b.save();
  CompileError e = compile_error(path);
  EXPECT_EQ(e.kind(), CompileError::Kind::Usage);
  EXPECT_NE(std::string(e.what()).find("--input-shape x="), std::string::npos) << e.what();
  CompileOptions ok;
  ok.target = "x86-64-avx2";
  ok.import.input_shapes["x"] = {2, 3};
  EXPECT_EQ(compile_model(path, ok).inputs[0].shape, (Shape{2, 3}));
}

TEST(Errors, ShapeMismatchNamesTheNode) {
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.input("z", {4, 3});
  b.node("Add", {"x", "z"}, {"y"}).set_name("bad_add");
  b.output("y", {-1, 3});
  CompileError e = compile_error(b.save());
  EXPECT_NE(std::string(e.what()).find("bad_add"), std::string::npos) << e.what();
}

TEST(Errors, UnknownTargetListsTheKnownOnes) {
  CompileOptions o;
  o.target = "riscv";
  try {
    compile_model(relu_model(), o);
    FAIL();
  } catch (const CompileError &e) {
    EXPECT_EQ(e.kind(), CompileError::Kind::Usage);
    EXPECT_NE(std::string(e.what()).find("aarch64-neon"), std::string::npos);
  }
}

TEST(Errors, BindingsMustNameGraphInputs) {
  OnnxBuilder b;
  b.input("x", {3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", {3});
  CompileOptions o;
  o.import.bindings["nope"].values = {1};
  CompileError e = compile_error(b.save(), o);
  EXPECT_EQ(e.kind(), CompileError::Kind::Usage);
  EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos);
}

TEST(Errors, ShapeInputMustBeConstantOrBound) {
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.input("shape", {2}, onnx::TensorProto::INT64);
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y", {-1, -1});
  std::string path = b.save();
  try {
    CompileOptions o;
    o.target = "x86-64-avx2";
    compile_model(path, o);
    FAIL();
  } catch (const ConstantRequired &e) {
    EXPECT_EQ(e.value(), "shape");
    EXPECT_NE(std::string(e.what()).find("--bind shape="), std::string::npos);
  }
  CompileOptions o;
  o.target = "x86-64-avx2";
  o.import.bindings["shape"].values = {3, 2};
  EXPECT_EQ(compile_model(path, o).outputs[0].shape, (Shape{3, 2}));
}

// --precision fp16 needs a target with half-precision arithmetic.
TEST(Errors, HalfPrecisionNeedsHalfArithmetic) {
  CompileOptions o;
  o.precision = Precision::F16;
  CompileError e = compile_error(relu_model(), o);  // x86-64-avx2
  EXPECT_EQ(e.kind(), CompileError::Kind::Usage);
  EXPECT_NE(std::string(e.what()).find("--precision fp16 needs half-precision arithmetic"), std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("aarch64-neon-fp16"), std::string::npos) << e.what();
}

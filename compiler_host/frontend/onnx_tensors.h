// onnx_tensors.h — ONNX tensors and attributes to and from tinyrt's
// constants and attributes, and serialized tensor files (test data sets).
#pragma once

#include <string>

#include "ir/graph.h"

namespace onnx {
class TensorProto;
class AttributeProto;
}  // namespace onnx

namespace tinyrt {

// A tensor's data must be exactly what its type and shape say (raw_data of
// numel * element-size bytes, or numel typed values, internal storage):
// throws CompileError otherwise. Returns its type and element count.
void check_tensor_proto(const onnx::TensorProto &t, DType *dt_out = nullptr, int64_t *n_out = nullptr);
// A TensorProto's contents; throws CompileError for types tinyrt cannot hold.
ConstP const_from_tensor_proto(const onnx::TensorProto &t);
// Reads a serialized TensorProto file (test data sets); returns its name too.
ConstP read_tensor_file(const std::string &path, std::string *name = nullptr);
// An attribute as an AttributeProto (function bodies, export); graph
// attributes are not written.
onnx::AttributeProto attribute_proto(const std::string &name, const Attr &a);

}  // namespace tinyrt

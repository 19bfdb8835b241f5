// onnx_export.h — a tinyrt graph back to an ONNX model (--emit-qdq).
#pragma once

#include <string>

#include "ir/graph.h"

namespace tinyrt {

// The graph as a serialized ONNX model: its nodes, the constants they read
// as initializers, inputs and outputs with their types and shapes, an opset
// import per domain the nodes use. Used by --emit-qdq on the graph after
// quantization.
std::string export_onnx_model(const Graph &g);

}  // namespace tinyrt

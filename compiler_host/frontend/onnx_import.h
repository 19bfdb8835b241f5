// onnx_import.h — ONNX model file -> tinyrt Graph, through the onnx library
// (parse and checker; model-local functions inlined first, onnx_functions.h;
// no ONNX shape inference: tinyrt infers every node itself).
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace onnx {
class TensorProto;
class AttributeProto;
}

namespace tinyrt {

// A graph input frozen to a constant (--bind): a whole tensor, or a list of
// values that takes the input's declared type and shape (or [n]).
struct Binding {
  ConstP tensor;
  std::vector<double> values;
};

struct ImportOptions {
  // Static shapes for graph inputs with symbolic or unknown dimensions.
  std::map<std::string, Shape> input_shapes;
  std::map<std::string, Binding> bindings;
  Limits limits;  // caps on sizes (ir/limits.h); copied into the Graph
  // Tensors made graph outputs after the model's own (calibration for
  // --quantize static reads them); names the graph lacks are ignored.
  std::vector<std::string> extra_outputs;
};

// Parses "NAME=D0,D1,..." (an input shape) and "NAME=V0,V1,..." or
// "NAME=@tensor.pb" (a binding); throws CompileError(Usage).
std::pair<std::string, Shape> parse_input_shape(const std::string &arg);
std::pair<std::string, Binding> parse_binding(const std::string &arg);
// Values of a --bind (or tinyrt-perf --input) as a tensor of `dt` and
// `shape` (which holds v.size() elements); `what` names the option in errors.
ConstP values_as_tensor(const std::vector<double> &v, DType dt, const Shape &shape, const std::string &what);

struct ImportResult {
  Graph graph;
};

ImportResult import_onnx_file(const std::string &path, const ImportOptions &opt);
ImportResult import_onnx_bytes(const std::string &bytes, const ImportOptions &opt);

// An attribute as an AttributeProto.
onnx::AttributeProto attribute_proto(const std::string &name, const Attr &a);

// The graph as a serialized ONNX model (onnx_export.cpp): its nodes, the
// constants they read as initializers, inputs and outputs with their
// types and shapes, an opset import per domain the nodes use. Used by
// --emit-qdq on the graph after quantization.
std::string export_onnx_model(const Graph &g);

// A TensorProto's contents; throws CompileError for types tinyrt cannot hold.
ConstP const_from_tensor_proto(const onnx::TensorProto &t);
// Reads a serialized TensorProto file (test data sets); returns its name too.
ConstP read_tensor_file(const std::string &path, std::string *name = nullptr);

// A subgraph (If branch, Loop/Scan body) spliced into `g`: its inputs are
// bound to `inputs`, names it does not define resolve to outer values, and
// its values are renamed with `prefix`. The nodes are returned (in order)
// for the caller to insert; `outputs` are the values of its outputs.
struct InlinedGraph {
  std::vector<Node> nodes;
  std::vector<int> outputs;
};
// The outer values a subgraph reads (the names it and its nested subgraphs
// use but do not define), each the latest value of that name in `g`. A
// Loop or Scan resolves them once for all its iterations (resolving all of
// g's names per iteration made unrolling quadratic), so values an iteration
// adds are not in scope of the next.
using Scope = std::map<std::string, int>;
Scope body_scope(const Graph &g, const onnx::GraphProto &body);
InlinedGraph inline_subgraph(Graph &g, const onnx::GraphProto &body, const std::vector<int> &inputs,
                             const std::string &prefix, const Scope *outer = nullptr);

// ONNX functions: when the onnx library defines `n`'s op by a function
// body (plain or built for the node's attributes and input types), returns
// that body inlined with its inputs and outputs bound to `n`'s; the caller
// splices the nodes in place of `n`. Returns false when there is no body.
bool expand_function(const Node &n, Graph &g, std::vector<Node> *nodes);

// Names of the graph inputs that are not initializers, in order (the
// order of input_K.pb files in ONNX test data sets).
std::vector<std::string> onnx_graph_inputs(const std::string &path);
std::vector<std::string> onnx_graph_outputs(const std::string &path);

}  // namespace tinyrt

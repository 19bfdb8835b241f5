// onnx_import.h — ONNX model file -> tinyrt Graph, through the onnx library
// (parse and checker; model-local functions inlined first, onnx_functions.h;
// subgraphs converted to tinyrt's own, onnx_nodes.h; no ONNX shape
// inference: tinyrt infers every node itself). The graph carries ONNX's
// rules for its ops (onnx_dialect.h).
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

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
  // Dimensions given as ranges (--input-shape NAME=1,1:128,40): their lower
  // bounds (here [1,1,40]; input_shapes holds the upper ones, [1,128,40]).
  // Such a dimension is a run-time extent (ir/graph.h, DimSym) named
  // "NAME[axis]".
  std::map<std::string, Shape> input_shape_mins;
  // Ranges of the model's symbolic dimensions by name (--dim T=1:128):
  // every input dimension of that name is one run-time extent.
  std::map<std::string, std::pair<int64_t, int64_t>> dim_ranges;
  std::map<std::string, Binding> bindings;
  Limits limits;  // caps on sizes (ir/limits.h); copied into the Graph
  // Tensors made graph outputs after the model's own (calibration for
  // --quantize static reads them); names the graph lacks are ignored.
  std::vector<std::string> extra_outputs;
};

struct ImportResult {
  Graph graph;
};

ImportResult import_onnx_file(const std::string &path, const ImportOptions &opt);
ImportResult import_onnx_bytes(const std::string &bytes, const ImportOptions &opt);

// Names of the graph inputs that are not initializers, in order (the
// order of input_K.pb files in ONNX test data sets).
std::vector<std::string> onnx_graph_inputs(const std::string &path);
std::vector<std::string> onnx_graph_outputs(const std::string &path);

}  // namespace tinyrt

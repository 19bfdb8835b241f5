// dialect.h — what the model's format says about ops beyond tinyrt's own
// definitions (ops/*.cpp): which inputs may be omitted, which must share an
// element type, and bodies for ops it defines by other ops. The frontend
// that imported the graph provides it (frontend/onnx_dialect.cpp reads the
// onnx library's schemas), so that ops and passes follow ONNX's rules
// without reading ONNX.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace tinyrt {

class Dialect {
 public:
  virtual ~Dialect() = default;
  // A node from the model (the main graph, a subgraph or a function body):
  // throws CompileError when it omits an input the op requires.
  virtual void check_node(const Node &n) const = 0;
  // Inputs of n that the format's definition of the op says share one
  // element type must have one: throws CompileError naming them. Run when
  // the op's inference sets its first output (after its own checks).
  virtual void check_shared_types(const Node &n, const Graph &g) const = 0;
  // When the format defines n's op by a body of other ops (for n's
  // attributes and input types), appends that body's nodes, bound to n's
  // inputs and outputs, to *nodes and returns true.
  virtual bool expand_function(const Node &n, Graph &g, std::vector<Node> *nodes) const = 0;
};

}  // namespace tinyrt

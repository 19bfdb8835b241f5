// onnx_nodes.h — ONNX nodes and subgraphs as tinyrt nodes and subgraphs
// (the frontend's own: the importer and the ONNX dialect's function bodies
// use it).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ir/subgraph.h"

namespace onnx {
class NodeProto;
class GraphProto;
}  // namespace onnx

namespace tinyrt {

// Converts one NodeProto. `ids` maps names in scope to values; new output
// values are named prefix + name (unique when a body is spliced more than
// once); subgraph attributes become Subgraphs, their free names rewritten
// to the values `ids` gives them when `prefix` is set.
Node convert_node(const onnx::NodeProto &np, Graph &g, std::map<std::string, int> &ids, const std::string &prefix,
                  int &unnamed);
// A subgraph (If branch, Loop or Scan body) and its nested subgraphs, `depth`
// levels deep (the importer has bounded the nesting).
std::shared_ptr<const Subgraph> convert_subgraph(const onnx::GraphProto &gp, int depth);

}  // namespace tinyrt

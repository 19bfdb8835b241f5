// onnx_functions.h — model-local functions (ModelProto.functions) inlined
// into the graphs that call them, before any onnx library call sees them.
#pragma once

#include "ir/limits.h"

namespace onnx {
class ModelProto;
}

namespace tinyrt {

// Replaces every node that calls one of the model's functions (its domain
// and op_type name the function), in the main graph and in every subgraph,
// by the function's body: formal inputs and outputs bound to the node's,
// attribute references to the node's attributes, the body's own values
// renamed apart. Then clears model.functions() (a function no node calls is
// dropped unread) and imports the opsets the bodies use.
//
// The call graph is checked first, without recursion deeper than the cap:
// a function that calls itself (directly or through others) is refused;
// so are calls and subgraphs nested more than `lim.max_nesting` deep, an
// expansion of more than `lim.max_expanded_nodes` nodes (41 functions that
// each call the previous one twice would make 2^41), and bodies whose
// copies would hold more than `lim.max_folded_bytes` bytes.
void inline_local_functions(onnx::ModelProto &model, const Limits &lim);

}  // namespace tinyrt

// text.h — a textual form of the graph IR, so that unit tests of compiler
// passes can start from a few readable lines instead of an ONNX file, and
// compare what a pass produced as text.
//
//   # a comment runs to the end of its line
//   graph main opset 17 domains ai.onnx=17,com.microsoft=1
//   input x: f32[1,3,8,8]
//   const w: f32[4,3,3,3] = random(7)
//   const shape: i64[2] = [1, -1]
//   y: f32[1,4,8,8] = Conv(x, w) {kernel_shape=[3,3], pads=[1,1,1,1]}
//   z = Relu(y)
//   output z
//
// Statements, one a line (a node's inputs and attributes and a list of
// values may be wrapped over several):
//   graph [NAME] [opset N] [domains D=N,...]
//       First, once: Graph::name, Graph::opset and Graph::domain_opsets, as
//       written (ai.onnx stands for the domain "").
//   input NAME: TYPE[SHAPE]          A graph input (static dimensions).
//   const NAME: TYPE[SHAPE] = VALUES A constant.
//   OUTS = [DOMAIN::]OP[@OPSET][[NODE]](INS) [{ATTRS}] [guard G]
//       A node. OUTS: `name`, `name: TYPE[SHAPE]` or `_` (an omitted
//       output), separated by commas; a node without outputs has no `=`.
//       INS: names separated by commas, an empty slot (`Resize(x, , s)`) or
//       `_` for an omitted input (`Op(_)`: a lone empty slot is no input). The node's opset is its domain's in the
//       header, else the graph's opset, unless `@OPSET` gives it; its name
//       is OP_K (K counting the unnamed nodes) unless `[NODE]` gives it:
//       both as the ONNX importer does.
//   output NAME, ...                 Graph::outputs (at least one).
//   effect NAME, ...                 Graph::effects.
//   guard G: cond=NAME expect=BOOL eff=NAME eff_expect=BOOL [parent=G]
//            [what="..."] [failure="..."]
//       Graph::guards[G], numbered 0, 1, ... in order; may come after the
//       nodes that name it.
// A value is defined once and used after its definition (the graph's
// nodes are in topological order). Node outputs get DType::Undefined and no
// known shape, for inference to set, as the importer gives them; a type on
// an output is what the model declares, recorded as the importer records
// value_info: in Graph::model_declared, as the value's dtype and, for an op
// outside ai.onnx with a static shape, in Graph::declared.
//
// Names are bare words of letters, digits and `_ . / - + ~`, or quoted
// strings ("input:0") with C escapes (\" \\ \n \t \r \xHH); the words graph,
// input, const, output, effect, guard, opset, domains and _ are quoted.
// TYPE: f32 f64 f16 bf16 i8 i16 i32 i64 u8 u16 u32 u64 bool (or the names of
// dtype_name: float32, ...); a declaration may also say string or
// undefined. SHAPE: dimensions separated by commas, [] for a scalar; in a
// declaration `?` is an unknown dimension (-1) and the shape may be left out
// (`y: f32`: a type, no shape).
// VALUES: [v, v, ...] row-major (numbers, inf, nan, true/false), or a filler:
// random(SEED) (deterministic: floats in [-1, 1), signed integers in
// [-8, 7], unsigned in [0, 15], bools) or fill(V). A constant holds at most
// 2^24 elements. The printer always lists the values.
// ATTRS: NAME=VALUE separated by commas: 3 (int), 0.5 (float: a number with
// `.`, an exponent, inf or nan), "s" (string), [1,2] (ints), [0.5,1.0]
// (floats: any element not an integer makes the list floats), ["a","b"]
// (strings), ints[] floats[] strings[] (empty lists; the
// prefix may also force a list's kind: floats[1,2]), tensor TYPE[SHAPE]
// VALUES (tensor), graph [NAME] { ... } (a subgraph), other (Kind::Other).
// A subgraph holds, a line each, `input NAME, ...` (names only), `const`,
// nodes (no types, opset or guard; a node's name is empty unless given)
// and `output NAME, ...`; it may read names of the enclosing graphs
// defined before it.
//
// print_graph writes floats so that they read back exactly and always
// lists every attribute and value, so parse_graph(print_graph(g)) prints
// as g does. A node output's type is printed from the model's declaration,
// else from what inference knows. A name that several printed values share
// stays with the one of highest id (the value Graph::latest_value and so a
// subgraph's free name denote); the others are printed as NAME~K.
#pragma once

#include <string>

#include "ir/graph.h"

namespace tinyrt {

std::string print_graph(const Graph &g);

// Throws CompileError (InvalidModel) naming the line and what was expected
// on malformed text: a syntax error, an unknown or redefined value, a bad
// type, shape, attribute or value list.
Graph parse_graph(const std::string &text);

}  // namespace tinyrt

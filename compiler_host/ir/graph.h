// graph.h — tinyrt's own graph IR: values (tensors) and nodes (ONNX-level
// ops), kept in topological order. Graph passes rewrite it; lowering turns
// each node into kernels (ir/program.h).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/dtype.h"
#include "ir/error.h"
#include "ir/expr.h"
#include "ir/limits.h"

namespace tinyrt {

struct Subgraph;  // ir/subgraph.h
class Dialect;    // ir/dialect.h

using Bytes = std::vector<uint8_t>;

// A tensor's value known at compile time (row-major, little-endian).
struct ConstData {
  DType dtype = DType::F32;
  Shape shape;
  Bytes bytes;
  template <class T>
  const T *as() const {
    return reinterpret_cast<const T *>(bytes.data());
  }
  // Element i converted to double / int64 (any numeric dtype).
  double get_f(int64_t i) const;
  int64_t get_i(int64_t i) const;
};
using ConstP = std::shared_ptr<const ConstData>;
ConstP make_const(DType t, Shape shape, Bytes bytes);
ConstP make_const_f32(Shape shape, const std::vector<float> &v);
ConstP make_const_i64(Shape shape, const std::vector<int64_t> &v);
// Values given on a command line (--bind, tinyrt-perf --input) as a tensor
// of `dt` and `shape` (which holds v.size() elements); `what` names the
// option in errors.
ConstP values_as_tensor(const std::vector<double> &v, DType dt, const Shape &shape, const std::string &what);

// A dimension known at compile time by its bounds only (--input-shape
// NAME=1,1:128,40, --dim T=1:128): a run-time extent. A base extent is set
// by the run (the dimension of an input the application gives); a derived
// one is an index expression `def` over base ones (Dim leaves), such as a
// convolution's output size or T * 40. Values are stored at their bounds
// (Value::shape, its strides), so an extent changes how far kernels loop,
// never where an element lives.
struct DimSym {
  std::string name;  // "T", or "x[1]" for an input's dimension without a name
  int64_t lo = 0, hi = 0;
  ExprP def;  // nullptr for a base extent
  // A data-dependent base extent (NonZero's count, NonMaxSuppression's
  // selections): not an input's dimension but computed by a kernel at run
  // time, into the int64 scalar value `holder` (set when its op is
  // lowered); its bounds come from the op's semantics.
  bool produced = false;
  int holder = -1;
};

struct Value {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;  // with run-time extents (dims), their upper bounds
  bool shape_known = false;
  ConstP data;  // set when the value is a compile-time constant
  // Per axis, the run-time extent (Graph::syms) of a dynamic dimension, or
  // -1; empty when every dimension is static.
  std::vector<int> dims;
  // A small integer tensor known at compile time as expressions of
  // run-time extents (the Shape of a value with run-time dimensions, and
  // the Gather/Concat/arithmetic on it): its elements, row-major, as int64
  // expressions whose leaves are constants and casts of Dim leaves
  // (ops/sym_values.cpp). Empty otherwise. The value is also computed at
  // run time for readers that take it as data. A constant may carry sym
  // too: then `data` holds the elements' upper bounds, and its reader (the
  // shape input of an op with a dims rule) reads the elements.
  std::vector<ExprP> sym;
  bool is_const() const { return data != nullptr; }
  bool is_sym() const { return !sym.empty(); }
  int64_t numel() const { return shape_numel(shape); }
  int rank() const { return (int)shape.size(); }
  bool is_dynamic() const {
    for (int d : dims)
      if (d >= 0) return true;
    return false;
  }
  int dim(int axis) const { return (size_t)axis < dims.size() ? dims[(size_t)axis] : -1; }
};

struct Graph;

// Throws (naming `what` and the cap) when a tensor of shape `s` exceeds
// l.max_tensor_elements or its element count overflows.
void check_tensor_size(const Shape &s, const Limits &l, const std::string &what);

struct Attr {
  enum class Kind { Int, Float, String, Ints, Floats, Strings, Tensor, Graph, Other } kind = Kind::Int;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  ConstP t;
  std::shared_ptr<const Subgraph> graph;  // If/Loop/Scan bodies, spliced in by their ops
};

struct Node {
  std::string name;
  std::string op;        // ONNX op type
  std::string domain;    // "" = ai.onnx
  std::vector<int> in;   // value ids; -1 = omitted optional input
  std::vector<int> out;  // value ids
  std::map<std::string, Attr> attrs;
  int opset = 0;  // opset of the node's domain in the model
  // Runs only when its guard holds (Graph::guards: a branch of an If whose
  // condition is known only at run time), or always (-1).
  int guard = -1;

  bool has(const std::string &a) const { return attrs.count(a) != 0; }
  int64_t geti(const std::string &a, int64_t def) const;
  float getf(const std::string &a, float def) const;
  std::string gets(const std::string &a, const std::string &def) const;
  std::vector<int64_t> getints(const std::string &a, const std::vector<int64_t> &def = {}) const;
  std::vector<float> getfloats(const std::string &a, const std::vector<float> &def = {}) const;
  // "node 'name' (Op)" for messages.
  std::string where() const;
  // Input i is present (index in range and not omitted).
  bool has_in(size_t i) const { return i < in.size() && in[i] >= 0; }
};

// A branch of an If whose condition is known only at run time: the nodes
// (and later the kernels) it guards run only when the condition `cond`
// (a one-element bool) is `expect`, and its parent guard holds. The code
// tests one byte per guarded step: `eff`, a bool that is true exactly when
// the whole chain holds (the condition itself for an outermost branch, the
// And of the parent's and this branch's condition for a nested one), which
// is computed always, outside every branch.
struct Guard {
  int cond = -1;
  bool expect = true;
  int parent = -1;
  int eff = -1;
  bool eff_expect = true;  // the chain holds when eff == eff_expect
  std::string what;        // "then branch of node 'x' (If)", for messages
  // Set when the branch cannot be compiled for the model's input shapes
  // (infer_and_fold): taking it at run time stops the run with this reason.
  std::string failure;
  // An iteration of a Loop with a run-time trip count: no branch to give up
  // on, an error compiling it fails the compilation.
  bool must_compile = false;
};

struct Graph {
  // A deque: references to values stay valid while passes add values.
  std::deque<Value> values;
  std::vector<Node> nodes;  // topological order
  std::vector<int> inputs;  // non-constant graph inputs
  std::vector<int> outputs;
  int opset = 0;                             // ai.onnx opset of the model
  std::map<std::string, int> domain_opsets;  // every imported domain's opset
  std::string name;
  Limits limits;  // caps on sizes the model asks for (ir/limits.h)
  // Types and static shapes the model declares (value_info, graph outputs)
  // for outputs of nodes outside ai.onnx: custom ops, which no inference
  // knows, take their output shapes from here.
  std::map<int, std::pair<DType, Shape>> declared;
  // What the model declares for the outputs of its nodes (value_info,
  // graph outputs): an element type (Undefined: none) and, when it gives a
  // shape, its dimensions (-1: symbolic; no shape is kept when the tool
  // changed input shapes, --input-shape or --bind). infer_and_fold refuses
  // a model whose declarations disagree with what its nodes compute.
  struct Declaration {
    DType dtype = DType::Undefined;
    bool has_shape = false;
    std::vector<int64_t> dims;
  };
  std::map<int, Declaration> model_declared;
  std::vector<Guard> guards;  // Node::guard and Kernel::guard index this
  // Run-time extents (Value::dims index this).
  std::vector<DimSym> syms;
  // Run-time extents taken to be equal where an op needs them so (a
  // Concat's other axes, a broadcast axis) without being equal for every
  // value of their ranges (a U-Net's skip of H against its upsampled
  // 2 * (H / 2)). The run tests each before its first kernel and stops
  // with TINYRT_ERR_SHAPE and `what` when they differ (lower_to_kernels).
  struct ExtentCheck {
    ExprP a, b;
    std::string what;
  };
  std::vector<ExtentCheck> extent_checks;
  // A base extent named `name` in [lo, hi] (the one of that name if it
  // exists: its bounds must agree).
  int base_sym(const std::string &name, int64_t lo, int64_t hi);
  // The extent computed by `def` (an index expression over Dim leaves):
  // -1 when def is a constant, else an existing extent of the same
  // definition or a new one, bounded by def's interval.
  int derived_sym(const ExprP &def, const std::string &name);
  // A data-dependent extent named `name` in [0, hi] (DimSym::produced; the
  // one of that name if it exists).
  int produced_sym(const std::string &name, int64_t hi);
  // Axis `axis` of value v as an index expression: its constant dimension,
  // a Dim leaf (base extent) or its definition (derived).
  ExprP extent(int v, int axis) const;
  ExprP sym_expr(int sym) const;
  // Values nothing reads whose producers run for their effect (a branch
  // error's placeholder): kept like outputs, but not in the arena.
  std::vector<int> effects;
  // The rules of the format the graph was imported from, for ops tinyrt
  // does not define and type constraints (ir/dialect.h); none for graphs
  // built in tests.
  std::shared_ptr<const Dialect> dialect;

  // Does guard `inner` (-1: none) hold only when `outer` does: is outer
  // -1, inner itself, or one of inner's parents? A producer may fuse into
  // a reader only when the reader's guard implies the producer's.
  bool guard_implies(int inner, int outer) const;

  int add_value(const std::string &name, DType t, Shape shape);
  int add_const(const std::string &name, ConstP data);
  Value &v(int id) { return values.at(id); }
  const Value &v(int id) const { return values.at(id); }
  // A name not used by any value yet, derived from `base`.
  std::string fresh_name(const std::string &base);
  // Number of node inputs, graph outputs and effects that read each value
  // (a guard's condition counts once for each node it guards).
  std::vector<int> use_counts() const;
  // Drops nodes none of whose outputs are used, and unused values' data.
  void remove_dead_nodes();
  // Drops the nodes whose entry in `drop` is true, keeping the others' order.
  void remove_nodes(const std::vector<bool> &drop);
  bool is_graph_output(int v) const;
  // Names of the graph inputs value v is computed from.
  std::vector<std::string> upstream_inputs(int v) const;
  void check_size(const Shape &s, const std::string &what) const { check_tensor_size(s, limits, what); }
  // The latest value named `name`, or -1: what a subgraph's free name
  // denotes when its Loop or If is expanded (constant time, where a scan
  // of the values made nested Loops quadratic).
  int latest_value(const std::string &name) const;
  void rename_value(int id, const std::string &name);

 private:
  std::map<std::string, int> name_counter_;
  std::unordered_map<std::string, int> latest_;  // values are only appended (add_value) or renamed here
};

// Builders for passes and expansions that add nodes: a node of ai.onnx op
// `op` (the model's opset) named after `base`, a value whose type and
// shape inference sets, an int or ints attribute.
Node make_node(Graph &g, const std::string &op, const std::string &base, std::vector<int> in, std::vector<int> out);
int new_value(Graph &g, const std::string &base);
Attr int_attr(int64_t v);
Attr ints_attr(std::vector<int64_t> v);

}  // namespace tinyrt

// op_registry.h — the op table. Each ONNX op is one entry: the attributes it
// accepts, a shape/type inference function, and a lowering to element
// expressions (ir/expr.h). Lowering targets a LowerCtx, which either appends
// kernels to the program (compilation) or evaluates them at once on the host
// (constant folding), so each op is written exactly once.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/graph.h"
#include "ir/program.h"

namespace tinyrt {

class LowerCtx {
 public:
  explicit LowerCtx(Graph &g) : g(g) {}
  virtual ~LowerCtx() = default;
  // out[i...] = expr, where Load(s, ...) reads value ins[s].
  virtual void kernel(int out, std::vector<int> ins, ExprP expr) = 0;
  // As kernel(), plus a schedule for a scheduled family (Gemm, Depthwise);
  // `expr` stays the reference definition.
  virtual void scheduled(KernelKind kind, int out, std::vector<int> ins, ExprP expr, const GemmSpec &spec) = 0;
  // A recurrent layer's state sequence (ir/program.h); compilation only.
  virtual void recurrent(int out, std::vector<int> ins, const RecurrentSpec &spec) = 0;
  // `out` is `in` with another shape (same elements, row-major order).
  virtual void alias(int out, int in) = 0;
  // A step that stops the run with `message` (a branch that could not be
  // compiled); `out` is a placeholder. Compilation only.
  virtual void fail(int, std::vector<int>, const std::string &m) {
    fail_internal("a branch error reached folding: " + m);
  }
  // Data-dependent sizes (KernelKind::Compact, Nms; compilation only: such
  // ops are never folded): `out` gets the kernel's elements, and how many
  // there are becomes the produced extent (DimSym::produced) of its axis,
  // whose holder the call creates.
  virtual void compact(int, int) { fail_internal("a data-dependent kernel reached folding"); }
  virtual void nms(int, std::vector<int>, const NmsSpec &) { fail_internal("a data-dependent kernel reached folding"); }
  // TopK's selection: `out` (int32, the input's shape but min(k, length)
  // along the axis) gets the indices of each slice's first elements in the
  // order of `spec`; compilation emits a TopK kernel, folding (and
  // symbolic evaluation) the element expressions `reference` emits.
  virtual void topk(int, int, const TopKSpec &, const std::function<void()> &reference) { reference(); }
  // A new intermediate value.
  int temp(const std::string &base, DType t, Shape s) { return g.add_value(g.fresh_name(base), t, std::move(s)); }
  Graph &g;
};

struct OpDef {
  std::string name;
  std::string domain;              // "" for ai.onnx; "com.microsoft" for ONNX Runtime's contrib ops
  int min_opset = 1;               // earliest opset whose semantics we implement
  std::vector<std::string> attrs;  // accepted attribute names
  std::vector<DType> types;        // accepted types of input 0 (empty: any)
  // Sets output dtypes and shapes from the inputs (which may be constants).
  std::function<void(Node &, Graph &)> infer;
  // Emits kernels/aliases computing the node's outputs.
  std::function<void(const Node &, LowerCtx &)> lower;
  // For ops whose outputs follow from input shapes alone (Shape, Size) or
  // from attributes (Constant): produces the constant outputs directly.
  std::function<std::vector<ConstP>(const Node &, const Graph &)> fold;
  // Inputs that must be compile-time constants (they fix shapes or axes).
  std::vector<int> const_inputs;
  // Control flow: replaces the node by ordinary nodes (inlined subgraphs)
  // once its inputs are inferred and folded.
  std::function<std::vector<Node>(const Node &, Graph &)> expand;
  // The expansion sets each node's guard (If); otherwise its nodes take the
  // expanded node's.
  bool expand_sets_guards = false;
  // Run-time extents (ir/graph.h, DimSym): sets the outputs' Value::dims
  // (after `infer`, which computes their upper bounds) for a node with an
  // input of dynamic dimensions; the op's lowering then reads every
  // dimension it computes with through Graph::extent. Unset: the op does
  // not take dynamic dimensions, and such an input is refused.
  std::function<void(Node &, Graph &)> dims;
};

// Does node n read a value with run-time dimensions? Throws, naming the
// input, the axis and the range, when its op has no dims rule.
bool reads_run_time_dims(const OpDef &d, const Node &n, const Graph &g);
// For passes that add nodes after shape inference (quantize_static,
// fuse_qdq): validates n, infers its outputs and, when it reads run-time
// dimensions, gives them theirs by the op's rule.
void infer_node(Node &n, Graph &g);

// Dimension rules for OpDef::dims: every output takes input 0's dims; the
// outputs take the numpy broadcast of the inputs' dims (two different
// extents on one axis are refused, a static size other than 1 against an
// extent too).
void dims_like_input(Node &n, Graph &g);
void dims_broadcast(Node &n, Graph &g);
// Gives axis `axis` of output k of n a produced extent (a data-dependent
// size, DimSym::produced) of at most `hi` elements, named after the output
// ("selected_indices[0]"); the output's other axes keep their dims.
int produced_axis(Node &n, Graph &g, size_t k, int axis, int64_t hi);
// "input 'x' axis 1 (the run-time dimension T, 1:128)" for messages.
std::string describe_dim(const Graph &g, int v, int axis);
// Axis ka of value va and axis kb of vb, both run-time extents, must be
// equal for node n: true when they are for every value of their ranges,
// or when the run can test it before its first kernel (neither depends on
// a data-dependent extent; Graph::extent_checks gets the test); false
// otherwise (the caller refuses).
bool agree_at_run_time(Graph &g, const Node &n, int va, int ka, int vb, int kb);
// The same for two index expressions of run-time extents; `what` says
// what the node needs ("extents differ in this run: node 'x' (Op) " is
// put before it: the runtime's message may be cut after that).
bool agree_at_run_time(Graph &g, const Node &n, const ExprP &a, const ExprP &b, const std::string &what);

// ---- symbolic values (Value::sym; ops/sym_values.cpp) ----

// An int64 element expression of a symbolic value as an index expression
// (casts of Dim leaves and int64 arithmetic become index arithmetic);
// throws when it is not one.
ExprP sym_index(const ExprP &e);
// Input `input` of node n as index expressions, one per element: a
// constant's values or a symbolic value's elements.
std::vector<ExprP> sym_ints(const Graph &g, const Node &n, size_t input);
// Sets Value::sym of n's small fixed-shape outputs when its lowering
// computes them from constants, symbolic values and run-time extents
// alone (Shape of a value with run-time dimensions, the Gather/Concat/
// arithmetic on such shapes): each element evaluated through the op's own
// lowering. An output all of whose elements turn out constant becomes a
// constant. Returns whether every output is now a constant (false, and
// nothing set, when the lowering reads anything else).
bool fold_symbolic(Node &n, Graph &g, const OpDef &d);
// Do expressions a and b (index expressions of run-time extents) agree for
// every value of the extents (exhaustively for an extent of at most 512
// values, else at its bounds and 64 points between; of many extents, at
// 256 combinations of those)?
bool same_extent(const Graph &g, const ExprP &a, const ExprP &b);

// Each ops/*.cpp file has a register_*_ops() function that calls
// register_op(); the table is filled on first use.
void register_op(OpDef def);
const OpDef *find_op(const std::string &domain, const std::string &op);
std::vector<const OpDef *> all_ops();

// Validates a node against its OpDef (known op, opset, attributes, constant
// inputs); throws CompileError naming the node otherwise.
const OpDef &check_node(const Node &n, const Graph &g);
// The out-of-scope class of an op tinyrt does not implement by design
// ("random", "sequences", ...), or nullptr.
const char *out_of_scope_class(const std::string &op);

// The activation functions ONNX names (the elementwise ops of those names
// and the recurrent ops' activations attribute) applied to x, with alpha
// and beta where the function takes them; nullptr for another name.
ExprP activation_expr(const std::string &name, ExprP x, double alpha, double beta);

// ---- helpers shared by op definitions ----

// Output axis vars [Var(0) .. Var(rank-1)].
std::vector<ExprP> out_vars(int rank);
// Indices into an input of shape `in` broadcast (numpy rules) to an output
// of rank `out_rank`.
std::vector<ExprP> broadcast_index(const Shape &in, int out_rank);
Shape broadcast_shapes(const Shape &a, const Shape &b, const Node &n);
// Normalizes a possibly negative axis; throws naming the node if invalid.
int norm_axis(int64_t axis, int rank, const Node &n);
// Throws ConstantRequired for input value v of node n, naming the graph
// inputs it is computed from.
[[noreturn]] void throw_constant_required(const Graph &g, const Node &n, int v);
// Reads a constant integer input (int32/int64) as a vector.
std::vector<int64_t> const_ints(const Graph &g, const Node &n, size_t input);
// Sets output `k` of `n`.
void set_out(Node &n, Graph &g, size_t k, DType t, Shape s);
// Input `k` value.
inline const Value &in_val(const Graph &g, const Node &n, size_t k) { return g.v(n.in.at(k)); }
// Convolution (nn.cpp): the sum over (ic, window) of fx(x) * fw(w) for a
// node with Conv's attributes, x at slot 0 and w at slot 1, accumulated in
// `acc`; padding contributes 0. `extents`: x's spatial extents when some
// are run-time (Graph::extent; empty: x's shape), positions past which
// are padding too.
ExprP conv_sum(const Node &n, const Shape &x, const Shape &w, DType xt, DType wt, DType acc,
               const std::function<ExprP(ExprP)> &fx, const std::function<ExprP(ExprP)> &fw,
               const std::vector<ExprP> &extents = {});
// The dims rule of the windowed ops (Conv, the pools): a run-time batch
// carries over; a run-time spatial axis of x gives the output axis the
// extent (in + pads - window) / stride + 1, for explicit pads (or VALID)
// and floor rounding, when the range's smallest input holds a window.
// Run-time channels are refused.
void window_dims(Node &n, Graph &g, const std::vector<int64_t> &kernel);
// x's spatial extents (axes 2..) as index expressions.
std::vector<ExprP> spatial_extents(const Graph &g, int x);
// The same when some of x's dimensions are run-time (where conv_sum and
// the transposed convolution take padding at the run's edges), else none.
std::vector<ExprP> run_spatial_extents(const Graph &g, int x);
Shape conv_out_shape(const Node &n, const Shape &x, const Shape &w);
// The attributes Conv, ConvInteger and QLinearConv share.
const std::vector<std::string> &conv_attributes();
// Matrix product (nn.cpp) of A (slot 0) and B (slot 1) with numpy
// broadcasting; fa/fb get each element and its row of A / column of B.
ExprP matmul_sum(const Shape &a, const Shape &b, int out_rank, DType at, DType bt, DType acc,
                 const std::function<ExprP(ExprP, ExprP)> &fa, const std::function<ExprP(ExprP, ExprP)> &fb);
Shape matmul_out_shape(const Node &n, Shape a, Shape b);
// Their dims rule, A and B at inputs a_in and b_in.
void matmul_dims(Node &n, Graph &g, int a_in, int b_in);
// GemmSpecs of the scheduled families (nn.cpp): a convolution with Conv's
// attributes of input 0 by `weight` ([OC, IC/groups, k...], 1 or 2 spatial
// axes), and A (any rank >= 2) times `weight` ([N, K, 1, 1]) into a
// rank-yr output. The epilogue is left to the caller.
GemmSpec conv_gemm_spec(const Node &n, const Graph &g, int weight);
GemmSpec matmul_gemm_spec(const Shape &a, int yr, int weight, const Graph &g);
// The same roles for a product of K inputs and N outputs without a
// constant weight (GemmSpec::arena_weights).
GemmSpec matmul_spec(const Shape &a, int yr, int64_t k, int64_t n);
// A constant [N, K, 1, 1] copy of a constant B ([K, N] when b_is_kn, else
// [N, K]) for matmul_gemm_spec: float (times alpha), or int8 as it is.
int product_weight(LowerCtx &c, const Value &B, bool b_is_kn, double alpha, int64_t K, int64_t N);
// Dynamic quantization (dynamic_quant.cpp). Symmetric int8 rows of src
// ([rows, cols]): scale max|row| / qmax (1 for a row of zeros), values in
// [-qmax, qmax] (127, or 63 for --weight-bits 7).
void quantize_rows(const std::vector<double> &src, int64_t rows, int64_t cols, std::vector<int8_t> *q,
                   std::vector<float> *scale, int qmax = 127);
// Int8 rows of quantized weights value(r, k) - zero(r) with scale(r): kept
// exactly where they fit int8, else dequantized and quantized again by
// quantize_rows.
void int8_rows(int64_t rows, int64_t cols, const std::function<int64_t(int64_t, int64_t)> &value,
               const std::function<double(int64_t)> &scale, const std::function<int64_t(int64_t)> &zero,
               std::vector<int8_t> *q, std::vector<float> *scales);
// Kernels quantizing float tensor x at run time by rows (its last axis):
// `absmax` (x's shape without the last axis) = max |row|, `q` (int8, x's
// shape) = round(x * 127 / absmax). A row's scale is absmax / 127.
// The mark --quantize dynamic puts on a GRU, RNN (or LSTM with layout 1):
// its lowering quantizes W and R per row and runs the int8 loop.
constexpr const char *kQuantizeDynamicAttr = "_quantize_dynamic";
struct DynamicRows {
  int q = -1, absmax = -1;
};
DynamicRows quantize_activation_rows(LowerCtx &c, int x);
// out = log_softmax(x) over the axes flagged in `axes` (reductions.cpp).
void lower_log_softmax(LowerCtx &c, int x, int out, const std::vector<bool> &axes);
// Requires input k (when present) to broadcast one way to `target`
// (numpy rules: its dims align right and each is 1 or equal); names the
// node, the input and both shapes otherwise. Kernels trust such shapes.
void require_broadcastable(const Node &n, const Graph &g, size_t k, const Shape &target, const char *what);
// An index read from a tensor into axis `axis` of value v: a negative one
// counts from the axis's end (its actual length when it is a run-time
// extent), and the clamp into the axis's bounds keeps invalid input from
// reading outside.
ExprP safe_index(ExprP raw, const Graph &g, int v, int axis);
ExprP safe_index(ExprP raw, const ExprP &len, int64_t bound);
// Requires input types in `types`; names the node otherwise.
void require_types(const Node &n, const Graph &g, size_t input, const std::vector<DType> &types);
// Requires input k, when present, to hold exactly one element (a scalar or
// [1]): constant inputs that are read as one number (a depth, k, an axis).
void require_one_element(const Node &n, const Graph &g, size_t k, const char *what);
// Requires input k, when present, to be of type t (the spec's only type for
// it: If's condition, Loop's trip count); names the node, `what` and both
// types otherwise.
void require_dtype(const Node &n, const Graph &g, size_t k, DType t, const char *what);
// Requires the entries of input k, when it is a constant, to be indices
// into axes of the lengths `dims` (entry i into dims[i % dims.size()]):
// in [-dim, dim). Kernels clamp data-dependent indices instead.
void require_indices_in_range(const Node &n, const Graph &g, size_t k, const std::vector<int64_t> &dims);
// When input k is a constant, each of its values lies in [lo, hi) or equals
// `except` (when given: NLL's ignore_index); `what` names one value in the
// message. The kernels clamp or skip such values at run time; a constant
// one is refused here.
void require_const_values_in(const Node &n, const Graph &g, size_t k, int64_t lo, int64_t hi, const char *what,
                             const int64_t *except = nullptr);

}  // namespace tinyrt

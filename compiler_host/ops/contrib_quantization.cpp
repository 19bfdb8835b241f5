// contrib_quantization.cpp — ONNX Runtime's QOperator contrib ops (domain
// com.microsoft), as its quantizer writes them in QuantFormat.QOperator:
// QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
// QLinearGlobalAveragePool, QLinearConcat, QGemm and MatMulIntegerToFloat.
//
// Each is defined by its float meaning (the inputs dequantized, the float
// op, the result quantized), so each expands, once its inputs are
// inferred, into that QDQ form: DequantizeLinear -> the ai.onnx op ->
// QuantizeLinear. The QDQ passes then run it as they run ORT's QDQ format:
// QGemm and MatMulIntegerToFloat with constant scales as the int8 GEMM
// (fuse_qdq), QLinearSigmoid and QLinearLeakyRelu as 256-entry tables
// (tabulate_byte_functions), QLinearAdd as a GEMM's quantized residual
// epilogue where it follows one (fuse_residuals), QLinearConcat of equal
// scales on the integers. Standing alone, each computes the ONNX
// definition of its parts in float32, op by op.
#include "ops/op_registry.h"

namespace tinyrt {

namespace {

// Builds the expansion of node `n`: nodes named after it, at opset 13
// (per-axis DequantizeLinear), each output a fresh value.
struct Expansion {
  Graph &g;
  const Node &n;
  std::vector<Node> nodes;

  int add(const std::string &op, std::vector<int> ins, std::map<std::string, Attr> attrs = {}, int out = -1) {
    if (out < 0) out = new_value(g, n.name + "_" + op);
    Node m = make_node(g, op, n.name + "/" + op, std::move(ins), {out});
    m.opset = std::max(g.opset, 13);
    m.attrs = std::move(attrs);
    nodes.push_back(std::move(m));
    return out;
  }
  // Input k, or -1 when absent.
  int in(size_t k) const { return n.has_in(k) ? n.in[k] : -1; }
  int dq(size_t x, size_t scale, size_t zero, std::map<std::string, Attr> attrs = {}) {
    std::vector<int> ins = {n.in[x], n.in[scale]};
    if (in(zero) >= 0) ins.push_back(n.in[zero]);
    return add("DequantizeLinear", ins, std::move(attrs));
  }
  // QuantizeLinear to the node's output with the zero point at input
  // `zero`, or one of type t (its absence means 0 of the input's type, not
  // QuantizeLinear's default uint8).
  void q(int v, size_t scale, size_t zero, DType t) {
    int z = in(zero);
    if (z < 0) {
      Bytes b(1, 0);
      z = g.add_const(g.fresh_name(n.name + "_zero_point"), make_const(t, {}, b));
    }
    add("QuantizeLinear", {v, n.in[scale], z}, {}, n.out[0]);
  }
};

void require(const Node &n, std::initializer_list<size_t> ks) {
  for (size_t k : ks)
    if (!n.has_in(k)) fail_invalid(n.where() + ": input " + std::to_string(k) + " is required");
}

const std::vector<DType> kQuant = {DType::U8, DType::I8};

void def(const std::string &name, std::vector<std::string> attrs, std::vector<DType> types,
         std::function<std::vector<Node>(const Node &, Graph &)> expand) {
  OpDef d;
  d.name = name;
  d.domain = "com.microsoft";
  d.attrs = std::move(attrs);
  d.types = std::move(types);
  d.expand = std::move(expand);
  register_op(std::move(d));
}

// QLinearAdd, QLinearMul (A, A_scale, A_zero_point, B, B_scale,
// B_zero_point, C_scale, C_zero_point): C = Q(DQ(A) op DQ(B)).
void def_binary(const std::string &name, const std::string &op) {
  def(name, {}, kQuant, [op](const Node &n, Graph &g) {
    require(n, {0, 1, 3, 4, 6});
    Expansion e{g, n, {}};
    int r = e.add(op, {e.dq(0, 1, 2), e.dq(3, 4, 5)});
    e.q(r, 6, 7, in_val(g, n, 0).dtype);
    return e.nodes;
  });
}

// QLinearSigmoid, QLinearLeakyRelu (X, X_scale, X_zero_point, Y_scale,
// Y_zero_point): Y = Q(f(DQ(X))).
void def_unary(const std::string &name, const std::string &op, std::vector<std::string> attrs) {
  def(name, attrs, kQuant, [op](const Node &n, Graph &g) {
    require(n, {0, 1, 3});
    Expansion e{g, n, {}};
    std::map<std::string, Attr> a;
    if (op == "LeakyRelu") {
      Attr alpha;
      alpha.kind = Attr::Kind::Float;
      alpha.f = n.getf("alpha", 0.01f);
      a["alpha"] = alpha;
    }
    int r = e.add(op, {e.dq(0, 1, 2)}, a);
    e.q(r, 3, 4, in_val(g, n, 0).dtype);
    return e.nodes;
  });
}

// QLinearGlobalAveragePool (X, x_scale, x_zero_point, y_scale,
// y_zero_point; channels_last): the mean over the spatial axes, which
// follow the channel axis, or precede it with channels_last = 1.
void def_global_average_pool() {
  def("QLinearGlobalAveragePool", {"channels_last"}, kQuant, [](const Node &n, Graph &g) {
    require(n, {0, 1, 3});
    const Value &X = in_val(g, n, 0);
    if (X.rank() < 3) fail_invalid(n.where() + ": input rank must be >= 3");
    Expansion e{g, n, {}};
    int x = e.dq(0, 1, 2);
    bool last = n.geti("channels_last", 0) != 0;
    int r = X.rank();
    std::vector<int64_t> to_first = {0, r - 1}, to_last = {0};
    for (int i = 1; i < r - 1; ++i) to_first.push_back(i);
    for (int i = 2; i < r; ++i) to_last.push_back(i);
    to_last.push_back(1);
    if (last) x = e.add("Transpose", {x}, {{"perm", ints_attr(to_first)}});
    int p = e.add("GlobalAveragePool", {x});
    if (last) p = e.add("Transpose", {p}, {{"perm", ints_attr(to_last)}});
    e.q(p, 3, 4, X.dtype);
    return e.nodes;
  });
}

// QLinearConcat (Y_scale, Y_zero_point, then X, X_scale, X_zero_point per
// input; axis): Y = Q(Concat(DQ(X_i))).
void def_concat() {
  def("QLinearConcat", {"axis"}, {DType::F32}, [](const Node &n, Graph &g) {
    if (n.in.size() < 5 || (n.in.size() - 2) % 3 != 0)
      fail_invalid(n.where() + ": expected Y_scale, Y_zero_point and triples (X, X_scale, X_zero_point), got " +
                   std::to_string(n.in.size()) + " inputs");
    require(n, {0, 1});
    Expansion e{g, n, {}};
    std::vector<int> parts;
    for (size_t k = 2; k < n.in.size(); k += 3) {
      require(n, {k, k + 1, k + 2});
      parts.push_back(e.dq(k, k + 1, k + 2));
    }
    Attr axis;
    axis.i = n.geti("axis", 0);
    int c = e.add("Concat", parts, {{"axis", axis}});
    e.add("QuantizeLinear", {c, n.in[0], n.in[1]}, {}, n.out[0]);
    return e.nodes;
  });
}

// The per-column axis of B ([K, N], or [N, K] with transB) for a 1-D
// b_scale; 0 for a scalar.
Attr column_axis(const Graph &g, const Node &n, size_t scale, bool trans_b) {
  Attr a;
  a.i = in_val(g, n, scale).numel() == 1 ? 0 : (trans_b ? 0 : 1);
  return a;
}

// A constant's float values.
std::vector<double> floats(const Value &v) {
  std::vector<double> r((size_t)v.numel());
  for (int64_t i = 0; i < v.numel(); ++i) r[(size_t)i] = v.data->get_f(i);
  return r;
}

// QGemm (A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale,
// y_zero_point; alpha, transA, transB): Y = alpha * a_scale * b_scale[j] *
// (sum (A - a_zero)(B - b_zero) + C), C int32 at that scale; quantized
// with y_scale and y_zero_point when given, else float.
void def_qgemm() {
  def("QGemm", {"alpha", "transA", "transB"}, kQuant, [](const Node &n, Graph &g) {
    require(n, {0, 1, 2, 3, 4});
    bool tb = n.geti("transB", 0) != 0;
    double alpha = n.getf("alpha", 1.0f);
    Expansion e{g, n, {}};
    int a = e.dq(0, 1, 2), b = e.dq(3, 4, 5, {{"axis", column_axis(g, n, 4, tb)}});
    std::vector<int> ins = {a, b};
    if (n.has_in(6)) {
      // C as float at its scale alpha * a_scale * b_scale (per column).
      const Value &C = in_val(g, n, 6), &as = in_val(g, n, 1), &bs = in_val(g, n, 4);
      if (!C.is_const() || !as.is_const() || !bs.is_const())
        fail_unsupported(n.where() + ": C needs constant C, a_scale and b_scale");
      if (C.dtype != DType::I32) fail_invalid(n.where() + ": C has type " + dtype_name(C.dtype) + ", expected int32");
      const Value &B = in_val(g, n, 3);
      if (B.rank() != 2) fail_invalid(n.where() + ": B must be 2-D");
      int64_t N = tb ? B.shape[0] : B.shape[1];
      if (bs.numel() != 1 && bs.numel() != N)
        fail_invalid(n.where() + ": b_scale has " + std::to_string(bs.numel()) + " elements, expected 1 or " +
                     std::to_string(N));
      if (C.rank() > 2 || (C.rank() >= 1 && C.shape.back() != 1 && C.shape.back() != N))
        fail_invalid(n.where() + ": C of shape " + shape_str(C.shape) + " does not broadcast to [M, " +
                     std::to_string(N) + "]");
      // Broadcast C's columns to N so that each gets its column's scale.
      Shape cs = C.rank() == 2 ? Shape{C.shape[0], N} : Shape{N};
      int64_t rows = C.rank() == 2 ? C.shape[0] : 1, ccols = C.rank() >= 1 ? C.shape.back() : 1;
      std::vector<double> bv = floats(bs);
      std::vector<float> f((size_t)(rows * N));
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < N; ++j)
          f[(size_t)(i * N + j)] =
              (float)((double)(float)(alpha * as.data->get_f(0) * bv[bv.size() == 1 ? 0 : (size_t)j]) *
                      (double)C.data->get_i(i * ccols + (ccols == 1 ? 0 : j)));
      ins.push_back(g.add_const(g.fresh_name(n.name + "_C"), make_const_f32(cs, f)));
    }
    std::map<std::string, Attr> attrs;
    Attr al, ta, tbb;
    al.kind = Attr::Kind::Float;
    al.f = (float)alpha;
    ta.i = n.geti("transA", 0);
    tbb.i = tb;
    attrs = {{"alpha", al}, {"transA", ta}, {"transB", tbb}};
    if (!n.has_in(7)) {
      e.add("Gemm", ins, attrs, n.out[0]);
      return e.nodes;
    }
    int y = e.add("Gemm", ins, attrs);
    e.q(y, 7, 8, in_val(g, n, 0).dtype);
    return e.nodes;
  });
}

// MatMulIntegerToFloat (A, B, a_scale, b_scale, a_zero_point,
// b_zero_point, bias): Y = DQ(A) x DQ(B) + bias, b's scale and zero point
// per tensor or per column.
void def_matmul_integer_to_float() {
  def("MatMulIntegerToFloat", {}, kQuant, [](const Node &n, Graph &g) {
    require(n, {0, 1, 2, 3});
    Expansion e{g, n, {}};
    int a = e.dq(0, 2, 4), b = e.dq(1, 3, 5, {{"axis", column_axis(g, n, 3, false)}});
    if (!n.has_in(6)) {
      e.add("MatMul", {a, b}, {}, n.out[0]);
      return e.nodes;
    }
    int y = e.add("MatMul", {a, b});
    e.add("Add", {y, n.in[6]}, {}, n.out[0]);
    return e.nodes;
  });
}

}  // namespace

void register_contrib_quantization_ops() {
  def_binary("QLinearAdd", "Add");
  def_binary("QLinearMul", "Mul");
  def_unary("QLinearSigmoid", "Sigmoid", {});
  def_unary("QLinearLeakyRelu", "LeakyRelu", {"alpha"});
  def_global_average_pool();
  def_concat();
  def_qgemm();
  def_matmul_integer_to_float();
}

}  // namespace tinyrt

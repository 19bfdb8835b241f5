// recurrent.cpp — RNN, GRU and LSTM. With constant weights (the usual
// case) a layer is a GEMM for the input projection of all steps and one
// recurrent kernel looping over time (lower_rnn_loop). Otherwise it is
// unrolled over the (static) sequence
// length: per direction and time step, one kernel computes the gates'
// pre-activations (X_t W^T + H_{t-1} R^T + biases) and one the new state;
// sequence_lens hold a batch entry's state once its sequence has ended.
// Y gathers the per-step states. All gate orders, activations (with
// alpha/beta), clip, bidirectional and layout=1 follow the ONNX spec.
#include <cmath>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

struct Activation {
  std::string name;
  double alpha, beta;
};

// The elementwise ops' activation table (ops/elementwise.cpp), so a
// recurrent layer's Softplus is the same never-overflowing one.
ExprP activate(const Activation &a, ExprP x) {
  ExprP e = activation_expr(a.name, x, a.alpha, a.beta);
  if (!e) fail_unsupported("activation '" + a.name + "'");
  return e;
}

// Default alpha/beta per activation when the attribute lists are short.
void activation_defaults(const std::string &f, double *a, double *b) {
  *a = f == "LeakyRelu" ? 0.01 : f == "HardSigmoid" ? 0.2 : 1.0;
  *b = f == "HardSigmoid" ? 0.5 : f == "Affine" ? 0.0 : 1.0;
}

enum class Cell { RNN, GRU, LSTM };

struct Spec {
  Cell cell;
  int G;  // gates
  int64_t T, B, I, H;
  int D;  // directions
  bool layout1;
  std::vector<std::vector<Activation>> act;  // per direction: f, g, h
  double clip = 0;
};

// `w_shape`: W's shape in the ONNX layer's layout [D, G*H, I]; with
// `quantized` (com.microsoft.DynamicQuantizeLSTM) W and R are int8 and the
// caller checks them.
Spec spec_from(const Node &n, const Graph &g, Cell cell, const Shape &w_shape, bool quantized) {
  Spec s;
  s.cell = cell;
  s.G = cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
  const Value &x = in_val(g, n, 0);
  struct {
    Shape shape;
    DType dtype;
  } w{w_shape, quantized ? x.dtype : in_val(g, n, 1).dtype};
  if (x.rank() != 3 || w.shape.size() != 3) fail_invalid(n.where() + ": X and W must be 3-D");
  s.layout1 = n.geti("layout", 0) == 1;
  s.T = s.layout1 ? x.shape[1] : x.shape[0];
  s.B = s.layout1 ? x.shape[0] : x.shape[1];
  s.I = x.shape[2];
  std::string dir = n.gets("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    fail_invalid(n.where() + ": direction '" + dir + "'");
  s.D = dir == "bidirectional" ? 2 : 1;
  s.H = n.geti("hidden_size", w.shape[1] / s.G);
  if (s.H < 1 || w.shape[0] != s.D || w.shape[1] != s.G * s.H || w.shape[2] != s.I) {
    // As given: [D, G*H, I], or DynamicQuantizeLSTM's [D, I, G*H].
    auto given = [&](const Shape &v) { return quantized ? Shape{v[0], v[2], v[1]} : v; };
    fail_invalid(n.where() + ": W has shape " + shape_str(given(w.shape)) + ", expected " +
                 shape_str(given({s.D, s.G * std::max<int64_t>(s.H, 1), s.I})));
  }
  if (w.dtype != x.dtype)
    fail_invalid(n.where() + ": W has type " + dtype_name(w.dtype) + ", X has " + dtype_name(x.dtype));
  // Every other input's shape follows from (D, G, H, B): generated code
  // trusts them.
  auto expect = [&](size_t k, const char *name, Shape want) {
    if (!n.has_in(k)) return;
    const Value &v = in_val(g, n, k);
    if (v.shape != want)
      fail_invalid(n.where() + ": " + name + " has shape " + shape_str(v.shape) + ", expected " + shape_str(want));
    if (k != 4 && v.dtype != x.dtype)
      fail_invalid(n.where() + ": " + name + " has type " + dtype_name(v.dtype) + ", X has " + dtype_name(x.dtype));
  };
  if (!n.has_in(2)) fail_invalid(n.where() + ": R is missing");
  if (!quantized) expect(2, "R", {s.D, s.G * s.H, s.H});
  expect(3, "B", {s.D, 2 * s.G * s.H});
  expect(4, "sequence_lens", {s.B});
  Shape state = s.layout1 ? Shape{s.B, s.D, s.H} : Shape{s.D, s.B, s.H};
  expect(5, "initial_h", state);
  if (cell == Cell::LSTM) {
    expect(6, "initial_c", state);
    expect(7, "P", {s.D, 3 * s.H});
  }
  if (cell == Cell::LSTM && n.geti("input_forget", 0)) fail_unsupported(n.where() + ": input_forget=1");
  std::vector<std::string> names;
  for (auto &a : n.has("activations") ? n.attrs.at("activations").strings : std::vector<std::string>{})
    names.push_back(a);
  std::vector<std::string> defaults = cell == Cell::RNN   ? std::vector<std::string>{"Tanh"}
                                      : cell == Cell::GRU ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  size_t per = defaults.size();
  if (names.empty())
    for (int d = 0; d < s.D; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != per * s.D) fail_invalid(n.where() + ": expected " + std::to_string(per * s.D) + " activations");
  std::vector<float> al = n.getfloats("activation_alpha"), be = n.getfloats("activation_beta");
  s.act.resize(s.D);
  for (size_t k = 0; k < names.size(); ++k) {
    Activation a{names[k], 0, 0};
    activation_defaults(a.name, &a.alpha, &a.beta);
    if (k < al.size()) a.alpha = al[k];
    if (k < be.size()) a.beta = be[k];
    activate(a, cst(DType::F32, 0));  // validates the name
    s.act[k / per].push_back(a);
  }
  s.clip = n.getf("clip", 0.0f);
  return s;
}

Spec spec_of(const Node &n, const Graph &g, Cell cell) {
  const Value &w = in_val(g, n, 1);
  return spec_from(n, g, cell, w.shape, false);
}

struct Inputs {  // value ids, -1 when absent
  int x, w, r, b = -1, lens = -1, h0 = -1, c0 = -1, p = -1;
};

// Weights of a dynamically quantized layer, in the ONNX layer's layout:
// W [D, G*H, I] and R [D, G*H, H] as int8 in [-127, 127] with one float
// scale per row (an output channel of the projection, a gate unit of the
// recurrence).
struct DynWeights {
  std::vector<int8_t> w, r;
  std::vector<float> w_scale, r_scale;
};

// The fast path: X W^T + biases for all steps as one GEMM, then one
// recurrent kernel looping over time (ir/program.h, RecurrentSpec).
// Needs constant weights and biases; sequence lengths below T (constant
// or run-time) hold a batch entry's state from its length on.
// With `q`, the weights are q's int8 ones: the projection quantizes X per
// row and runs in the int8 GEMM, the recurrence quantizes the state at
// every step (RecurrentSpec::r_scale).
bool lower_rnn_loop(const Node &n, LowerCtx &c, Cell cell, const Spec &s, const DynWeights *q = nullptr) {
  Graph &g = c.g;
  const Value &X = in_val(g, n, 0), &W = in_val(g, n, 1), &R = in_val(g, n, 2);
  DType t = X.dtype;
  if (t != DType::F32 || X.is_const() || (!q && (!W.is_const() || !R.is_const()))) return false;
  if (n.has_in(3) && !in_val(g, n, 3).is_const()) return false;
  if (cell == Cell::LSTM && n.has_in(7) && !in_val(g, n, 7).is_const()) return false;
  // Constant sequence lengths of at least T (its bound) change nothing.
  bool lens = n.has_in(4);
  if (lens && in_val(g, n, 4).is_const()) {
    lens = false;
    for (int64_t b = 0; b < s.B; ++b) lens = lens || in_val(g, n, 4).data->get_i(b) < s.T;
  }
  int64_t H = s.H, G = s.G, D = s.D, I = s.I, DGH = D * G * H;
  bool lbr = cell == Cell::GRU && n.geti("linear_before_reset", 0) != 0;
  // Biases of the projection: Wb + Rb, except GRU's Rb_h with
  // linear_before_reset (it is scaled by r inside the cell).
  std::vector<float> bias((size_t)DGH, 0.f), rbh;
  if (n.has_in(3)) {
    const Value &B = in_val(g, n, 3);
    for (int64_t d = 0; d < D; ++d)
      for (int64_t gj = 0; gj < G * H; ++gj) {
        double wb = B.data->get_f(d * 2 * G * H + gj), rb = B.data->get_f(d * 2 * G * H + G * H + gj);
        bool keep_rb = !(lbr && gj >= 2 * H);
        bias[(size_t)(d * G * H + gj)] = (float)(wb + (keep_rb ? rb : 0.0));
        if (lbr && gj >= 2 * H) rbh.push_back((float)rb);
      }
  }
  // XW[time, b, (d*G + gate)*H + j]: a GEMM with the time steps as rows.
  int wv =
      q ? g.add_const(g.fresh_name(W.name + "_q"), make_const(DType::I8, {DGH, I}, Bytes(q->w.begin(), q->w.end())))
        : g.add_const(g.fresh_name(W.name + "_rows"), make_const(DType::F32, {DGH, I}, W.data->bytes));
  int bv = g.add_const(g.fresh_name(W.name + "_bias"), make_const_f32({DGH}, bias));
  int xw = c.temp("rnn_xw", t, {s.T, s.B, DGH});
  GemmSpec gs;
  gs.in_c = I;
  gs.out_c = DGH;
  gs.weight = wv;
  gs.in_w = gs.out_w = s.T;
  gs.in_h = gs.out_h = s.B;
  gs.out_axis[0] = -1, gs.out_axis[1] = 2, gs.out_axis[2] = 1, gs.out_axis[3] = 0;
  gs.in_axis[0] = -1, gs.in_axis[1] = 2, gs.in_axis[2] = s.layout1 ? 0 : 1, gs.in_axis[3] = s.layout1 ? 1 : 0;
  ExprP k = var(kFirstReduceVar);
  std::vector<ExprP> xi = s.layout1 ? std::vector<ExprP>{var(1), var(0), k} : std::vector<ExprP>{var(0), var(1), k};
  ExprP bias_e = load(2, t, {var(2)});
  if (q) {
    // Rows of X (the last axis) quantized by their own max |x|; the sums
    // scaled back by (row max / 127) * (W's row scale).
    DynamicRows rows = quantize_activation_rows(c, n.in[0]);
    int absmax = rows.absmax, xq = rows.q;
    int wsv = g.add_const(g.fresh_name(W.name + "_scale"), make_const_f32({DGH}, q->w_scale));
    ExprP row_max = s.layout1 ? load(3, t, {var(1), var(0)}) : load(3, t, {var(0), var(1)});
    auto scaled = [&](ExprP sum) {
      return cast(sum, t) * (row_max * cst(t, 1.0 / 127) * load(4, t, {var(2)})) + bias_e;
    };
    gs.epilogue = scaled(acc(DType::I32));
    ExprP sum = reduce(ReduceKind::Sum, {{kFirstReduceVar, I}},
                       cast(load(0, DType::I8, xi), DType::I32) * cast(load(1, DType::I8, {var(2), k}), DType::I32));
    c.scheduled(KernelKind::QGemm, xw, {xq, wv, bv, absmax, wsv}, scaled(sum), gs);
  } else {
    gs.epilogue = acc(t) + bias_e;
    ExprP proj = reduce(ReduceKind::Sum, {{kFirstReduceVar, I}}, load(0, t, xi) * load(1, t, {var(2), k})) + bias_e;
    c.scheduled(KernelKind::Gemm, xw, {n.in[0], wv, bv}, proj, gs);
  }

  RecurrentSpec r;
  r.cell = cell == Cell::RNN ? CellKind::RNN : cell == Cell::GRU ? CellKind::GRU : CellKind::LSTM;
  r.T = s.T, r.B = s.B, r.H = H, r.D = s.D, r.G = s.G;
  r.reverse = n.gets("direction", "forward") == "reverse";
  r.linear_before_reset = lbr;
  r.layout1 = s.layout1;
  r.r = n.in[2];
  r.width = cell == Cell::LSTM ? 2 * H : cell == Cell::GRU && !lbr ? 3 * H : H;
  if (q) {
    r.r =
        g.add_const(g.fresh_name(R.name + "_q"), make_const(DType::I8, {D, G * H, H}, Bytes(q->r.begin(), q->r.end())));
    r.r_scale = g.add_const(g.fresh_name(R.name + "_scale"), make_const_f32({D, G * H}, q->r_scale));
    r.q_offset = r.width;
    r.width += (H + 3) / 4;  // the quantized state: H bytes, whole quads
  }
  auto clip = [&](ExprP v) { return s.clip > 0 ? emax(cst(t, -s.clip), emin(cst(t, s.clip), v)) : v; };
  for (int d = 0; d < s.D; ++d) {
    std::vector<ExprP> fs;
    for (const Activation &a : s.act[d]) fs.push_back(activate(a, clip(acc(t))));
    r.act.push_back(fs);
  }
  std::vector<int> ins = {xw};
  auto slot = [&](int v) {
    ins.push_back(v);
    return (int)ins.size() - 1;
  };
  if (n.has_in(5)) r.h0 = slot(n.in[5]);
  if (cell == Cell::LSTM && n.has_in(6)) r.c0 = slot(n.in[6]);
  if (cell == Cell::LSTM && n.has_in(7)) r.p = slot(n.in[7]);
  if (!rbh.empty()) r.rbh = slot(g.add_const(g.fresh_name(W.name + "_rbh"), make_const_f32({D, H}, rbh)));
  if (lens) r.lens = slot(n.in[4]);
  int state = c.temp("rnn_state", t, {s.T, s.D, s.B, r.width});
  const int t_axis = s.layout1 ? 1 : 0;
  if (in_val(g, n, 0).dim(t_axis) >= 0) {  // a run-time T: the states of the actual steps
    g.v(state).dims = {in_val(g, n, 0).dim(t_axis), -1, -1, -1};
    g.v(xw).dims = {in_val(g, n, 0).dim(t_axis), -1, -1};
  }
  const ExprP T_last = g.extent(n.in[0], t_axis) - 1;
  c.recurrent(state, ins, r);

  // Y [T, D, B, H] (layout 1: [B, T, D, H]); Y_h, Y_c [D, B, H] ([B, D, H]):
  // the state of the last step each direction processed.
  // With layout 0 and a state of h alone (RNN, GRU with linear_before_reset)
  // Y is the state itself.
  // With sequence lengths, Y is 0 from a batch entry's length on.
  if (n.out.size() > 0 && n.out[0] >= 0) {
    ExprP time = s.layout1 ? var(1) : var(0), batch = s.layout1 ? var(0) : var(2);
    ExprP y = s.layout1 ? load(0, t, {var(1), var(2), var(0), var(3)}) : load(0, t, {var(0), var(1), var(2), var(3)});
    if (lens)
      c.kernel(n.out[0], {state, n.in[4]},
               select(lt(time, cast(load(1, DType::I32, {batch}), kIndexType)), y, cst(t, 0)));
    else if (!s.layout1 && r.width == H)
      c.alias(n.out[0], state);
    else
      c.kernel(n.out[0], {state}, y);
  }
  auto last = [&](ExprP d) {
    if (s.D == 2)
      return T_last->is_const() ? T_last - d * T_last : T_last * (cidx(1) - d);  // forward: T-1, backward: 0
    return r.reverse ? cidx(0) : T_last;
  };
  auto final_state = [&](int out, int64_t off) {
    if (out < 0) return;
    ExprP d = s.layout1 ? var(1) : var(0), b = s.layout1 ? var(0) : var(1);
    c.kernel(out, {state}, load(0, t, {last(d), d, b, var(2) + cidx(off)}));
  };
  if (n.out.size() > 1) final_state(n.out[1], 0);
  if (cell == Cell::LSTM && n.out.size() > 2) final_state(n.out[2], H);
  return true;
}

// --quantize dynamic's mark: W and R (constant float) as int8 rows.
bool lower_rnn_dynamic(const Node &n, LowerCtx &c, Cell cell, const Spec &s) {
  const Value &W = in_val(c.g, n, 1), &R = in_val(c.g, n, 2);
  if (!n.geti(kQuantizeDynamicAttr, 0) || !W.is_const() || !R.is_const()) return false;
  auto floats = [](const Value &v) {
    std::vector<double> r((size_t)v.numel());
    for (int64_t i = 0; i < v.numel(); ++i) r[(size_t)i] = v.data->get_f(i);
    return r;
  };
  DynWeights q;
  int64_t rows = s.D * s.G * s.H;
  // The mark's value: the weights' largest magnitude (quantize_dynamic
  // writes 127 or 63; a model file cannot set the attribute).
  int qmax = (int)n.geti(kQuantizeDynamicAttr, 127);
  quantize_rows(floats(W), rows, s.I, &q.w, &q.w_scale, qmax);
  quantize_rows(floats(R), rows, s.H, &q.r, &q.r_scale, qmax);
  return lower_rnn_loop(n, c, cell, s, &q);
}

// The fallback: every time step unrolled into loop kernels (the gate
// pre-activations, GRU's recurrent product of the h gate, the new cell and
// hidden state, a masked copy for Y past a sequence's end), then Y, Y_h and
// Y_c gathered from the steps' states.
class UnrolledRnn {
 public:
  UnrolledRnn(const Node &n, LowerCtx &c, Cell cell, const Spec &s)
      : n_(n), c_(c), cell_(cell), s_(s), in_{n.in[0], n.in[1], n.in[2]} {
    if (n.has_in(3)) in_.b = n.in[3];
    if (n.has_in(4)) in_.lens = n.in[4];
    if (n.has_in(5)) in_.h0 = n.in[5];
    if (cell == Cell::LSTM && n.has_in(6)) in_.c0 = n.in[6];
    if (cell == Cell::LSTM && n.has_in(7)) in_.p = n.in[7];
    t_ = c.g.v(in_.x).dtype;
    gru_lbr_ = cell == Cell::GRU && n.geti("linear_before_reset", 0) != 0;
  }

  void lower() {
    std::vector<std::vector<int>> states(s_.D);  // per direction, per time
    std::vector<int> last_h(s_.D), last_c(s_.D);
    for (int d = 0; d < s_.D; ++d) direction(d, &states[d], &last_h[d], &last_c[d]);
    if (n_.out.size() > 0 && n_.out[0] >= 0) sequence_output(states);
    if (n_.out.size() > 1) final_states(n_.out[1], last_h);
    if (cell_ == Cell::LSTM && n_.out.size() > 2) final_states(n_.out[2], last_c);
  }

 private:
  ExprP clip(ExprP v) const { return s_.clip > 0 ? emax(cst(t_, -s_.clip), emin(cst(t_, s_.clip), v)) : v; }
  // X element [time, batch, k] regardless of layout.
  std::vector<ExprP> xidx(int64_t time, ExprP b, ExprP k) const {
    return s_.layout1 ? std::vector<ExprP>{b, cidx(time), k} : std::vector<ExprP>{cidx(time), b, k};
  }

  // Direction d's initial states, then its steps in processing order;
  // (*states)[time] is the state Y shows at `time`.
  void direction(int d, std::vector<int> *states, int *last_h, int *last_c) {
    bool reverse = n_.gets("direction", "forward") == "reverse" || d == 1;
    // Initial state (zeros unless given).
    int h = c_.temp("rnn_h0", t_, {s_.B, s_.H});
    if (in_.h0 >= 0)
      c_.kernel(h, {in_.h0}, load(0, t_, {cidx(d), var(0), var(1)}));
    else
      c_.kernel(h, {}, cst(t_, 0));
    int cs = -1;
    if (cell_ == Cell::LSTM) {
      cs = c_.temp("rnn_c0", t_, {s_.B, s_.H});
      if (in_.c0 >= 0)
        c_.kernel(cs, {in_.c0}, load(0, t_, {cidx(d), var(0), var(1)}));
      else
        c_.kernel(cs, {}, cst(t_, 0));
    }
    states->assign(s_.T, -1);
    for (int64_t step = 0; step < s_.T; ++step) {
      int64_t time = reverse ? s_.T - 1 - step : step;
      (*states)[time] = this->step(d, time, &h, &cs);
    }
    *last_h = h;
    *last_c = cs;
  }

  // Gate pre-activations [batch, G*H] of direction d at `time`.
  int gates(int d, int64_t time, int h) {
    int64_t H = s_.H, G = s_.G;
    // Slots x, w, r, h, [b].
    std::vector<int> gins = {in_.x, in_.w, in_.r, h};
    if (in_.b >= 0) gins.push_back(in_.b);
    ExprP b = var(0), gj = var(1);  // gj = gate * H + j
    ExprP k = var(kFirstReduceVar);
    ExprP xw = reduce(ReduceKind::Sum, {{kFirstReduceVar, s_.I}},
                      load(0, t_, xidx(time, b, k)) * load(1, t_, {cidx(d), gj, k}));
    ExprP hr = reduce(ReduceKind::Sum, {{kFirstReduceVar, H}}, load(3, t_, {b, k}) * load(2, t_, {cidx(d), gj, k}));
    ExprP wb = in_.b >= 0 ? load(4, t_, {cidx(d), gj}) : cst(t_, 0);
    ExprP rb = in_.b >= 0 ? load(4, t_, {cidx(d), gj + cidx(G * H)}) : cst(t_, 0);
    // GRU without linear_before_reset computes the h gate after r (below).
    ExprP pre;
    if (cell_ == Cell::GRU) {
      ExprP is_h = bin(EOp::Ge, gj, cidx(2 * H));
      if (gru_lbr_) {
        // keep the parts apart: X Wh + Wbh and (H Rh + Rbh) are combined with r later
        pre = xw + hr + wb + rb;
      } else {
        pre = select(is_h, xw + wb, xw + hr + wb + rb);
      }
    } else {
      pre = xw + hr + wb + rb;
    }
    int g = c_.temp("rnn_gates", t_, {s_.B, G * H});
    c_.kernel(g, gins, pre);
    return g;
  }

  // GRU: H_{t-1} Rh^T + Rbh, needed apart from the gates ((r .* H_{t-1})
  // Rh^T + Rbh without linear_before_reset, which reads r from the gates).
  int gru_recurrent_h(int d, int h, int gates) {
    int64_t H = s_.H;
    const std::vector<Activation> &act = s_.act[d];
    ExprP k = var(kFirstReduceVar);
    int hr_h = c_.temp("rnn_hr", t_, {s_.B, H});
    std::vector<int> ins = {in_.r, h};
    if (in_.b >= 0) ins.push_back(in_.b);
    ExprP j = var(1);
    ExprP v = reduce(ReduceKind::Sum, {{kFirstReduceVar, H}},
                     load(1, t_, {var(0), k}) * load(0, t_, {cidx(d), j + cidx(2 * H), k}));
    if (in_.b >= 0) v = v + load(2, t_, {cidx(d), j + cidx(5 * H)});
    if (gru_lbr_) {
      c_.kernel(hr_h, ins, v);
    } else {
      ins.push_back(gates);
      int gs = (int)ins.size() - 1;
      ExprP rgate = clip(load(gs, t_, {var(0), k + cidx(H)}));
      ExprP rr = activate(act[0], rgate);
      ExprP v2 = reduce(ReduceKind::Sum, {{kFirstReduceVar, H}},
                        rr * load(1, t_, {var(0), k}) * load(0, t_, {cidx(d), j + cidx(2 * H), k}));
      if (in_.b >= 0) v2 = v2 + load(2, t_, {cidx(d), j + cidx(5 * H)});
      c_.kernel(hr_h, ins, v2);
    }
    return hr_h;
  }

  // One step of direction d at `time`: the new state (and LSTM's cell)
  // replace *h (and *cs); returns the value Y shows for this step.
  int step(int d, int64_t time, int *h, int *cs) {
    int64_t H = s_.H;
    const std::vector<Activation> &act = s_.act[d];
    int g = gates(d, time, *h);
    int hr_h = cell_ == Cell::GRU ? gru_recurrent_h(d, *h, g) : -1;
    // New state [batch, H]: slots gates, h, [c], [p], [lens], [hr_h]
    std::vector<int> sins = {g, *h};
    ExprP bj = var(0), j = var(1);
    auto gate = [&](int gi) { return clip(load(0, t_, {bj, j + cidx(gi * H)})); };
    ExprP hprev = load(1, t_, {bj, j});
    int cslot = -1, pslot = -1, lslot = -1, hrslot = -1;
    if (cell_ == Cell::LSTM) {
      sins.push_back(*cs);
      cslot = (int)sins.size() - 1;
      if (in_.p >= 0) {
        sins.push_back(in_.p);
        pslot = (int)sins.size() - 1;
      }
    }
    if (in_.lens >= 0) {
      sins.push_back(in_.lens);
      lslot = (int)sins.size() - 1;
    }
    if (hr_h >= 0) {
      sins.push_back(hr_h);
      hrslot = (int)sins.size() - 1;
    }
    ExprP valid =
        lslot >= 0 ? lt(cidx(time), cast(load(lslot, c_.g.v(in_.lens).dtype, {bj}), kIndexType)) : cbool(true);
    ExprP hnew, cnew;
    if (cell_ == Cell::RNN) {
      hnew = activate(act[0], gate(0));
    } else if (cell_ == Cell::GRU) {
      ExprP z = activate(act[0], gate(0));
      ExprP hh;
      if (gru_lbr_) {
        ExprP r = activate(act[0], gate(1));
        // gates[2H + j] holds X Wh + Wbh + H Rh + Rbh; take H Rh + Rbh out and scale it by r
        ExprP xpart = load(0, t_, {bj, j + cidx(2 * H)}) - load(hrslot, t_, {bj, j});
        hh = activate(act[1], clip(xpart + r * load(hrslot, t_, {bj, j})));
      } else {
        hh = activate(act[1], clip(load(0, t_, {bj, j + cidx(2 * H)}) + load(hrslot, t_, {bj, j})));
      }
      hnew = (cst(t_, 1) - z) * hh + z * hprev;
    } else {
      ExprP cprev = load(cslot, t_, {bj, j});
      auto peep = [&](int k2) {
        return pslot >= 0 ? load(pslot, t_, {cidx(d), j + cidx(k2 * H)}) * cprev : cst(t_, 0);
      };
      ExprP i = activate(act[0], clip(load(0, t_, {bj, j}) + peep(0)));
      ExprP f = activate(act[0], clip(load(0, t_, {bj, j + cidx(2 * H)}) + peep(2)));
      ExprP cc = activate(act[1], gate(3));
      cnew = f * cprev + i * cc;
      ExprP po = pslot >= 0 ? load(pslot, t_, {cidx(d), j + cidx(H)}) * cnew : cst(t_, 0);
      ExprP o = activate(act[0], clip(load(0, t_, {bj, j + cidx(H)}) + po));
      hnew = o * activate(act[2], cnew);
      int c2 = c_.temp("rnn_c", t_, {s_.B, H});
      c_.kernel(c2, sins, select(valid, cnew, cprev));
      *cs = c2;
    }
    int h2 = c_.temp("rnn_h", t_, {s_.B, H});
    c_.kernel(h2, sins, select(valid, hnew, hprev));
    *h = h2;
    // Y is 0 past a sequence's end: keep a masked copy for it.
    if (lslot < 0) return h2;
    int yv = c_.temp("rnn_y", t_, {s_.B, H});
    c_.kernel(yv, {h2, in_.lens},
              select(lt(cidx(time), cast(load(1, c_.g.v(in_.lens).dtype, {var(0)}), kIndexType)),
                     load(0, t_, {var(0), var(1)}), cst(t_, 0)));
    return yv;
  }

  // Y: [T, D, B, H] or [B, T, D, H] from the per-step states.
  void sequence_output(const std::vector<std::vector<int>> &states) {
    std::vector<int> ins;
    ExprP e;
    for (int d = s_.D; d-- > 0;)
      for (int64_t time = s_.T; time-- > 0;) {
        ins.push_back(states[d][time]);
        ExprP v = s_.layout1 ? load((int)ins.size() - 1, t_, {var(0), var(3)})
                             : load((int)ins.size() - 1, t_, {var(2), var(3)});
        ExprP here = s_.layout1 ? land(bin(EOp::Eq, var(1), cidx(time)), bin(EOp::Eq, var(2), cidx(d)))
                                : land(bin(EOp::Eq, var(0), cidx(time)), bin(EOp::Eq, var(1), cidx(d)));
        e = e ? select(here, v, e) : v;
      }
    c_.kernel(n_.out[0], ins, e);
  }

  // Y_h (and Y_c): [D, B, H] or [B, D, H] from each direction's last state.
  void final_states(int out, const std::vector<int> &vals) {
    if (out < 0) return;
    ExprP e;
    std::vector<int> ins;
    for (int d = s_.D; d-- > 0;) {
      ins.push_back(vals[d]);
      ExprP v = s_.layout1 ? load((int)ins.size() - 1, t_, {var(0), var(2)})
                           : load((int)ins.size() - 1, t_, {var(1), var(2)});
      e = e ? select(bin(EOp::Eq, s_.layout1 ? var(1) : var(0), cidx(d)), v, e) : v;
    }
    c_.kernel(out, ins, e);
  }

  const Node &n_;
  LowerCtx &c_;
  Cell cell_;
  const Spec &s_;
  Inputs in_;
  DType t_;
  bool gru_lbr_;
};

void lower_rnn(const Node &n, LowerCtx &c, Cell cell) {
  Spec s = spec_of(n, c.g, cell);
  if (lower_rnn_dynamic(n, c, cell, s) || lower_rnn_loop(n, c, cell, s)) return;
  if (in_val(c.g, n, 0).is_dynamic())
    fail_unsupported(n.where() +
                     ": a run-time sequence length needs constant weights and biases (the recurrent "
                     "loop); this layer would be unrolled step by step");
  if (s.T * s.D > c.g.limits.max_expanded_nodes / 8)
    fail_unsupported(n.where() + ": " + std::to_string(s.T) +
                     " time steps exceed the unrolling limit (--max-expanded-nodes " +
                     std::to_string(c.g.limits.max_expanded_nodes) + ")");
  UnrolledRnn(n, c, cell, s).lower();
}

void def_rnn(const std::string &name, Cell cell) {
  OpDef d;
  d.name = name;
  d.min_opset = 7;
  d.attrs = {"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout"};
  if (cell == Cell::GRU) d.attrs.push_back("linear_before_reset");
  if (cell == Cell::LSTM) d.attrs.push_back("input_forget");
  d.types = {DType::F32, DType::F64};
  d.infer = [cell](Node &n, Graph &g) {
    Spec s = spec_of(n, g, cell);
    DType t = in_val(g, n, 0).dtype;
    set_out(n, g, 0, t, s.layout1 ? Shape{s.B, s.T, s.D, s.H} : Shape{s.T, s.D, s.B, s.H});
    Shape fin = s.layout1 ? Shape{s.B, s.D, s.H} : Shape{s.D, s.B, s.H};
    set_out(n, g, 1, t, fin);
    if (cell == Cell::LSTM) set_out(n, g, 2, t, fin);
  };
  d.lower = [cell](const Node &n, LowerCtx &c) { lower_rnn(n, c, cell); };
  // A run-time sequence length T: Y takes it, Y_h and Y_c do not (the loop
  // over time runs the actual steps, the recurrent emitter reads T).
  d.dims = [cell](Node &n, Graph &g) {
    Spec s = spec_of(n, g, cell);
    const Value &X = in_val(g, n, 0);
    const int t_axis = s.layout1 ? 1 : 0;
    for (int a = 0; a < X.rank(); ++a)
      if (X.dim(a) >= 0 && a != t_axis)
        fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], a) +
                         ": only the sequence length may be a run-time dimension");
    for (size_t k = 1; k < n.in.size(); ++k)
      if (n.has_in(k) && g.v(n.in[k]).is_dynamic())
        fail_unsupported(n.where() + ": input " + std::to_string(k) +
                         " with a run-time sequence length: not supported yet");
    if (n.out.size() > 0 && n.out[0] >= 0) {
      Value &Y = g.v(n.out[0]);
      Y.dims.assign(4, -1);
      Y.dims[(size_t)t_axis] = X.dim(t_axis);
      if (!Y.is_dynamic()) Y.dims.clear();
    }
  };
  register_op(std::move(d));
}

// com.microsoft.DynamicQuantizeLSTM, ONNX Runtime's dynamically quantized
// LSTM (what its quantize_dynamic writes, and what `--quantize dynamic`
// turns an LSTM into): the inputs of LSTM (no layout attribute) with W as
// [D, I, 4H] and R as [D, H, 4H], int8 or uint8, then W_scale,
// W_zero_point, R_scale, R_zero_point, each [D] (per tensor) or [D, 4H]
// (per column).
Spec dq_lstm_spec(const Node &n, const Graph &g) {
  for (size_t k : {1, 2, 8, 9, 10, 11})
    if (!n.has_in(k)) fail_invalid(n.where() + ": input " + std::to_string(k) + " is missing");
  const Value &W = in_val(g, n, 1), &R = in_val(g, n, 2);
  if (W.rank() != 3 || R.rank() != 3) fail_invalid(n.where() + ": W and R must be 3-D");
  Spec s = spec_from(n, g, Cell::LSTM, {W.shape[0], W.shape[2], W.shape[1]}, true);
  int64_t GH = s.G * s.H;
  if (R.shape != Shape{s.D, s.H, GH})
    fail_invalid(n.where() + ": R has shape " + shape_str(R.shape) + ", expected " + shape_str({s.D, s.H, GH}));
  const char *names[] = {"W_scale", "W_zero_point", "R_scale", "R_zero_point"};
  for (int k = 0; k < 4; ++k) {
    const Value &v = in_val(g, n, 8 + (size_t)k), &m = k < 2 ? W : R;
    DType want = k % 2 ? m.dtype : DType::F32;
    if (m.dtype != DType::I8 && m.dtype != DType::U8)
      fail_invalid(n.where() + ": " + (k < 2 ? "W" : "R") + " has type " + dtype_name(m.dtype) +
                   ", expected int8 or uint8");
    if (v.dtype != want)
      fail_invalid(n.where() + ": " + names[k] + " has type " + dtype_name(v.dtype) + ", expected " + dtype_name(want));
    if (v.shape != Shape{s.D} && v.shape != Shape{s.D, GH})
      fail_invalid(n.where() + ": " + names[k] + " has shape " + shape_str(v.shape) + ", expected " + shape_str({s.D}) +
                   " or " + shape_str({s.D, GH}));
  }
  return s;
}

// A DynamicQuantizeLSTM's weights as rows of the LSTM layout. A row whose
// values minus their zero point fit int8 keeps them and its scale exactly;
// another is dequantized and quantized again symmetrically.
DynWeights dq_lstm_weights(const Node &n, const Graph &g, const Spec &s) {
  for (size_t k : {1, 2, 8, 9, 10, 11})
    if (!in_val(g, n, k).is_const())
      fail_unsupported(n.where() + ": input " + std::to_string(k) +
                       " (weights, scales, zero points) must be a constant");
  DynWeights q;
  int64_t GH = s.G * s.H;
  // Row (d, j) of the LSTM layout is column j of direction d here.
  auto rows = [&](size_t mi, size_t si, size_t zi, int64_t K, std::vector<int8_t> *out, std::vector<float> *scale) {
    const Value &M = in_val(g, n, mi), &S = in_val(g, n, si), &Z = in_val(g, n, zi);
    auto param = [&](int64_t row) { return S.numel() == s.D ? row / GH : row; };
    int8_rows(
        s.D * GH, K, [&](int64_t row, int64_t k) { return M.data->get_i((row / GH * K + k) * GH + row % GH); },
        [&](int64_t row) { return S.data->get_f(param(row)); }, [&](int64_t row) { return Z.data->get_i(param(row)); },
        out, scale);
  };
  rows(1, 8, 9, s.I, &q.w, &q.w_scale);
  rows(2, 10, 11, s.H, &q.r, &q.r_scale);
  return q;
}

void def_dynamic_quantize_lstm() {
  OpDef d;
  d.name = "DynamicQuantizeLSTM";
  d.domain = "com.microsoft";
  d.attrs = {"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "input_forget"};
  d.types = {DType::F32};
  d.infer = [](Node &n, Graph &g) {
    Spec s = dq_lstm_spec(n, g);
    set_out(n, g, 0, DType::F32, {s.T, s.D, s.B, s.H});
    set_out(n, g, 1, DType::F32, {s.D, s.B, s.H});
    set_out(n, g, 2, DType::F32, {s.D, s.B, s.H});
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    Spec s = dq_lstm_spec(n, c.g);
    DynWeights q = dq_lstm_weights(n, c.g, s);
    if (lower_rnn_loop(n, c, Cell::LSTM, s, &q)) return;
    // Not the loop's case (sequence lengths below T, biases or peepholes
    // computed at run time): the float LSTM over the dequantized weights.
    Node m = n;
    m.op = "LSTM";
    m.domain.clear();
    m.in.resize(std::min<size_t>(m.in.size(), 8));
    auto dequantized = [&](const std::vector<int8_t> &v, const std::vector<float> &sc, int64_t K, const char *what) {
      std::vector<float> f(v.size());
      for (size_t i = 0; i < v.size(); ++i) f[i] = (float)v[i] * sc[i / (size_t)K];
      return c.g.add_const(c.g.fresh_name(n.name + what), make_const_f32({s.D, s.G * s.H, K}, f));
    };
    m.in[1] = dequantized(q.w, q.w_scale, s.I, "_W");
    m.in[2] = dequantized(q.r, q.r_scale, s.H, "_R");
    lower_rnn(m, c, Cell::LSTM);
  };
  register_op(std::move(d));
}

}  // namespace

void register_recurrent_ops() {
  def_rnn("RNN", Cell::RNN);
  def_rnn("GRU", Cell::GRU);
  def_rnn("LSTM", Cell::LSTM);
  def_dynamic_quantize_lstm();
}

}  // namespace tinyrt

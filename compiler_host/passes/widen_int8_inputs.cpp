// widen_int8_inputs.cpp — on x86 without VNNI, an int8 convolution (any
// window, groups 1; or an int8 matrix product) whose weights must be multiplied as signed
// bytes or widened (MaddForm: a pair of its weights can overflow
// vpmaddubsw's 16 bits) reads a copy of its input widened to int16 with
// the zero point subtracted, and multiplies int16 pairs instead
// (GemmSpec::i16 with w8: vpmaddwd of a broadcast input pair by a weight
// vector sign-extended from its int8 bytes as it loads). Exact like every
// form: |x - x_zero| <= 255 and |w| <= 128 give pairs of at most 65280.
//
// Why: a signed-bytes step spends, per 256 products, 32 vector
// instructions on the products (vpsignb, vpmaddubsw, vpmaddwd, vpaddd per
// register) and 4 per row on the input quad (vmovd, vpxor, vpbroadcastd,
// vpabsb); over int16 pairs it is vpmaddwd and vpaddd per register and a
// broadcast load per row, and one vpmovsxbw per weight vector that every
// row of the tile shares. Measured on Zen 4's AVX2 (one 512-input K loop
// in L1, instructions as the emitter generates them): 3.0 ns per 256
// products for int16 pairs (6x2 tile) against 3.6 for signed bytes (its
// best tile, 2x4 or 1x8).
//
// The copy is a loop kernel placed before the convolution, dense
// channels-last [batch, out_h, out_w, channels] (a strided 1x1
// convolution's copy keeps the pixels it reads: the product becomes stride
// 1), its channels padded to even with zeros. A first layer over few
// channels (k_run: pad_conv_rows' padded copy, each kernel row one run of
// inputs) has its padded copy made int16 instead, its channels padded to
// even (an RGB image's 3 to 4), so that a row's run is whole pairs. It costs arena: 2 bytes per
// input element, live at two steps; a layer takes it only when the bytes
// live at its step and the copy fit the arena budget (Limits::arena_budget,
// the budget Winograd's forms keep within), and only for at least
// Target::int16_inputs_min_out_c output channels (fewer amortize the
// copy's pass over the input too little; a first layer's, from
// Target::int16_run_min_out_c). Each choice is a memory trade
// (-v, the JSON's memory_trades: kind "int16-input", its arena bytes).
// Narrower first layers (Target::float_run_max_out_c) compute exactly in
// float over a float padded copy instead (float_run below; a
// "float-input" memory trade under the same budget).
// Each reader of an input gets its own copy (an inception block's 1x1
// branches widen the same input once each): sharing one would stretch its
// live range over the steps between them, which the budget would have to
// hold at each.
#include <algorithm>
#include <cstring>

#include "passes/pass.h"

namespace tinyrt {

namespace {

// Every axis of X is one of its roles (a convolution's NCHW, or a
// matrix product's rows and channels): the copy's index maps from roles.
bool every_axis_a_role(const GemmSpec &s, const Value &x) {
  int roles = 0;
  for (int r = 0; r < 4; ++r) roles += s.in_axis[r] >= 0;
  return roles == x.rank();
}

// Whether kernel k takes int16 pairs; *form: the form pack_weights would
// otherwise choose (signed bytes or widened).
bool applies(const Program &p, const Kernel &k, const Target &t, MaddForm *form) {
  if (k.kind != KernelKind::QGemm || t.dot_i8 != DotI8::X86Madd || t.int16_inputs_min_out_c <= 0) return false;
  const GemmSpec &s = k.gemm;
  const Graph &g = p.graph;
  if (s.i16 || s.arena_weights || s.arena_packed || s.weight < 0 || s.groups != 1 ||
      s.out_c < t.int16_inputs_min_out_c || (s.k_run && s.out_c < t.int16_run_min_out_c))
    return false;
  const Value &x = g.v(k.ins[0]), &w = g.v(s.weight);
  if (x.is_const() || x.is_dynamic() || g.v(k.out).is_dynamic() || w.dtype != DType::I8 || !w.is_const() ||
      !every_axis_a_role(s, x))
    return false;
  // Weights vpmaddubsw multiplies exactly as bytes keep that form (as fast
  // as pairs and no copy).
  GemmSpec sq = s;
  choose_int8_products(sq, g, t);
  *form = sq.madd;
  return sq.madd != MaddForm::Bytes;
}

// int16(v - x_zero) for an element v of X, 0 for a channel (index
// variable `c`) past X's `in_c`.
ExprP minus_zero(ExprP v, const GemmSpec &s, int c, int64_t channels) {
  ExprP e = cast(cast(std::move(v), DType::I32) - cst(DType::I32, (double)s.x_zero), DType::I16);
  return channels > s.in_c ? select(in_range(var(c), s.in_c), e, cst(DType::I16, 0)) : e;
}

// Whether the copy holds only the pixels the convolution reads (a 1x1
// unpadded one: it then runs at stride 1 over the copy), else all of X.
bool subsampled(const GemmSpec &s) { return s.k_h == 1 && s.k_w == 1 && s.pad_t == 0 && s.pad_l == 0; }

// The widened copy of kernel k's input: a loop kernel writing X16[n, h, w,
// c] = int16(x - x_zero) (subsampled: at the pixels the convolution
// reads), 0 for a padding channel.
Kernel widen(Graph &g, const Kernel &k, int x16, int64_t channels) {
  const GemmSpec &s = k.gemm;
  const Value &x = g.v(k.ins[0]);
  std::vector<ExprP> at((size_t)x.rank());
  // Roles n, c, h, w -> the copy's axes 0, 3, 1, 2.
  const bool sub = subsampled(s);
  const ExprP by_role[4] = {var(0), var(3), sub ? var(1) * cidx(s.stride_h) : var(1),
                            sub ? var(2) * cidx(s.stride_w) : var(2)};
  for (int r = 0; r < 4; ++r)
    if (s.in_axis[r] >= 0) at[(size_t)s.in_axis[r]] = by_role[r];
  Kernel wk;
  wk.out = x16;
  wk.ins = {k.ins[0]};
  wk.expr = minus_zero(load(0, x.dtype, at), s, 3, channels);
  wk.label = "WidenInt8Input";
  wk.nodes = k.nodes;  // the convolution it serves
  wk.guard = k.guard;
  return wk;
}

// The weight [OC, IC, taps...] with its input channels padded with zeros
// to `channels`.
int padded_weight(Graph &g, int w, int64_t channels) {
  const Value &wv = g.v(w);
  const int64_t OC = wv.shape[0], IC = wv.shape[1], KK = wv.numel() / (OC * IC);
  if (channels == IC) return w;
  Bytes b((size_t)(OC * channels * KK), 0);
  const int8_t *src = wv.data->as<int8_t>();
  for (int64_t oc = 0; oc < OC; ++oc)
    for (int64_t ic = 0; ic < IC; ++ic)
      for (int64_t kk = 0; kk < KK; ++kk)
        b[(size_t)((oc * channels + ic) * KK + kk)] = (uint8_t)src[(oc * IC + ic) * KK + kk];
  Shape shape = wv.shape;
  shape[1] = channels;
  return g.add_const(g.fresh_name(wv.name + "_even"), make_const(DType::I8, shape, std::move(b)));
}

// k_run (pad_conv_rows): the index of the loop kernel writing kernel i's
// padded copy, when only kernel i reads it; else -1. A k_run convolution
// reads nothing else: its input's producer is that copy (a loop kernel,
// which may have the input's QuantizeLinear fused into it).
int pad_copy_of(const Program &p, size_t i) {
  const int x = p.kernels[i].ins[0];
  int pad = -1;
  for (size_t j = 0; j < p.kernels.size(); ++j) {
    const Kernel &k = p.kernels[j];
    if (k.out == x) pad = k.kind == KernelKind::Loop ? (int)j : -2;
    if (j != i && std::count(k.ins.begin(), k.ins.end(), x)) return -1;
  }
  for (int o : p.graph.outputs)
    if (o == x) return -1;
  return pad >= 0 && p.alias.count(x) == 0 ? pad : -1;
}

// The padded copy `pad` of a k_run convolution s made int16 in place:
// int16(x - x_zero), its channels padded to `channels` with zeros (the
// padding it holds, x_zero, becomes 0).
void widen_in_place(Graph &g, Kernel &pad, const GemmSpec &s, int64_t channels) {
  Value &v = g.values[(size_t)pad.out];
  v.dtype = DType::I16;
  v.shape[(size_t)s.in_axis[1]] = channels;
  pad.expr = minus_zero(pad.expr, s, s.in_axis[1], channels);
}

// A convolution's window as its roles give it: the indices of X (rank
// `xrank`) and of the weight (rank `wrank`) over the reduction variables
// kFirstReduceVar (input channel), +1 (kh) and +2 (kw), and the input
// row and column they read.
struct Window {
  std::vector<ExprP> x, w;
  ExprP ih, iw;
};
Window conv_window(const GemmSpec &s, int xrank, int wrank) {
  const int r = kFirstReduceVar;
  auto role = [&](int rl) { return s.out_axis[rl] >= 0 ? var(s.out_axis[rl]) : cidx(0); };
  Window win;
  win.ih = role(2) * cidx(s.stride_h) - cidx(s.pad_t) + var(r + 1) * cidx(s.dil_h);
  win.iw = role(3) * cidx(s.stride_w) - cidx(s.pad_l) + var(r + 2) * cidx(s.dil_w);
  win.x.resize((size_t)xrank);
  const ExprP by_role[4] = {role(0), var(r), win.ih, win.iw};
  for (int rl = 0; rl < 4; ++rl)
    if (s.in_axis[rl] >= 0) win.x[(size_t)s.in_axis[rl]] = by_role[rl];
  win.w = {role(1), var(r)};
  if (wrank == 4) win.w.insert(win.w.end(), {var(r + 1), var(r + 2)});
  if (wrank == 3) win.w.push_back(var(r + 2));
  win.w.resize((size_t)wrank, cidx(0));
  return win;
}

// A convolution's definition: its epilogue of the sum over the window's
// (ic, kh, kw) of `product`.
ExprP conv_definition(const GemmSpec &s, const ExprP &product) {
  const int r = kFirstReduceVar;
  ExprP sum = reduce(ReduceKind::Sum, {{r, s.in_c}, {r + 1, s.k_h}, {r + 2, s.k_w}}, product);
  return rewrite(s.epilogue, [&](const ExprP &e) -> ExprP { return e->op == EOp::Acc ? sum : nullptr; });
}

// The epilogue over a float sum where it reads the int32 sum only as
// float32(acc) (nullptr otherwise: an int32 bias added to it, an int32
// output).
ExprP float_sum_epilogue(const ExprP &epilogue) {
  if (!epilogue) return nullptr;
  ExprP e = rewrite(epilogue, [](const ExprP &x) -> ExprP {
    return x->op == EOp::Cast && x->type == DType::F32 && x->a[0]->op == EOp::Acc ? acc(DType::F32) : nullptr;
  });
  bool int_sum = false;
  visit(e, [&](const Expr &x) { int_sum = int_sum || (x.op == EOp::Acc && x.type != DType::F32); });
  return int_sum ? nullptr : e;
}

// A first layer (k_run) too narrow for int16 pairs to pay
// (Target::float_run_max_out_c) computed in float instead: its padded
// copy holds float(x - x_zero) and its weights are the int8 values as
// floats, so every product and partial sum is an integer of at most
// K * 255 * 128 < 2^24 (K the kernel's inputs: checked), exact in float,
// and the float GEMM's sums are the int32 ones: the outputs are the int8
// forms' bit for bit. Its epilogue must read the sum only as
// float32(acc). Why: over an image's 3 channels a narrow layer's byte
// products spend as much on each input quad's broadcast and on the
// quads' padding (9 inputs of a 3x3 kernel row in 3 quads) as on the
// products, where the float GEMM broadcasts each input once.
bool float_run(const Program &p, const Kernel &k, const Target &t) {
  const GemmSpec &s = k.gemm;
  if (k.kind != KernelKind::QGemm || t.dot_i8 != DotI8::X86Madd || !s.k_run || s.out_c > t.float_run_max_out_c ||
      s.i16 || s.groups != 1 || s.weight < 0 || s.arena_weights || s.arena_packed)
    return false;
  const Graph &g = p.graph;
  const Value &x = g.v(k.ins[0]), &w = g.v(s.weight);
  if (x.is_dynamic() || g.v(k.out).is_dynamic() || w.dtype != DType::I8 || !w.is_const() ||
      s.in_c * s.k_h * s.k_w * 255 * 128 >= (int64_t(1) << 24))
    return false;
  return float_sum_epilogue(s.epilogue) != nullptr;
}

// Kernel k (float_run) and its padded copy `pad` made float.
void make_float_run(Graph &g, Kernel &pad, Kernel &k) {
  GemmSpec &s = k.gemm;
  g.values[(size_t)pad.out].dtype = DType::F32;
  const int xrank = g.v(pad.out).rank();
  pad.expr = cast(cast(pad.expr, DType::I32) - cst(DType::I32, (double)s.x_zero), DType::F32);
  const Value w = g.v(s.weight);  // a copy: add_const may move the values
  Bytes b((size_t)w.numel() * sizeof(float));
  const int8_t *src = w.data->as<int8_t>();
  for (int64_t i = 0; i < w.numel(); ++i) {
    const float f = (float)src[i];
    std::memcpy(&b[(size_t)i * sizeof(float)], &f, sizeof f);
  }
  const int wf = g.add_const(g.fresh_name(w.name + "_float"), make_const(DType::F32, w.shape, std::move(b)));
  k.ins[1] = wf;
  s.weight = wf;
  k.kind = KernelKind::Gemm;
  s.x_zero = 0;
  s.x_flip = s.pair16 = false;
  s.madd = MaddForm::Widened;
  s.epilogue = float_sum_epilogue(s.epilogue);
  // The copy holds the padding (k_run: no padding left in the spec).
  const Window win = conv_window(s, xrank, w.rank());
  k.expr = conv_definition(s, load(0, DType::F32, win.x) * load(1, DType::F32, win.w));
}

// A copy's memory trade: its kind, the form it gives (as the JSON and as
// -v name it), and what the copy holds.
struct CopyTrade {
  const char *kind, *form, *says, *holds;
};

// Records kernel k's trade of a copy of `bytes` more arena at its step,
// taken when the bytes `live` there and the copy fit the budget (else k
// keeps its byte products, `form`); whether taken.
bool trade_copy(PassContext &c, const Kernel &k, const CopyTrade &t, int64_t bytes, int64_t live, int64_t budget,
                MaddForm form) {
  MemoryTrade trade{t.kind, k.label, k.nodes.empty() ? "" : k.nodes.front(), t.form, t.form, 0, 0, 0, 0, 1, bytes};
  const std::string what = k.label + (k.nodes.empty() ? "" : " (" + k.nodes.front() + ")");
  const bool fits = sat_add(live, bytes) <= budget;
  if (!fits) {
    trade.taken = form == MaddForm::SignedBytes ? "signed-bytes" : form == MaddForm::Bytes ? "bytes" : "widened";
    trade.arena_bytes = 0;
  }
  c.program.trades.push_back(trade);
  if (c.log && fits) *c.log << "  " << what << ": " << t.says << ", +" << bytes << " arena bytes at its step\n";
  if (c.log && !fits)
    *c.log << "  " << what << ": " << trade.taken << ", not " << t.says << ": " << live
           << " bytes live at its step and " << bytes << " of " << t.holds << " over the arena budget of " << budget
           << "\n";
  return fits;
}

// The padded copy (pad_conv_rows) that k_run convolution k reads, among
// the kernels placed before it.
Kernel &padded_copy(std::vector<Kernel> &placed, const Kernel &k) {
  for (size_t j = placed.size(); j-- > 0;)
    if (placed[j].out == k.ins[0]) return placed[j];
  fail_internal("a k_run convolution without its padded copy");
}

// The pass with each step's room in the arena budget cut by `cut` bytes;
// the copies it made.
int choose_and_widen(PassContext &c, int64_t cut) {
  Program &p = c.program;
  Graph &g = p.graph;
  const Target &t = c.target;
  struct Choice {
    size_t kernel;
    MaddForm form;  // the form it would take otherwise
    bool in_float;  // float_run instead of int16 pairs
  };
  std::vector<Choice> chosen;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    MaddForm f;
    const Kernel &k = p.kernels[i];
    const bool fl = float_run(p, k, t);
    if ((fl || applies(p, k, t, &f)) && (!k.gemm.k_run || pad_copy_of(p, i) >= 0)) {
      if (fl) {
        GemmSpec sq = k.gemm;
        choose_int8_products(sq, p.graph, t);
        f = sq.madd;
      }
      chosen.push_back({i, f, fl});
    }
  }
  if (chosen.empty()) return 0;
  const std::vector<int64_t> live = live_bytes(p);
  const int64_t peak = *std::max_element(live.begin(), live.end());
  // The budget the passes before set (Winograd's, over the plan before its
  // trades), not one over the peak those trades already raised.
  if (p.budgets.base_arena == 0) p.budgets.base_arena = peak, p.budgets.arena = g.limits.arena_budget(peak);
  const int64_t budget = p.budgets.arena - cut;
  // What is live where the copy lives: the layer's step, and for a padded
  // copy made wider in place (k_run: float or int16) the padding kernel's
  // step too, where the copy is written beside that kernel's own input
  // (a float model input: mobilenet_v3_small int8's arena was 1.6x its
  // budget with its first layer's float copy).
  // (Before the loop below moves the kernels.)
  std::vector<int64_t> live_at(p.kernels.size());
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const int pad = p.kernels[i].gemm.k_run ? pad_copy_of(p, i) : -1;
    live_at[i] = pad >= 0 ? std::max(live[i], live[(size_t)pad]) : live[i];
  }
  std::vector<Kernel> out;
  out.reserve(p.kernels.size() + chosen.size());
  int widened = 0, in_floats = 0, refused = 0;
  int64_t bytes_added = 0;
  size_t next = 0;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    Kernel &k = p.kernels[i];
    if (next >= chosen.size() || chosen[next].kernel != i) {
      out.push_back(std::move(k));
      continue;
    }
    const MaddForm form = chosen[next].form;
    const bool fl = chosen[next++].in_float;
    GemmSpec &s = k.gemm;
    if (fl) {
      // The padded copy as floats: 3 more bytes per element.
      const int64_t bytes = sat_mul(shape_numel(g.v(k.ins[0]).shape), (int64_t)3);
      if (!trade_copy(c, k, {"float-input", "float", "exact in float", "float input"}, bytes, live_at[i], budget,
                      form)) {
        ++refused;
        out.push_back(std::move(k));
        continue;
      }
      make_float_run(g, padded_copy(out, k), k);
      out.push_back(std::move(k));
      ++in_floats;
      bytes_added = std::max(bytes_added, bytes);
      continue;
    }
    const int64_t channels = (s.in_c + 1) / 2 * 2;
    // k_run: the padded copy (pad_conv_rows) becomes int16 itself, its
    // channels padded to even, so that a kernel row's inputs stay one run
    // of whole pairs.
    const bool run = s.k_run, sub = !run && subsampled(s);
    const Value &x = g.v(k.ins[0]);
    Shape shape = {s.batch, sub ? s.out_h : s.in_h, sub ? s.out_w : s.in_w, channels};
    if (run) shape = x.shape, shape[(size_t)s.in_axis[1]] = channels;
    const int64_t bytes = sat_mul(shape_numel(shape), (int64_t)2) - (run ? shape_numel(x.shape) : 0);
    // Its step and the copy's: what is live there and the copy.
    if (!trade_copy(c, k, {"int16-input", "int16", "int16 pairs", "widened input"}, bytes, live_at[i], budget, form)) {
      ++refused;
      out.push_back(std::move(k));
      continue;
    }
    check_tensor_size(shape, g.limits, "the widened input of '" + k.label + "'");
    if (run) {
      widen_in_place(g, padded_copy(out, k), s, channels);
    } else {
      const int x16 = g.add_value(g.fresh_name(x.name + "_int16"), DType::I16, shape);
      out.push_back(widen(g, k, x16, channels));
      // An epilogue reading the input (a residual) keeps it in a slot of its own.
      bool reads_x = false;
      visit(s.epilogue, [&](const Expr &e) { reads_x = reads_x || (e.op == EOp::Load && e.id == 0); });
      if (reads_x) {
        const int xs = (int)k.ins.size();
        k.ins.push_back(k.ins[0]);
        s.epilogue = replace_loads(s.epilogue, 0, [&](const Expr &e) { return load(xs, e.type, e.a); });
      }
      k.ins[0] = x16;
      if (sub) {
        s.in_h = s.out_h;
        s.in_w = s.out_w;
        s.stride_h = s.stride_w = 1;
      }
      s.in_axis[0] = 0, s.in_axis[1] = 3, s.in_axis[2] = 1, s.in_axis[3] = 2;
    }
    const int w = padded_weight(g, s.weight, channels);
    k.ins[1] = w;
    s.weight = w;
    s.in_c = channels;
    s.x_zero = 0;
    s.i16 = s.w8 = true;
    // The definition over the copy: the epilogue of the sum of int16
    // products over (ic, kh, kw), padding reading 0.
    const Window win = conv_window(s, g.v(k.ins[0]).rank(), g.v(w).rank());
    ExprP xv = cast(load(0, DType::I16, win.x), DType::I32);
    if (!sub && !run)  // (padding: only where the copy is all of X)
      xv = select(land(in_range(win.ih, s.in_h), in_range(win.iw, s.in_w)), xv, cst(DType::I32, 0));
    k.expr = conv_definition(s, xv * cast(load(1, DType::I8, win.w), DType::I32));
    out.push_back(std::move(k));
    ++widened;
    bytes_added = std::max(bytes_added, bytes);
  }
  p.kernels = std::move(out);
  p.perm.resize(g.values.size());
  if (c.log)
    *c.log << "widen_int8_inputs: " << widened << " int8 convolutions multiply int16 pairs over a widened copy "
           << "of their input, " << in_floats << " float ones exactly (largest copy " << bytes_added << " bytes)"
           << (refused ? ", " + std::to_string(refused) + " keep their byte products: the arena budget has no room"
                       : std::string())
           << "\n";
  return widened + in_floats;
}

}  // namespace

void widen_int8_inputs(PassContext &c) {
  // The arena budget is held against the placed arena, as Winograd's
  // forms are (googlenet int8 on AVX2 had placed 1.18x its plan without
  // transforms, over its 1.1x budget).
  hold_placed_arena(c, "widen_int8_inputs", "copies",
                    [](PassContext &qc, int64_t cut) { return choose_and_widen(qc, cut) > 0; });
}

}  // namespace tinyrt

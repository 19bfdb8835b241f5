// indexing.cpp — ops whose element expression is an index computation:
// GatherElements, GatherND, Scatter*, OneHot, Trilu, Tile, DepthToSpace,
// SpaceToDepth, ReverseSequence, EyeLike, Range.
//
// Scatters are written as "which update (if any) lands here": a reduction
// over the updates. That is O(output x updates), fine for the sizes where
// scatters appear in inference graphs; a dedicated emitter is future work.
#include <cmath>
#include <algorithm>
#include <cstring>

#include "ops/op_registry.h"

namespace tinyrt {

// An index read from a tensor, made non-negative for an axis of `len`
// elements (at most `bound`) and clamped so that invalid input never
// reads out of bounds.
ExprP safe_index(ExprP raw, const ExprP &len, int64_t bound) {
  ExprP i = cast(raw, kIndexType);
  i = select(lt(i, cidx(0)), i + len, i);
  return emax(cidx(0), emin(cidx(bound - 1), i));
}

ExprP safe_index(ExprP raw, const Graph &g, int v, int axis) {
  return safe_index(std::move(raw), g.extent(v, axis), g.v(v).shape.at((size_t)axis));
}

namespace {

const std::vector<DType> kIndex = {DType::I32, DType::I64};

ExprP safe_index(ExprP raw, int64_t dim) { return safe_index(std::move(raw), cidx(dim), dim); }

ExprP raw_index(ExprP raw, int64_t dim) {
  ExprP i = cast(raw, kIndexType);
  return select(lt(i, cidx(0)), i + cidx(dim), i);
}

void def_gather_elements() {
  OpDef d;
  d.name = "GatherElements";
  d.min_opset = 11;
  d.attrs = {"axis"};
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 1, kIndex);
    const Value &x = in_val(g, n, 0), &ix = in_val(g, n, 1);
    if (ix.rank() != x.rank()) fail_invalid(n.where() + ": indices must have the data's rank");
    require_indices_in_range(n, g, 1, {x.shape[norm_axis(n.geti("axis", 0), x.rank(), n)]});
    set_out(n, g, 0, x.dtype, ix.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0), &ix = in_val(c.g, n, 1);
    int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
    std::vector<ExprP> xi = out_vars(x.rank());
    xi[axis] = safe_index(load(1, ix.dtype, out_vars(ix.rank())), x.shape[axis]);
    c.kernel(n.out[0], {n.in[0], n.in[1]}, load(0, x.dtype, xi));
  };
  register_op(std::move(d));
}

void def_gather_nd() {
  OpDef d;
  d.name = "GatherND";
  d.min_opset = 11;
  d.attrs = {"batch_dims"};
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 1, {DType::I64});
    const Value &x = in_val(g, n, 0), &ix = in_val(g, n, 1);
    if (ix.rank() < 1) fail_invalid(n.where() + ": indices must have rank >= 1");
    int64_t b = n.geti("batch_dims", 0), q = ix.rank(), kk = ix.shape.back();
    if (b < 0 || b >= q || kk < 1 || b + kk > x.rank())
      fail_invalid(n.where() + ": batch_dims " + std::to_string(b) + " and indices " + shape_str(ix.shape) +
                   " do not fit data " + shape_str(x.shape) + " (indices address more axes than the data has)");
    for (int64_t i = 0; i < b; ++i)  // the kernel indexes data's batch axes with the indices' ones
      if (x.shape[i] != ix.shape[i])
        fail_invalid(n.where() + ": batch axis " + std::to_string(i) + " of data " + shape_str(x.shape) +
                     " and indices " + shape_str(ix.shape) + " differ");
    require_indices_in_range(n, g, 1, std::vector<int64_t>(x.shape.begin() + b, x.shape.begin() + b + kk));
    Shape s(ix.shape.begin(), ix.shape.end() - 1);
    s.insert(s.end(), x.shape.begin() + b + kk, x.shape.end());
    (void)q;
    set_out(n, g, 0, x.dtype, s);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0), &ix = in_val(c.g, n, 1);
    int b = (int)n.geti("batch_dims", 0), q = ix.rank(), kk = (int)ix.shape.back();
    // out vars: [batch b][index dims q-1-b][rest]
    std::vector<ExprP> xi;
    for (int i = 0; i < b; ++i) xi.push_back(var(i));
    for (int j = 0; j < kk; ++j) {
      std::vector<ExprP> ii;
      for (int i = 0; i < q - 1; ++i) ii.push_back(var(i));
      ii.push_back(cidx(j));
      xi.push_back(safe_index(load(1, ix.dtype, ii), c.g, n.in[0], b + j));
    }
    for (int i = b + kk; i < x.rank(); ++i) xi.push_back(var(q - 1 + i - b - kk));
    c.kernel(n.out[0], {n.in[0], n.in[1]}, load(0, x.dtype, xi));
  };
  // Run-time extents: the indices' leading axes and the data's trailing
  // ones carry theirs to the output (x[x > t]: NonZero's count of rows);
  // the addressed data axes may be run-time (negative indices count from
  // the actual end); the batch axes must agree.
  d.dims = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0), &ix = in_val(g, n, 1);
    int b = (int)n.geti("batch_dims", 0), q = ix.rank(), kk = (int)ix.shape.back();
    if (ix.dim(q - 1) >= 0)
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[1], q - 1) + ": the index tuples' length must be fixed");
    for (int i = 0; i < b; ++i)
      if (x.dim(i) != ix.dim(i))
        fail_unsupported(n.where() + ": batch axis " + std::to_string(i) + ": " + describe_dim(g, n.in[0], i) +
                         " and " + describe_dim(g, n.in[1], i) + " must be one dimension");
    std::vector<int> dims(ix.dims.begin(), ix.dims.end());
    dims.resize((size_t)q, -1);
    dims.pop_back();
    for (int i = b + kk; i < x.rank(); ++i) dims.push_back(x.dim(i));
    g.v(n.out[0]).dims = dims;
  };
  register_op(std::move(d));
}

// Scatter: out[p] = combine(data[p], updates landing on p). `target(u)`
// is, for update position u (vars = rvars), the output index it writes.
void lower_scatter(LowerCtx &c, const Node &n, const Shape &upd_shape,
                   const std::function<std::vector<ExprP>(const std::vector<ExprP> &)> &target,
                   const std::string &reduction) {
  const Value &x = in_val(c.g, n, 0);
  DType t = x.dtype;
  int r = x.rank();
  std::vector<RVar> rv;
  std::vector<ExprP> u;
  ExprP lin = cidx(0);
  for (size_t i = 0; i < upd_shape.size(); ++i) {
    rv.push_back({kFirstReduceVar + (int)i, upd_shape[i]});
    u.push_back(var(kFirstReduceVar + (int)i));
    lin = lin * cidx(upd_shape[i]) + u.back();
  }
  std::vector<ExprP> tgt = target(u);
  ExprP hit = cbool(true);
  for (int i = 0; i < r; ++i) hit = land(hit, bin(EOp::Eq, tgt[i], var(i)));
  ExprP upd = load(2, t, u);
  ExprP data = load(0, t, out_vars(r));
  std::vector<int> ins = {n.in[0], n.in[1], n.in[2]};
  if (reduction == "add") {
    c.kernel(n.out[0], ins, data + reduce(ReduceKind::Sum, rv, select(hit, upd, cst(t, 0))));
  } else if (reduction == "mul") {
    c.kernel(n.out[0], ins, data * reduce(ReduceKind::Prod, rv, select(hit, upd, cst(t, 1))));
  } else if (reduction == "max" || reduction == "min") {
    bool mx = reduction == "max";
    ExprP any = reduce(ReduceKind::Max, rv, select(hit, cidx(1), cidx(0)));
    ExprP best = reduce(mx ? ReduceKind::Max : ReduceKind::Min, rv,
                        select(hit, upd, reduce_init_cst(mx ? ReduceKind::Max : ReduceKind::Min, t)));
    c.kernel(n.out[0], ins, select(bin(EOp::Eq, any, cidx(1)), bin(mx ? EOp::Max : EOp::Min, data, best), data));
  } else {
    // The last update landing here wins (updates apply in order).
    Shape os = x.shape;
    int which = c.temp(x.name + "_scatter_src", kIndexType, os);
    c.kernel(which, {n.in[0], n.in[1], n.in[2]}, reduce(ReduceKind::Max, rv, select(hit, lin, cidx(-1))));
    std::vector<ExprP> ui;
    std::vector<int64_t> st = row_major_strides(upd_shape);
    ExprP w = load(3, kIndexType, out_vars(r));
    for (size_t i = 0; i < upd_shape.size(); ++i)
      ui.push_back(bin(EOp::Rem, bin(EOp::Div, emax(w, cidx(0)), cidx(st[i])), cidx(upd_shape[i])));
    ins.push_back(which);
    c.kernel(n.out[0], ins, select(bin(EOp::Ge, w, cidx(0)), load(2, t, ui), data));
  }
}

void def_scatter_elements(const std::string &name, int min_opset) {
  OpDef d;
  d.name = name;
  d.min_opset = min_opset;
  d.attrs = {"axis", "reduction"};
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 1, kIndex);
    const Value &x = in_val(g, n, 0), &ix = in_val(g, n, 1), &u = in_val(g, n, 2);
    if (ix.shape != u.shape || ix.rank() != x.rank()) fail_invalid(n.where() + ": indices and updates must match");
    require_indices_in_range(n, g, 1, {x.shape[norm_axis(n.geti("axis", 0), x.rank(), n)]});
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0), &ix = in_val(c.g, n, 1);
    int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
    lower_scatter(
        c, n, ix.shape,
        [&](const std::vector<ExprP> &u) {
          std::vector<ExprP> t = u;
          t[axis] = raw_index(load(1, ix.dtype, u), x.shape[axis]);
          return t;
        },
        n.gets("reduction", "none"));
  };
  register_op(std::move(d));
}

void def_scatter_nd() {
  OpDef d;
  d.name = "ScatterND";
  d.min_opset = 11;
  d.attrs = {"reduction"};
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 1, {DType::I64});
    const Value &x = in_val(g, n, 0), &ix = in_val(g, n, 1), &up = in_val(g, n, 2);
    if (ix.rank() < 1 || ix.shape.back() < 1 || ix.shape.back() > x.rank())
      fail_invalid(n.where() + ": indices " + shape_str(ix.shape) + " must end in a dimension in [1, " +
                   std::to_string(x.rank()) + "]");
    Shape want(ix.shape.begin(), ix.shape.end() - 1);
    want.insert(want.end(), x.shape.begin() + ix.shape.back(), x.shape.end());
    if (up.shape != want)
      fail_invalid(n.where() + ": updates have shape " + shape_str(up.shape) + ", expected " + shape_str(want));
    if (up.dtype != x.dtype) fail_invalid(n.where() + ": updates and data differ in type");
    require_indices_in_range(n, g, 1, std::vector<int64_t>(x.shape.begin(), x.shape.begin() + ix.shape.back()));
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0), &ix = in_val(c.g, n, 1), &up = in_val(c.g, n, 2);
    int q = ix.rank(), kk = (int)ix.shape.back();
    lower_scatter(
        c, n, up.shape,
        [&](const std::vector<ExprP> &u) {
          std::vector<ExprP> t;
          for (int j = 0; j < kk; ++j) {
            std::vector<ExprP> ii(u.begin(), u.begin() + (q - 1));
            ii.push_back(cidx(j));
            t.push_back(raw_index(load(1, ix.dtype, ii), x.shape[j]));
          }
          for (int i = kk; i < x.rank(); ++i) t.push_back(u[q - 1 + i - kk]);
          return t;
        },
        n.gets("reduction", "none"));
  };
  register_op(std::move(d));
}

void def_onehot() {
  OpDef d;
  d.name = "OneHot";
  d.min_opset = 9;
  d.attrs = {"axis"};
  d.const_inputs = {1};
  d.infer = [](Node &n, Graph &g) {
    const Value &ix = in_val(g, n, 0), &depth = in_val(g, n, 1), &vals = in_val(g, n, 2);
    require_one_element(n, g, 1, "depth");
    if (!(std::fabs(depth.data->get_f(0)) < 0x1p62))
      fail_invalid(n.where() + ": depth " + std::to_string(depth.data->get_f(0)) + " is not a size");
    int64_t dep = (int64_t)depth.data->get_f(0);
    if (vals.numel() != 2) fail_invalid(n.where() + ": values must have two elements");
    Shape s = ix.shape;
    int axis = norm_axis(n.geti("axis", -1), ix.rank() + 1, n);
    s.insert(s.begin() + axis, dep);
    set_out(n, g, 0, vals.dtype, s);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &ix = in_val(c.g, n, 0), &vals = in_val(c.g, n, 2);
    int64_t dep = (int64_t)in_val(c.g, n, 1).data->get_f(0);
    int axis = norm_axis(n.geti("axis", -1), ix.rank() + 1, n);
    std::vector<ExprP> ii;
    for (int i = 0; i < ix.rank() + 1; ++i)
      if (i != axis) ii.push_back(var(i));
    ExprP raw = dtype_is_float(ix.dtype) ? cast(un(EOp::Floor, load(0, ix.dtype, ii)), kIndexType)
                                         : cast(load(0, ix.dtype, ii), kIndexType);
    ExprP k = select(lt(raw, cidx(0)), raw + cidx(dep), raw);
    ExprP on = load(1, vals.dtype, {cidx(1)}), off = load(1, vals.dtype, {cidx(0)});
    c.kernel(n.out[0], {n.in[0], n.in[2]}, select(bin(EOp::Eq, k, var(axis)), on, off));
  };
  register_op(std::move(d));
}

void def_trilu() {
  OpDef d;
  d.name = "Trilu";
  d.min_opset = 14;
  d.attrs = {"upper"};
  d.const_inputs = {1};
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    if (x.rank() < 2) fail_invalid(n.where() + ": input rank must be >= 2");
    require_one_element(n, g, 1, "k");
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    int64_t k = n.has_in(1) ? const_ints(c.g, n, 1).at(0) : 0;
    int r = x.rank();
    ExprP diff = var(r - 1) - var(r - 2);  // column - row
    ExprP keep = n.geti("upper", 1) ? bin(EOp::Ge, diff, cidx(k)) : bin(EOp::Le, diff, cidx(k));
    c.kernel(n.out[0], {n.in[0]}, select(keep, load(0, x.dtype, out_vars(r)), cst(x.dtype, 0)));
  };
  register_op(std::move(d));
}

void def_tile() {
  OpDef d;
  d.name = "Tile";
  d.min_opset = 6;
  d.const_inputs = {1};
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    std::vector<int64_t> rep = const_ints(g, n, 1);
    if ((int)rep.size() != x.rank()) fail_invalid(n.where() + ": repeats must have one entry per axis");
    Shape s = x.shape;
    for (int i = 0; i < x.rank(); ++i)
      if (__builtin_mul_overflow(s[i], rep[i], &s[i]))
        fail_invalid(n.where() + ": axis " + std::to_string(i) + " of " + shape_str(x.shape) + " repeated " +
                     std::to_string(rep[i]) + " times has more elements than a 64-bit count holds");
    set_out(n, g, 0, x.dtype, s);
  };
  // Run-time extents: an axis of x repeated, or repeats computed from them
  // (Tile(w, [T, 1])): the product of the two.
  d.dims = [](Node &n, Graph &g) {
    std::vector<ExprP> rep = sym_ints(g, n, 1);
    Value &o = g.v(n.out[0]);
    o.dims.assign((size_t)o.rank(), -1);
    for (int i = 0; i < o.rank(); ++i)
      o.dims[(size_t)i] = g.derived_sym(g.extent(n.in[0], i) * rep[(size_t)i], o.name + "[" + std::to_string(i) + "]");
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    std::vector<ExprP> idx;
    for (int i = 0; i < x.rank(); ++i)
      idx.push_back(x.shape[i] == 1 ? cidx(0) : bin(EOp::Rem, var(i), c.g.extent(n.in[0], i)));
    c.kernel(n.out[0], {n.in[0]}, load(0, x.dtype, idx));
  };
  register_op(std::move(d));
}

// DepthToSpace / SpaceToDepth on NCHW.
void def_space_depth(const std::string &name, bool to_space) {
  OpDef d;
  d.name = name;
  d.attrs = {"blocksize", "mode"};
  d.infer = [to_space](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    int64_t bs = n.geti("blocksize", 0);
    if (x.rank() != 4 || bs < 1) fail_invalid(n.where() + ": needs a 4-D input and blocksize >= 1");
    Shape s = x.shape;
    if (to_space) {
      if (s[1] % (bs * bs)) fail_invalid(n.where() + ": channels not divisible by blocksize^2");
      s = {s[0], s[1] / (bs * bs), s[2] * bs, s[3] * bs};
    } else {
      if (s[2] % bs || s[3] % bs) fail_invalid(n.where() + ": spatial size not divisible by blocksize");
      s = {s[0], s[1] * bs * bs, s[2] / bs, s[3] / bs};
    }
    set_out(n, g, 0, x.dtype, s);
  };
  d.lower = [to_space](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    int64_t bs = n.geti("blocksize", 0);
    bool crd = n.gets("mode", "DCR") == "CRD";
    ExprP B = cidx(bs);
    std::vector<ExprP> xi;
    if (to_space) {
      int64_t C = x.shape[1] / (bs * bs);
      ExprP h = var(2), w = var(3), ch = var(1);
      ExprP bh = bin(EOp::Rem, h, B), bw = bin(EOp::Rem, w, B);
      ExprP cin = crd ? ch * cidx(bs * bs) + bh * B + bw : (bh * B + bw) * cidx(C) + ch;
      xi = {var(0), cin, bin(EOp::Div, h, B), bin(EOp::Div, w, B)};
    } else {
      int64_t C = x.shape[1];
      ExprP co = var(1);
      ExprP blk = bin(EOp::Div, co, cidx(C)), cin = bin(EOp::Rem, co, cidx(C));
      xi = {var(0), cin, var(2) * B + bin(EOp::Div, blk, B), var(3) * B + bin(EOp::Rem, blk, B)};
    }
    c.kernel(n.out[0], {n.in[0]}, load(0, x.dtype, xi));
  };
  // Run-time batch and image sizes (a super-resolution network's pixel
  // shuffle over any image): the spatial extents times or over blocksize
  // (SpaceToDepth: a run whose size is not a multiple drops the last
  // partial block, as the rows past the last whole block have no place).
  d.dims = [to_space](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    if (x.dim(1) >= 0) fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], 1) + ": run-time channels");
    int64_t bs = n.geti("blocksize", 0);
    std::vector<int> dims = x.dims;
    for (int a = 2; a < 4; ++a) {
      if (x.dim(a) < 0) continue;
      if (!to_space && g.syms[(size_t)x.dim(a)].lo < bs)
        fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], a) + ": the range must start at the blocksize, " +
                         std::to_string(bs));
      ExprP e = to_space ? g.extent(n.in[0], a) * bs : g.extent(n.in[0], a) / cidx(bs);
      dims[(size_t)a] = g.derived_sym(e, g.v(n.out[0]).name + "[" + std::to_string(a) + "]");
    }
    g.v(n.out[0]).dims = dims;
  };
  register_op(std::move(d));
}

void def_reverse_sequence() {
  OpDef d;
  d.name = "ReverseSequence";
  d.min_opset = 10;
  d.attrs = {"batch_axis", "time_axis"};
  d.infer = [](Node &n, Graph &g) {
    require_types(n, g, 1, {DType::I64});
    const Value &x = in_val(g, n, 0);
    int64_t ba = n.geti("batch_axis", 1), ta = n.geti("time_axis", 0);
    if (x.rank() < 2 || (ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
      fail_invalid(n.where() + ": batch_axis and time_axis must be 0 and 1 (in either order) of an input of rank >= 2");
    if (in_val(g, n, 1).shape != Shape{x.shape[ba]})
      fail_invalid(n.where() + ": sequence_lens has shape " + shape_str(in_val(g, n, 1).shape) + ", expected [" +
                   std::to_string(x.shape[ba]) + "]");
    require_const_values_in(n, g, 1, 0, x.shape[ta] + 1, "sequence length");
    set_out(n, g, 0, x.dtype, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    int ba = (int)n.geti("batch_axis", 1), ta = (int)n.geti("time_axis", 0);
    ExprP len = cast(load(1, DType::I64, {var(ba)}), kIndexType);
    len = emax(cidx(0), emin(cidx(x.shape[ta]), len));
    std::vector<ExprP> xi = out_vars(x.rank());
    xi[ta] = select(lt(var(ta), len), (len - var(ta)) - cidx(1), var(ta));  // (len - t) >= 1 where t < len
    c.kernel(n.out[0], {n.in[0], n.in[1]}, load(0, x.dtype, xi));
  };
  register_op(std::move(d));
}

void def_eyelike() {
  OpDef d;
  d.name = "EyeLike";
  d.min_opset = 9;
  d.attrs = {"dtype", "k"};
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    if (x.rank() != 2) fail_invalid(n.where() + ": input must be 2-D");
    DType t = n.has("dtype") ? (DType)n.geti("dtype", 1) : x.dtype;
    if (!dtype_supported(t)) fail_unsupported(n.where() + ": dtype " + dtype_name(t));
    set_out(n, g, 0, t, x.shape);
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    DType t = c.g.v(n.out[0]).dtype;
    ExprP on = bin(EOp::Eq, var(1) - var(0), cidx(n.geti("k", 0)));
    c.kernel(n.out[0], {}, select(on, cst(t, 1), cst(t, 0)));
  };
  register_op(std::move(d));
}

// Range: the output's length depends on the values, which must be known:
// constants, or integers computed from run-time extents (the positions of
// a sequence of T tokens: Range(0, Shape(x)[1], 1)), then a run-time
// extent ceil((limit - start) / delta) for a constant delta.
void def_range() {
  OpDef d;
  d.name = "Range";
  d.min_opset = 11;
  d.const_inputs = {0, 1, 2};
  auto scalars = [](const Node &n, const Graph &g) {
    for (size_t k = 0; k < 3; ++k)
      if (in_val(g, n, k).numel() != 1)
        fail_invalid(n.where() + ": start, limit and delta must be scalars; input " + std::to_string(k) +
                     " has shape " + shape_str(in_val(g, n, k).shape));
  };
  auto symbolic = [](const Node &n, const Graph &g) {
    for (size_t k = 0; k < 3; ++k)
      if (in_val(g, n, k).is_sym()) return true;
    return false;
  };
  // The symbolic length: max(ceil(span / |delta|), 0) of the span towards
  // delta's sign, for integer inputs and a constant delta.
  auto sym_count = [](const Node &n, const Graph &g) {
    if (dtype_is_float(in_val(g, n, 0).dtype))
      fail_unsupported(n.where() + ": a floating-point Range with a limit or start computed from run-time " +
                       "extents; its length would depend on rounding");
    ExprP s = sym_ints(g, n, 0).at(0), l = sym_ints(g, n, 1).at(0), dl = sym_ints(g, n, 2).at(0);
    if (!dl->is_const())
      fail_unsupported(n.where() + ": delta '" + in_val(g, n, 2).name + "' is computed at run time; it must be a " +
                       "constant when the limit or start is");
    if (dl->ival == 0) fail_invalid(n.where() + ": delta is 0");
    int64_t step = dl->ival > 0 ? dl->ival : -dl->ival;
    ExprP span = dl->ival > 0 ? l - s : s - l;
    ExprP len = (span + (step - 1)) / cidx(step);
    Interval b = index_range(len, {});
    return b.known && b.lo >= 0 ? len : bin(EOp::Max, len, cidx(0));  // (0..T: T itself)
  };
  auto count = [scalars, symbolic, sym_count](const Node &n, const Graph &g) {
    scalars(n, g);
    if (symbolic(n, g)) {
      Interval b = index_range(sym_count(n, g), {});
      if (!b.known) fail_unsupported(n.where() + ": the length has no bounds; bound its inputs' extents with --dim");
      return b.hi;
    }
    double s = in_val(g, n, 0).data->get_f(0), l = in_val(g, n, 1).data->get_f(0), dl = in_val(g, n, 2).data->get_f(0);
    if (dl == 0) fail_invalid(n.where() + ": delta is 0");
    double c = std::ceil((l - s) / dl);
    if (!(c < 0x1p62))  // NaN and infinities too: the cast below would be undefined
      fail_invalid(n.where() + ": (limit - start) / delta is " + std::to_string(c) + ", not an element count");
    return c > 0 ? (int64_t)c : int64_t(0);
  };
  d.infer = [count](Node &n, Graph &g) { set_out(n, g, 0, in_val(g, n, 0).dtype, {count(n, g)}); };
  d.dims = [symbolic, sym_count](Node &n, Graph &g) {
    g.v(n.out[0]).dims = {symbolic(n, g) ? g.derived_sym(sym_count(n, g), g.v(n.out[0]).name + "[0]") : -1};
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    DType t = c.g.v(n.out[0]).dtype;
    ExprP s = load(0, t, {}), dl = load(1, t, {});
    c.kernel(n.out[0], {n.in[0], n.in[2]}, s + cast(var(0), t) * dl);
  };
  register_op(std::move(d));
}

// Compress: a gather of the kept positions. A constant condition gives
// them at compile time; a run-time one is compacted at run time (a
// data-dependent size, ops/data_dependent.cpp), at most min(condition,
// axis) of them.
void def_compress() {
  OpDef d;
  d.name = "Compress";
  d.min_opset = 9;
  d.attrs = {"axis"};
  auto kept = [](const Node &n, const Graph &g) {
    const Value &c = in_val(g, n, 1);
    std::vector<int64_t> pos;
    for (int64_t i = 0; i < c.numel(); ++i)
      if (c.data->get_i(i)) pos.push_back(i);
    return pos;
  };
  // Elements (no axis) or the axis's length.
  auto length = [](const Node &n, const Graph &g) {
    const Value &x = in_val(g, n, 0);
    return n.has("axis") ? x.shape[(size_t)norm_axis(n.geti("axis", 0), x.rank(), n)] : x.numel();
  };
  auto shape_dims = [kept, length](Node &n, Graph &g) {
    require_types(n, g, 1, {DType::Bool});
    const Value &x = in_val(g, n, 0), &cond = in_val(g, n, 1);
    if (cond.rank() != 1) fail_invalid(n.where() + ": the condition must be 1-D, not " + shape_str(cond.shape));
    const int axis = n.has("axis") ? norm_axis(n.geti("axis", 0), x.rank(), n) : 0;
    if (n.has("axis") && x.is_dynamic())
      for (int a = 0; a < x.rank(); ++a)
        if (x.dim(a) >= 0 && a <= axis)
          fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], a) +
                           ": Compress takes run-time dimensions after its axis only");
    if (!n.has("axis") && x.is_dynamic())
      fail_unsupported(n.where() + ": Compress without an axis takes a fixed-shape input");
    if (cond.is_dynamic()) fail_unsupported(n.where() + ": Compress takes a fixed-length condition");
    Shape s = n.has("axis") ? x.shape : Shape{x.numel()};
    if (cond.is_const()) {
      std::vector<int64_t> pos = kept(n, g);
      if (!pos.empty() && pos.back() >= length(n, g))
        fail_invalid(n.where() + ": condition longer than the " + (n.has("axis") ? "axis" : "input"));
      s[(size_t)axis] = (int64_t)pos.size();
      set_out(n, g, 0, x.dtype, s);
      if (n.has("axis") && x.is_dynamic()) g.v(n.out[0]).dims = x.dims;
      return;
    }
    // At most min(condition, axis) positions (ONNX: a longer condition's
    // extra entries select nothing).
    s[(size_t)axis] = std::min(cond.numel(), length(n, g));
    set_out(n, g, 0, x.dtype, s);
    g.v(n.out[0]).dims = n.has("axis") ? x.dims : std::vector<int>{};
    produced_axis(n, g, 0, axis, s[(size_t)axis]);
  };
  d.infer = shape_dims;
  d.dims = shape_dims;
  d.lower = [kept](const Node &n, LowerCtx &c) {
    Graph &g = c.g;
    const Value &x = in_val(g, n, 0);
    const Value &out = g.v(n.out[0]);
    const int axis = n.has("axis") ? norm_axis(n.geti("axis", 0), x.rank(), n) : 0;
    int table;  // the kept positions, int64
    if (in_val(g, n, 1).is_const()) {
      std::vector<int64_t> pos = kept(n, g);
      table = g.add_const(g.fresh_name(n.name + "_kept"), make_const_i64({(int64_t)pos.size()}, pos));
    } else {
      int64_t len = out.shape[(size_t)axis];
      int cond = n.in[1];
      if (in_val(g, n, 1).numel() != len) {  // the entries within the axis
        cond = c.temp(n.name + "_condition", DType::Bool, {len});
        c.kernel(cond, {n.in[1]}, load(0, DType::Bool, {var(0)}));
      }
      table = c.temp(out.name + "_kept", DType::I64, {len});
      g.v(table).dims = {out.dim(axis)};
      c.compact(table, cond);
    }
    std::vector<ExprP> xi;
    if (!n.has("axis")) {
      ExprP p = cast(load(1, DType::I64, {var(0)}), kIndexType);
      p = emax(cidx(0), emin(cidx(std::max<int64_t>(x.numel() - 1, 0)), p));
      std::vector<int64_t> st = row_major_strides(x.shape);
      for (int i = 0; i < x.rank(); ++i) xi.push_back(bin(EOp::Rem, bin(EOp::Div, p, cidx(st[i])), cidx(x.shape[i])));
    } else {
      xi = out_vars(x.rank());
      ExprP p = cast(load(1, DType::I64, {var(axis)}), kIndexType);
      xi[axis] = emax(cidx(0), emin(cidx(std::max<int64_t>(x.shape[(size_t)axis] - 1, 0)), p));
    }
    c.kernel(n.out[0], {n.in[0], table}, load(0, x.dtype, xi));
  };
  register_op(std::move(d));
}

// TfIdfVectorizer over integer tokens: per pool n-gram, the number of
// (skip, start) placements that match, as TF, IDF or TF-IDF.
void def_tfidf() {
  OpDef d;
  d.name = "TfIdfVectorizer";
  d.min_opset = 9;
  d.attrs = {"max_gram_length", "max_skip_count", "min_gram_length", "mode",   "ngram_counts",
             "ngram_indexes",   "pool_int64s",    "pool_strings",    "weights"};
  d.types = {DType::I32, DType::I64};
  d.infer = [](Node &n, Graph &g) {
    if (n.has("pool_strings")) fail_unsupported(n.where() + ": string pools (strings are out of scope)");
    const Value &x = in_val(g, n, 0);
    std::vector<int64_t> idx = n.getints("ngram_indexes"), counts = n.getints("ngram_counts");
    // The lowering reads the pool at these positions.
    int64_t pool = (int64_t)n.getints("pool_int64s").size();
    for (size_t i = 0; i < counts.size(); ++i)
      if (counts[i] < (i ? counts[i - 1] : 0) || counts[i] > pool)
        fail_invalid(n.where() + ": ngram_counts must rise from 0 to at most the pool's " + std::to_string(pool) +
                     " entries; entry " + std::to_string(i) + " is " + std::to_string(counts[i]));
    for (int64_t i : idx)
      if (i < 0) fail_invalid(n.where() + ": ngram_indexes holds " + std::to_string(i));
    int64_t gmin = n.geti("min_gram_length", 1), gmax = n.geti("max_gram_length", 1),
            skip = n.geti("max_skip_count", 0);
    if (gmin < 1 || gmax < gmin || skip < 0)
      fail_invalid(n.where() + ": min_gram_length " + std::to_string(gmin) + ", max_gram_length " +
                   std::to_string(gmax) + " and max_skip_count " + std::to_string(skip) +
                   " must be >= 1, >= min_gram_length and >= 0");
    int64_t feats = 0;
    for (int64_t i : idx) feats = std::max(feats, i + 1);
    if (x.rank() == 1)
      set_out(n, g, 0, DType::F32, {feats});
    else if (x.rank() == 2)
      set_out(n, g, 0, DType::F32, {x.shape[0], feats});
    else
      fail_invalid(n.where() + ": input must be 1-D or 2-D");
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    bool batch = x.rank() == 2;
    int64_t N = x.shape.back();
    std::vector<int64_t> pool = n.getints("pool_int64s"), counts = n.getints("ngram_counts"),
                         indexes = n.getints("ngram_indexes");
    std::vector<float> weights = n.getfloats("weights");
    int64_t gmin = n.geti("min_gram_length", 1), gmax = n.geti("max_gram_length", 1),
            skip = n.geti("max_skip_count", 0);
    std::string mode = n.gets("mode", "TF");
    ExprP f = var(batch ? 1 : 0);
    ExprP e = cst(DType::F32, 0);
    size_t k = 0;  // n-gram number in pool order
    for (size_t len = 1; len <= counts.size(); ++len) {
      int64_t begin = counts[len - 1], end = len < counts.size() ? counts[len] : (int64_t)pool.size();
      for (int64_t p = begin; p + (int64_t)len <= end; p += (int64_t)len, ++k) {
        if ((int64_t)len < gmin || (int64_t)len > gmax || k >= indexes.size()) continue;
        int64_t skips = len == 1 ? 1 : std::min(skip, N) + 1;  // longer skips match nothing
        ExprP s = var(kFirstReduceVar), i = var(kFirstReduceVar + 1);
        ExprP stride = s + cidx(1);
        ExprP last = i + stride * cidx((int64_t)len - 1);
        ExprP match = cbool(true);
        for (size_t j = 0; j < len; ++j) {
          ExprP at = emin(cidx(N - 1), i + stride * cidx((int64_t)j));
          std::vector<ExprP> xi = batch ? std::vector<ExprP>{var(0), at} : std::vector<ExprP>{at};
          match = land(match, bin(EOp::Eq, load(0, x.dtype, xi), cst(x.dtype, (double)pool[p + j])));
        }
        ExprP hit = select(land(lt(last, cidx(N)), match), cst(DType::F32, 1), cst(DType::F32, 0));
        ExprP count = reduce(ReduceKind::Sum, {{kFirstReduceVar, skips}, {kFirstReduceVar + 1, N}}, hit);
        double w = k < weights.size() ? weights[k] : 1.0;
        ExprP v = mode == "TF" ? count
                  : mode == "IDF"
                      ? select(bin(EOp::Gt, count, cst(DType::F32, 0)), cst(DType::F32, w), cst(DType::F32, 0))
                      : count * cst(DType::F32, w);
        e = select(bin(EOp::Eq, f, cidx(indexes[k])), v, e);
      }
    }
    c.kernel(n.out[0], {n.in[0]}, e);
  };
  register_op(std::move(d));
}

}  // namespace

void register_indexing_ops() {
  def_gather_elements();
  def_gather_nd();
  def_scatter_elements("ScatterElements", 11);
  def_scatter_elements("Scatter", 9);
  def_scatter_nd();
  def_onehot();
  def_trilu();
  def_tile();
  def_space_depth("DepthToSpace", true);
  def_space_depth("SpaceToDepth", false);
  def_reverse_sequence();
  def_eyelike();
  def_range();
  def_compress();
  def_tfidf();
}

}  // namespace tinyrt

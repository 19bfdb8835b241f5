// data_dependent.cpp — ops whose output size depends on the input's
// values: NonZero, NonMaxSuppression, Unique (and Compress with a run-time
// condition, indexing.cpp). Each such output axis is a produced extent
// (ir/graph.h DimSym::produced) bounded by the op's semantics (NonZero:
// the input's elements; NMS: boxes x classes x batch, or the per-class
// maximum x classes x batch); a Compact or Nms kernel (ir/program.h)
// computes it at run time and the kernels after loop to it.
#include <algorithm>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

// Is element `idx` of value v (indices of its bounds' layout) inside its
// run-time extents? nullptr when all its dimensions are fixed.
ExprP inside_extents(const Graph &g, int v, const std::vector<ExprP> &idx) {
  ExprP in;
  const Value &x = g.v(v);
  for (int a = 0; a < x.rank(); ++a)
    if (x.dim(a) >= 0) {
      ExprP t = lt(idx[(size_t)a], g.extent(v, a));
      in = in ? land(in, t) : t;
    }
  return in;
}

// ------------------------------------------------------------- NonZero --

// Output [rank, count]: the coordinates of each nonzero element in
// row-major order. Compact writes the nonzero elements' row-major indices
// (over the bounds' layout, elements outside the run-time extents count as
// zeros), a loop kernel splits them into coordinates.
void def_nonzero() {
  OpDef d;
  d.name = "NonZero";
  d.min_opset = 9;
  auto shape_dims = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    set_out(n, g, 0, DType::I64, {std::max(x.rank(), 1), x.numel()});
    produced_axis(n, g, 0, 1, x.numel());
  };
  d.infer = shape_dims;
  d.dims = shape_dims;
  d.lower = [](const Node &n, LowerCtx &c) {
    Graph &g = c.g;
    const Value &x = in_val(g, n, 0);
    const int r = x.rank();
    const Shape xs = x.shape;
    int64_t numel = x.numel();
    std::vector<ExprP> all = out_vars(r);
    ExprP nz = bin(EOp::Ne, load(0, x.dtype, all), cst(x.dtype, 0));
    if (ExprP in = inside_extents(g, n.in[0], all)) nz = land(in, nz);
    int mask = c.temp(x.name + "_nonzero", DType::Bool, xs);
    c.kernel(mask, {n.in[0]}, nz);
    g.v(mask).dims.clear();  // every element written: Compact reads the bounds' layout
    int flat = mask;
    if (r != 1) {
      flat = c.temp(x.name + "_nonzero_flat", DType::Bool, {numel});
      c.alias(flat, mask);
    }
    const Value &out = g.v(n.out[0]);
    int lin = c.temp(out.name + "_index", DType::I64, {numel});
    g.v(lin).dims = {out.dim(1)};
    c.compact(lin, flat);
    // Coordinate Var(0) of the k-th (Var(1)) nonzero element.
    std::vector<int64_t> st = row_major_strides(xs);
    ExprP i = cast(load(0, DType::I64, {var(1)}), kIndexType);
    ExprP coord = cidx(0);
    for (int a = 0; a < r; ++a) {
      ExprP ca = bin(EOp::Rem, bin(EOp::Div, i, cidx(st[(size_t)a])), cidx(xs[(size_t)a]));
      coord = a == 0 ? ca : select(bin(EOp::Eq, var(0), cidx(a)), ca, coord);
    }
    c.kernel(n.out[0], {lin}, cast(coord, DType::I64));
  };
  register_op(std::move(d));
}

// --------------------------------------------------- NonMaxSuppression --

void def_nms() {
  OpDef d;
  d.name = "NonMaxSuppression";
  d.min_opset = 10;
  d.attrs = {"center_point_box"};
  d.types = {DType::F32};
  // Per batch entry and class, at most this many selections.
  auto per_class = [](const Node &n, const Graph &g) {
    int64_t boxes = in_val(g, n, 0).shape.at(1);
    if (!n.has_in(2)) return int64_t(0);  // the default: no selections
    if (!in_val(g, n, 2).is_const()) return boxes;
    return std::clamp<int64_t>(const_ints(g, n, 2).at(0), 0, boxes);
  };
  auto shape_dims = [per_class](Node &n, Graph &g) {
    const Value &boxes = in_val(g, n, 0);
    require_types(n, g, 1, {DType::F32});
    const Value &scores = in_val(g, n, 1);
    if (boxes.rank() != 3 || boxes.shape[2] != 4)
      fail_invalid(n.where() + ": boxes must be [batches, boxes, 4], not " + shape_str(boxes.shape));
    if (scores.rank() != 3 || scores.shape[0] != boxes.shape[0] || scores.shape[2] != boxes.shape[1])
      fail_invalid(n.where() + ": scores must be [batches, classes, boxes] = [" + std::to_string(boxes.shape[0]) +
                   ", C, " + std::to_string(boxes.shape[1]) + "], not " + shape_str(scores.shape));
    int64_t cpb = n.geti("center_point_box", 0);
    if (cpb != 0 && cpb != 1)
      fail_invalid(n.where() + ": center_point_box is " + std::to_string(cpb) + "; it must be 0 or 1");
    require_one_element(n, g, 2, "max_output_boxes_per_class");
    require_one_element(n, g, 3, "iou_threshold");
    require_one_element(n, g, 4, "score_threshold");
    if (n.has_in(2)) require_dtype(n, g, 2, DType::I64, "max_output_boxes_per_class");
    if (n.has_in(3)) require_dtype(n, g, 3, DType::F32, "iou_threshold");
    if (n.has_in(4)) require_dtype(n, g, 4, DType::F32, "score_threshold");
    if (n.has_in(3) && in_val(g, n, 3).is_const()) {
      double iou = in_val(g, n, 3).data->get_f(0);
      if (!(iou >= 0 && iou <= 1))
        fail_invalid(n.where() + ": iou_threshold is " + std::to_string(iou) + "; it must lie in [0, 1]");
    }
    // Run-time extents: the boxes' count only, one extent in both inputs.
    for (int a : {0, 2})
      if (boxes.dim(a) >= 0)
        fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], a) +
                         ": NonMaxSuppression takes a run-time number of boxes only");
    if (scores.dim(0) >= 0 || scores.dim(1) >= 0)
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[1], scores.dim(0) >= 0 ? 0 : 1) +
                       ": NonMaxSuppression takes a run-time number of boxes only");
    if (boxes.dim(1) != scores.dim(2) && !same_extent(g, g.extent(n.in[0], 1), g.extent(n.in[1], 2)))
      fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], 1) + " and " + describe_dim(g, n.in[1], 2) +
                       " must be one extent");
    int64_t bound = sat_mul(sat_mul(boxes.shape[0], scores.shape[1]), per_class(n, g));
    g.check_size({bound, 3}, n.where() + ": output 'selected_indices'");
    set_out(n, g, 0, DType::I64, {bound, 3});
    produced_axis(n, g, 0, 0, bound);
  };
  d.infer = shape_dims;
  d.dims = shape_dims;
  d.lower = [](const Node &n, LowerCtx &c) {
    Graph &g = c.g;
    const Value &boxes = in_val(g, n, 0);
    NmsSpec s;
    s.center_point_box = n.geti("center_point_box", 0) == 1;
    std::vector<int> ins = {n.in[0], n.in[1]};
    // The kernel's scratch: eight rows of the boxes' count (codegen/nms_emitter.cpp).
    int list = c.temp(n.name + "_scratch", DType::I32, {8, std::max<int64_t>(boxes.shape[1], 1)});
    c.kernel(list, {}, var(0));  // (overwritten: the kernel's scratch)
    ins.push_back(list);
    auto scalar = [&](size_t k, int *slot) {
      if (!n.has_in(k)) return false;
      if (in_val(g, n, k).is_const()) return true;
      *slot = (int)ins.size();
      ins.push_back(n.in[k]);
      return false;
    };
    if (scalar(2, &s.max_slot)) s.max_out = const_ints(g, n, 2).at(0);
    if (scalar(3, &s.iou_slot)) s.iou = (float)in_val(g, n, 3).data->get_f(0);
    s.has_score = n.has_in(4);
    if (scalar(4, &s.score_slot)) s.score = (float)in_val(g, n, 4).data->get_f(0);
    c.nms(n.out[0], ins, s);
  };
  register_op(std::move(d));
}

// -------------------------------------------------------------- Unique --

// Slices along `axis` (elements, without one) as [pre, L, post]: element e
// of slice i is x3[e / post, i, e % post].
struct Slices {
  int64_t pre = 1, len = 1, post = 1;
  int64_t size() const { return pre * post; }
};
Slices unique_slices(const Node &n, const Value &x) {
  Slices s;
  if (!n.has("axis")) {
    s.len = x.numel();
    return s;
  }
  int axis = norm_axis(n.geti("axis", 0), x.rank(), n);
  s.len = x.shape[(size_t)axis];
  for (int a = 0; a < x.rank(); ++a) {
    if (a < axis) s.pre *= x.shape[(size_t)a];
    if (a > axis) s.post *= x.shape[(size_t)a];
  }
  return s;
}

int unique_axis(const Node &n, const Value &x) { return n.has("axis") ? norm_axis(n.geti("axis", 0), x.rank(), n) : 0; }

// Outputs: the unique slices Y (sorted, or in order of first occurrence),
// the index of each one's first occurrence, each input slice's position in
// Y, and how often each occurs. Slices are compared whole (elementwise
// equality, lexicographic order); the first occurrences are compacted
// (their count is Y's run-time extent U) and sorted by rank. Pairwise:
// O(L^2 x slice) for L slices. Unique in inference graphs runs on small
// tensors (token ids, labels); the bound is the input's length.
void def_unique() {
  OpDef d;
  d.name = "Unique";
  d.min_opset = 11;
  d.attrs = {"axis", "sorted"};
  auto shape_dims = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    Slices sl = unique_slices(n, x);
    // Run-time extents: the number of slices only (a 1-D input without axis).
    for (int a = 0; a < x.rank(); ++a)
      if (x.dim(a) >= 0 && (a != unique_axis(n, x) || (!n.has("axis") && x.rank() != 1)))
        fail_unsupported(n.where() + ": " + describe_dim(g, n.in[0], a) +
                         ": Unique takes a run-time number of slices only (the axis, or a 1-D input)");
    g.check_size({sl.len, sl.len},
                 n.where() + ": the pairwise comparison of its " + std::to_string(sl.len) + " slices");
    set_out(n, g, 0, x.dtype, n.has("axis") ? x.shape : Shape{sl.len});
    int u = produced_axis(n, g, 0, unique_axis(n, x), sl.len);
    const int len_dim = x.dim(unique_axis(n, x));  // a run-time number of slices
    for (size_t k = 1; k < n.out.size(); ++k)
      if (n.out[k] >= 0) {
        set_out(n, g, k, DType::I64, {sl.len});
        g.v(n.out[k]).dims = {k == 2 ? len_dim : u};  // inverse_indices: one per input slice
        if (!g.v(n.out[k]).is_dynamic()) g.v(n.out[k]).dims.clear();
      }
  };
  d.infer = shape_dims;
  d.dims = shape_dims;
  d.lower = [](const Node &n, LowerCtx &c) {
    Graph &g = c.g;
    const Value &x = in_val(g, n, 0);
    const DType t = x.dtype;
    const Slices sl = unique_slices(n, x);
    const int64_t L = sl.len, E = sl.size();
    const std::string base = g.v(n.out[0]).name;
    const int u = g.v(n.out[0]).dim(unique_axis(n, x));
    const ExprP U = g.sym_expr(u);
    const ExprP Lx = g.extent(n.in[0], unique_axis(n, x));  // the slices there are
    const RVar over_len = {kFirstReduceVar, L, x.is_dynamic() ? Lx : nullptr};
    int x3 = c.temp(x.name + "_slices", t, {sl.pre, L, sl.post});
    c.alias(x3, n.in[0]);
    // Element e of slice i (x3 in slot 0).
    auto elem = [&](ExprP i, ExprP e) {
      if (E == 1) return load(0, t, {cidx(0), i, cidx(0)});
      return load(0, t, {bin(EOp::Div, e, cidx(sl.post)), i, bin(EOp::Rem, e, cidx(sl.post))});
    };
    const ExprP i = var(0), j = var(kFirstReduceVar), e = var(kFirstReduceVar + 1);
    const RVar over_e = {kFirstReduceVar + 1, E};
    // first[i]: the first slice equal to slice i (i itself for a NaN).
    int first = c.temp(base + "_first", kIndexType, {L});
    {
      ExprP same;
      std::vector<int> ins = {x3};
      if (E == 1) {
        same = bin(EOp::Eq, elem(j, nullptr), elem(i, nullptr));
      } else {
        int eq = c.temp(base + "_equal", kIndexType, {L, L});  // eq[i, j]: slices i and j agree
        c.kernel(eq, {x3},
                 reduce(ReduceKind::Min, {over_e},
                        select(bin(EOp::Ne, elem(var(0), e), elem(var(1), e)), cidx(0), cidx(1))));
        ins = {eq};
        same = bin(EOp::Eq, load(0, kIndexType, {i, j}), cidx(1));
      }
      same = bin(EOp::Or, same, bin(EOp::Eq, j, i));
      c.kernel(first, ins, reduce(ReduceKind::Min, {over_len}, select(same, j, cidx(L))));
    }
    int is_first = c.temp(base + "_is_first", DType::Bool, {L});
    ExprP firsts_here = bin(EOp::Eq, load(0, kIndexType, {i}), i);
    if (x.is_dynamic()) firsts_here = land(lt(i, Lx), firsts_here);
    c.kernel(is_first, {first}, firsts_here);
    int firsts = c.temp(base + "_firsts", DType::I64, {L});
    g.v(firsts).dims = {u};
    c.compact(firsts, is_first);
    // The slice index at k of an int64 list in slot s (clamped: a list's
    // entries are indices of slices).
    auto slice_at = [&](int s, ExprP k) {
      return emax(cidx(0), emin(cidx(L - 1), cast(load(s, DType::I64, {k}), kIndexType)));
    };
    // src[p]: the first occurrence of the p-th unique slice.
    int src = firsts;
    if (n.geti("sorted", 1)) {
      // rank[q]: unique slices before slice firsts[q] (lexicographic
      // order; incomparable ones, NaNs, by index): a permutation of [0, U).
      const ExprP r = var(kFirstReduceVar);
      ExprP a = slice_at(1, r), b = slice_at(1, var(0));
      std::vector<int> ins = {x3, firsts};
      ExprP less, greater;
      if (E == 1) {
        less = lt(elem(a, nullptr), elem(b, nullptr));
        greater = lt(elem(b, nullptr), elem(a, nullptr));
      } else {
        // at[p, q]: the first element where unique slices p and q differ (E: none).
        int at = c.temp(base + "_differs_at", kIndexType, {L, L});
        g.v(at).dims = {u, u};
        ExprP p = slice_at(1, var(0)), q = slice_at(1, var(1));
        c.kernel(at, {x3, firsts},
                 reduce(ReduceKind::Min, {over_e}, select(bin(EOp::Ne, elem(p, e), elem(q, e)), e, cidx(E))));
        ins.push_back(at);
        ExprP k = load(2, kIndexType, {r, var(0)});
        ExprP kc = emax(cidx(0), emin(k, cidx(E - 1)));
        less = land(lt(k, cidx(E)), lt(elem(a, kc), elem(b, kc)));
        greater = land(lt(k, cidx(E)), lt(elem(b, kc), elem(a, kc)));
      }
      ExprP before = bin(EOp::Or, less, land(un(EOp::Not, greater), lt(a, b)));
      int rank = c.temp(base + "_rank", kIndexType, {L});
      g.v(rank).dims = {u};
      c.kernel(rank, ins, reduce(ReduceKind::Sum, {{kFirstReduceVar, L, U}}, select(before, cidx(1), cidx(0))));
      // src[p] = firsts[the q of rank p]
      src = c.temp(base + "_sorted", DType::I64, {L});
      g.v(src).dims = {u};
      ExprP who =
          reduce(ReduceKind::Sum, {{kFirstReduceVar, L, U}},
                 select(bin(EOp::Eq, load(0, kIndexType, {r}), var(0)), load(1, DType::I64, {r}), cst(DType::I64, 0)));
      c.kernel(src, {rank, firsts}, who);
    }
    // Y: the unique slices.
    {
      const Value &y = g.v(n.out[0]);
      std::vector<ExprP> yi = out_vars(y.rank());
      ExprP s = slice_at(1, n.has("axis") ? var(unique_axis(n, x)) : var(0));
      if (n.has("axis"))
        yi[(size_t)unique_axis(n, x)] = s;
      else
        yi = {cidx(0), s, cidx(0)};
      c.kernel(n.out[0], {n.has("axis") ? n.in[0] : x3, src}, load(0, t, yi));
    }
    if (n.out.size() > 1 && n.out[1] >= 0) c.kernel(n.out[1], {src}, load(0, DType::I64, {var(0)}));
    // inverse[i]: the p whose slice is slice i's first occurrence.
    if (n.out.size() > 2 && n.out[2] >= 0) {
      ExprP hit = bin(EOp::Eq, cast(load(0, DType::I64, {j}), kIndexType), load(1, kIndexType, {i}));
      c.kernel(n.out[2], {src, first},
               cast(reduce(ReduceKind::Sum, {{kFirstReduceVar, L, U}}, select(hit, j, cidx(0))), DType::I64));
    }
    // counts[p]: the slices whose first occurrence is src[p].
    if (n.out.size() > 3 && n.out[3] >= 0) {
      ExprP hit = bin(EOp::Eq, load(1, kIndexType, {j}), cast(load(0, DType::I64, {i}), kIndexType));
      c.kernel(n.out[3], {src, first},
               cast(reduce(ReduceKind::Sum, {over_len}, select(hit, cidx(1), cidx(0))), DType::I64));
    }
  };
  register_op(std::move(d));
}

}  // namespace

int produced_axis(Node &n, Graph &g, size_t k, int axis, int64_t hi) {
  Value &o = g.v(n.out.at(k));
  int s = g.produced_sym(o.name + "[" + std::to_string(axis) + "]", hi);
  o.dims.resize((size_t)o.rank(), -1);
  o.dims[(size_t)axis] = s;
  return s;
}

void register_data_dependent_ops() {
  def_nonzero();
  def_nms();
  def_unique();
}

}  // namespace tinyrt

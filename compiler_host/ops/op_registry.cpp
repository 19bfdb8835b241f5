#include "ops/op_registry.h"

#include <algorithm>
#include <map>

#include "ir/dialect.h"

namespace tinyrt {

void register_elementwise_ops();
void register_nn_ops();
void register_shape_ops();
void register_reduction_ops();
void register_indexing_ops();
void register_normalization_ops();
void register_linalg_ops();
void register_resize_ops();
void register_quantization_ops();
void register_signal_ops();
void register_recurrent_ops();
void register_dynamic_quant_ops();
void register_contrib_quantization_ops();
void register_control_flow_ops();
void register_data_dependent_ops();

static std::map<std::string, OpDef> &raw_table() {
  static std::map<std::string, OpDef> t;
  return t;
}

static std::map<std::string, OpDef> &table() {
  static bool filled = [] {
    register_elementwise_ops();
    register_nn_ops();
    register_shape_ops();
    register_reduction_ops();
    register_indexing_ops();
    register_normalization_ops();
    register_linalg_ops();
    register_resize_ops();
    register_quantization_ops();
    register_signal_ops();
    register_recurrent_ops();
    register_dynamic_quant_ops();
    register_contrib_quantization_ops();
    register_control_flow_ops();
    register_data_dependent_ops();
    return true;
  }();
  (void)filled;
  return raw_table();
}

// Table key: the op's name, prefixed by "DOMAIN::" outside ai.onnx.
static std::string op_key(const std::string &domain, const std::string &op) {
  return domain.empty() || domain == "ai.onnx" ? op : domain + "::" + op;
}

void register_op(OpDef def) {
  std::string key = op_key(def.domain, def.name);
  raw_table()[key] = std::move(def);
}

const OpDef *find_op(const std::string &domain, const std::string &op) {
  auto it = table().find(op_key(domain, op));
  return it == table().end() ? nullptr : &it->second;
}

std::vector<const OpDef *> all_ops() {
  std::vector<const OpDef *> r;
  for (auto &kv : table()) r.push_back(&kv.second);
  return r;
}

void throw_constant_required(const Graph &g, const Node &n, int v) {
  const std::string &name = g.v(v).name;
  std::vector<std::string> from = g.upstream_inputs(v);
  std::string bind;
  for (auto &i : from) bind += (bind.empty() ? "" : ", ") + ("--bind " + i + "=...");
  throw ConstantRequired(name,
                         n.where() + ": input '" + name + "' must be a compile-time constant because it fixes shapes " +
                             "or axes" + (bind.empty() ? std::string() : "; freeze it with " + bind),
                         from);
}

// Ops tinyrt does not implement by design, with the class they belong to
// (docs/OPERATORS.md lists the classes).
const char *out_of_scope_class(const std::string &op) {
  static const std::map<std::string, const char *> classes = {
      {"Bernoulli", "random"},
      {"RandomNormal", "random"},
      {"RandomNormalLike", "random"},
      {"RandomUniform", "random"},
      {"RandomUniformLike", "random"},
      {"Multinomial", "random"},
      {"StringNormalizer", "strings"},
      {"RegexFullMatch", "strings"},
      {"Optional", "optionals"},
      {"OptionalHasElement", "optionals"},
      {"OptionalGetElement", "optionals"},
      {"ConcatFromSequence", "sequences"},
      {"SplitToSequence", "sequences"},
  };
  auto it = classes.find(op);
  if (it != classes.end()) return it->second;
  if (op.rfind("Sequence", 0) == 0) return "sequences";
  return nullptr;
}

const OpDef &check_node(const Node &n, const Graph &g) {
  const OpDef *d = find_op(n.domain, n.op);
  if (!d) {
    if (n.domain == "ai.onnx.preview.training")
      fail_unsupported(n.where() + ": training ops are out of scope (domain " + n.domain + ")");
    if (!n.domain.empty() && n.domain != "ai.onnx")
      fail_unsupported(n.where() + ": domain '" + n.domain + "' is not supported; for a custom op implemented in C, " +
                       "declare it with --custom-op " + n.domain + "::" + n.op + "=C_SYMBOL (docs/ABI.md)");
    if (const char *cls = out_of_scope_class(n.op)) fail_unsupported(n.where() + ": out of scope (" + cls + ")");
    fail_unsupported(n.where() + ": op " + n.op + " is not supported");
  }
  if (n.opset < d->min_opset)
    fail_unsupported(n.where() + ": opset " + std::to_string(n.opset) + " semantics of " + n.op +
                     " are not supported (need opset >= " + std::to_string(d->min_opset) + ")");
  for (auto &kv : n.attrs)
    if (kv.first[0] != '_' && std::find(d->attrs.begin(), d->attrs.end(), kv.first) == d->attrs.end())
      fail_unsupported(n.where() + ": attribute '" + kv.first + "' is not supported");
  if (!d->types.empty()) require_types(n, g, 0, d->types);
  // A symbolic value (Value::sym) is taken where a constant is required by
  // an op with a dims rule, which reads its run-time elements
  // (infer_and_fold refuses the node otherwise).
  for (int k : d->const_inputs)
    if (n.has_in(k) && !g.v(n.in[k]).is_const() && !(g.v(n.in[k]).is_sym() && d->dims))
      throw_constant_required(g, n, n.in[k]);
  return *d;
}

std::vector<ExprP> out_vars(int rank) {
  std::vector<ExprP> v;
  for (int k = 0; k < rank; ++k) v.push_back(var(k));
  return v;
}

std::vector<ExprP> broadcast_index(const Shape &in, int out_rank) {
  std::vector<ExprP> idx;
  int off = out_rank - (int)in.size();
  for (size_t k = 0; k < in.size(); ++k) idx.push_back(in[k] == 1 ? cidx(0) : var(off + (int)k));
  return idx;
}

Shape broadcast_shapes(const Shape &a, const Shape &b, const Node &n) {
  size_t r = std::max(a.size(), b.size());
  Shape s(r);
  for (size_t k = 0; k < r; ++k) {
    int64_t da = k + a.size() >= r ? a[k + a.size() - r] : 1;
    int64_t db = k + b.size() >= r ? b[k + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1)
      fail_invalid(n.where() + ": shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast");
    s[k] = da == 1 ? db : da;
  }
  return s;
}

int norm_axis(int64_t axis, int rank, const Node &n) {
  if (axis < -rank || axis >= rank)  // a scalar has no axis
    fail_invalid(n.where() + ": axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return (int)(axis < 0 ? axis + rank : axis);
}

std::vector<int64_t> const_ints(const Graph &g, const Node &n, size_t input) {
  const Value &v = in_val(g, n, input);
  if (v.dtype != DType::I64 && v.dtype != DType::I32)
    fail_invalid(n.where() + ": input '" + v.name + "' must be int64 or int32");
  if (v.is_sym() && !v.is_const()) {  // the elements' upper bounds (the op's dims rule reads them exactly)
    std::vector<int64_t> r;
    for (const ExprP &e : v.sym) {
      Interval b = index_range(sym_index(e), {});
      if (!b.known) fail_unsupported(n.where() + ": input '" + v.name + "' has no bounds: " + to_string(e));
      r.push_back(b.hi);
    }
    return r;
  }
  if (!v.is_const()) throw_constant_required(g, n, n.in[input]);
  std::vector<int64_t> r(v.numel());
  for (int64_t i = 0; i < v.numel(); ++i) r[i] = v.data->get_i(i);
  return r;
}

void set_out(Node &n, Graph &g, size_t k, DType t, Shape s) {
  // The format's type constraints (inputs sharing a type parameter of the
  // op's ONNX schema), after the op's own checks, which name the inputs in
  // their terms.
  if (k == 0 && g.dialect) g.dialect->check_shared_types(n, g);
  if (k >= n.out.size() || n.out[k] < 0) return;
  for (int64_t d : s)
    if (d < 0) fail_invalid(n.where() + ": computed a negative dimension " + shape_str(s));
  g.check_size(s, n.where() + ": output " + std::to_string(k));
  Value &v = g.v(n.out[k]);
  v.dtype = t;
  v.shape = std::move(s);
  v.shape_known = true;
}

void require_broadcastable(const Node &n, const Graph &g, size_t k, const Shape &target, const char *what) {
  if (!n.has_in(k)) return;
  const Shape &s = in_val(g, n, k).shape;
  bool ok = s.size() <= target.size();
  for (size_t i = 0; ok && i < s.size(); ++i) {
    int64_t t = target[target.size() - s.size() + i];
    ok = s[i] == 1 || s[i] == t;
  }
  if (!ok)
    fail_invalid(n.where() + ": " + what + " has shape " + shape_str(s) + ", which does not broadcast to " +
                 shape_str(target));
}

void require_types(const Node &n, const Graph &g, size_t input, const std::vector<DType> &types) {
  if (!n.has_in(input)) return;
  DType t = in_val(g, n, input).dtype;
  if (std::find(types.begin(), types.end(), t) != types.end()) return;
  fail_unsupported(n.where() + ": input " + std::to_string(input) + " of type " + dtype_name(t) + " is not supported");
}

void require_one_element(const Node &n, const Graph &g, size_t k, const char *what) {
  if (!n.has_in(k)) return;
  const Value &v = in_val(g, n, k);
  if (v.numel() != 1)
    fail_invalid(n.where() + ": " + what + " has shape " + shape_str(v.shape) + "; it must hold one element");
}

void require_dtype(const Node &n, const Graph &g, size_t k, DType t, const char *what) {
  if (!n.has_in(k)) return;
  DType have = in_val(g, n, k).dtype;
  if (have != t) fail_invalid(n.where() + ": " + what + " is " + dtype_name(have) + "; it must be " + dtype_name(t));
}

void require_const_values_in(const Node &n, const Graph &g, size_t k, int64_t lo, int64_t hi, const char *what,
                             const int64_t *except) {
  if (!n.has_in(k)) return;
  const Value &v = in_val(g, n, k);
  if (!v.is_const()) return;
  for (int64_t i = 0; i < v.numel(); ++i) {
    int64_t x = v.data->get_i(i);
    if ((x < lo || x >= hi) && !(except && x == *except))
      fail_invalid(n.where() + ": " + what + " " + std::to_string(x) + " (element " + std::to_string(i) + " of '" +
                   v.name + "') is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + ")" +
                   (except ? " and is not " + std::to_string(*except) : std::string()));
  }
}

void require_indices_in_range(const Node &n, const Graph &g, size_t k, const std::vector<int64_t> &dims) {
  if (!n.has_in(k) || dims.empty()) return;
  const Value &v = in_val(g, n, k);
  if (!v.is_const()) return;
  for (int64_t i = 0; i < v.numel(); ++i) {
    int64_t ix = v.data->get_i(i), dim = dims[(size_t)i % dims.size()];
    if (ix < -dim || ix >= dim)
      fail_invalid(n.where() + ": index " + std::to_string(ix) + " of '" + v.name +
                   "' is out of range for an axis of " + std::to_string(dim));
  }
}

std::string describe_dim(const Graph &g, int v, int axis) {
  const Value &x = g.v(v);
  int d = x.dim(axis);
  std::string s = "'" + x.name + "' axis " + std::to_string(axis);
  if (d < 0) return s + " (" + std::to_string(x.shape.at((size_t)axis)) + ")";
  const DimSym &sym = g.syms.at((size_t)d);
  return s + " (the run-time dimension " + sym.name + ", " + std::to_string(sym.lo) + ":" + std::to_string(sym.hi) +
         ")";
}

bool agree_at_run_time(Graph &g, const Node &n, int va, int ka, int vb, int kb) {
  if (g.v(va).dim(ka) == g.v(vb).dim(kb)) return true;
  return agree_at_run_time(g, n, g.extent(va, ka), g.extent(vb, kb),
                           "needs " + describe_dim(g, va, ka) + " and " + describe_dim(g, vb, kb) + " equal");
}

bool agree_at_run_time(Graph &g, const Node &n, const ExprP &a, const ExprP &b, const std::string &what) {
  if (same_extent(g, a, b)) return true;
  bool produced = false;
  for (const ExprP &e : {a, b})
    visit(e, [&](const Expr &x) { produced = produced || (x.op == EOp::Dim && g.syms.at((size_t)x.id).produced); });
  if (produced) return false;
  for (const Graph::ExtentCheck &c : g.extent_checks)
    if ((to_string(c.a) == to_string(a) && to_string(c.b) == to_string(b)) ||
        (to_string(c.a) == to_string(b) && to_string(c.b) == to_string(a)))
      return true;
  g.extent_checks.push_back({a, b, "extents differ in this run: " + n.where() + " " + what});
  return true;
}

bool reads_run_time_dims(const OpDef &d, const Node &n, const Graph &g) {
  for (size_t k = 0; k < n.in.size(); ++k) {
    if (n.in[k] < 0 || !g.v(n.in[k]).is_dynamic()) continue;
    if (!d.dims) {
      const Value &x = g.v(n.in[k]);
      int axis = 0;
      while (x.dim(axis) < 0) ++axis;
      fail_unsupported(n.where() + ": input " + describe_dim(g, n.in[k], axis) + ": " + n.op +
                       " does not take run-time dimensions yet (give the input a fixed shape with --input-shape)");
    }
    return true;
  }
  return false;
}

void infer_node(Node &n, Graph &g) {
  const OpDef &d = check_node(n, g);
  d.infer(n, g);
  if (!reads_run_time_dims(d, n, g)) return;
  for (int v : n.out)
    if (v >= 0) g.v(v).dims.clear();
  d.dims(n, g);
}

void dims_like_input(Node &n, Graph &g) {
  const Value &x = in_val(g, n, 0);
  for (int o : n.out)
    if (o >= 0 && g.v(o).rank() == x.rank()) g.v(o).dims = x.dims;
}

void dims_broadcast(Node &n, Graph &g) {
  for (int o : n.out) {
    if (o < 0) continue;
    Value &out = g.v(o);
    const int r = out.rank();
    std::vector<int> dims((size_t)r, -1);
    for (int a = 0; a < r; ++a) {
      int from = -1, sym = -1;  // the input giving the axis its extent
      for (int v : n.in) {
        if (v < 0) continue;
        const Value &x = g.v(v);
        int k = a - (r - x.rank());
        if (k < 0) continue;
        int d = x.dim(k);
        if (d < 0) continue;
        if (sym >= 0 && d != sym) {
          if (!agree_at_run_time(g, n, from, a - (r - g.v(from).rank()), v, k))
            fail_unsupported(n.where() + ": " + describe_dim(g, from, a - (r - g.v(from).rank())) + " and " +
                             describe_dim(g, v, k) +
                             " meet on one axis, and one is computed from the data: tinyrt cannot test that they "
                             "are equal before the run");
          continue;  // the first input's extent, tested equal at run time
        }
        sym = d;
        from = v;
      }
      if (sym < 0) continue;
      for (int v : n.in) {
        if (v < 0) continue;
        const Value &x = g.v(v);
        int k = a - (r - x.rank());
        if (k >= 0 && x.dim(k) < 0 && x.shape[(size_t)k] != 1)
          fail_unsupported(n.where() + ": " + describe_dim(g, from, a - (r - g.v(from).rank())) + " meets " +
                           describe_dim(g, v, k) + ": a fixed size equals a run-time extent only at one value");
      }
      dims[(size_t)a] = sym;
    }
    out.dims = dims;
    if (!out.is_dynamic()) out.dims.clear();
  }
}

}  // namespace tinyrt

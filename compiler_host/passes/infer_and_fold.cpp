// infer_and_fold.cpp — walks the graph in order: validates each node
// against the op table, infers its output shapes, and evaluates it on the
// host when its inputs are constants (PyTorch's Shape/Gather/Concat chains
// that compute Reshape targets disappear here).
#include "ir/dialect.h"
#include "ir/interp.h"
#include "ops/op_registry.h"
#include "passes/pass.h"

#include <algorithm>
#include <functional>

namespace tinyrt {

namespace {

// Evaluates lowered kernels at once; used only on constant inputs.
// Each kernel's interpretation is charged to `*ops` (element operations,
// interpret_cost) before it runs; past Limits::max_fold_ops the model is
// refused, naming the node.
class FoldCtx : public LowerCtx {
 public:
  FoldCtx(Graph &g, const Node &n, int64_t *ops) : LowerCtx(g), n_(n), ops_(ops) {}
  void kernel(int out, std::vector<int> ins, ExprP expr) override {
    std::vector<ConstP> data;
    for (int v : ins) {
      if (!g.v(v).is_const()) fail_internal("folding reads non-constant '" + g.v(v).name + "'");
      data.push_back(g.v(v).data);
    }
    Value &o = g.v(out);
    const int64_t cost = sat_mul(interpret_cost(expr), std::max<int64_t>(shape_numel(o.shape), 1));
    const int64_t total = sat_add(*ops_, cost);
    if (total > g.limits.max_fold_ops)
      fail_cap(n_.where() + ": folding it on constant inputs would take " +
               (cost == INT64_MAX ? std::string("2^63 or more") : std::to_string(cost)) +
               " element operations, past the limit of " + std::to_string(g.limits.max_fold_ops) +
               " for the whole model (" + std::to_string(*ops_) + " used; --max-fold-ops)");
    *ops_ = total;
    o.data = interpret(expr, o.dtype, o.shape, data);
  }
  void scheduled(KernelKind, int out, std::vector<int> ins, ExprP expr, const GemmSpec &) override {
    kernel(out, std::move(ins), std::move(expr));
  }
  void recurrent(int, std::vector<int>, const RecurrentSpec &) override {
    fail_internal("a recurrent layer reached constant folding");
  }
  void alias(int out, int in) override {
    Value &o = g.v(out);
    o.data = make_const(o.dtype, o.shape, g.v(in).data->bytes);
  }

 private:
  const Node &n_;
  int64_t *ops_;
};

// Folding materializes the result; keep huge expansions as code instead.
constexpr int64_t kMaxFoldElements = 1 << 22;

// A custom op's outputs: declared by the model (value_info or graph
// outputs) or, with the `same` rule, output 0 is input 0's type and shape.
// Never folded: the call happens at run time.
void infer_custom_op(Node &n, Graph &g, const CustomOpDecl &d) {
  std::string decl = "--custom-op " + d.domain + "::" + d.op + "=" + d.symbol;
  for (size_t k = 0; k < n.in.size(); ++k)
    if (n.in[k] < 0)
      fail_unsupported(n.where() + ": custom op input " + std::to_string(k) +
                       " is omitted; calls take present inputs only");
  if (n.out.empty()) fail_invalid(n.where() + ": custom op without outputs");
  for (size_t k = 0; k < n.out.size(); ++k) {
    if (n.out[k] < 0)
      fail_unsupported(n.where() + ": custom op output " + std::to_string(k) + " is omitted; name every output");
    const Value &o = g.v(n.out[k]);
    auto it = g.declared.find(n.out[k]);
    if (k == 0 && d.same) {
      if (n.in.empty()) fail_usage(n.where() + ": " + decl + ":same needs an input 0");
      const Value &x = g.v(n.in[0]);
      if (it != g.declared.end() && (it->second.first != x.dtype || it->second.second != x.shape))
        fail_invalid(n.where() + ": output '" + o.name + "' is declared " + dtype_name(it->second.first) +
                     shape_str(it->second.second) + " in the model but " + decl + ":same makes it " +
                     dtype_name(x.dtype) + shape_str(x.shape));
      set_out(n, g, 0, x.dtype, x.shape);
      continue;
    }
    if (it == g.declared.end())
      fail_unsupported(n.where() + ": the type and shape of custom op output " + std::to_string(k) + " '" + o.name +
                       "' are unknown (no shape inference can know a custom op): declare it with a static "
                       "shape in the model's value_info (or as a graph output)" +
                       (k == 0 ? ", or pass " + decl + ":same if it has input 0's type and shape" : std::string()));
    set_out(n, g, k, it->second.first, it->second.second);
  }
}

enum class Visit { Spliced, Folded, Kept };
using Splice = std::function<void(size_t, const std::vector<Node> &)>;

// Validates node i, then expands it (a function or control flow: spliced
// in its place, *origin keeps the node), or infers its outputs and folds it
// when its inputs are constants.
Visit visit_node(PassContext &c, const InferAndFoldOptions &o, Graph &g, size_t i, const Splice &splice, Node *origin,
                 int64_t *fold_ops) {
  const Node &cur = g.nodes[i];
  if (const CustomOpDecl *cd = c.program.custom_op(cur)) {
    infer_custom_op(g.nodes[i], g, *cd);
    return Visit::Kept;
  }
  // ONNX functions: an op defined by a function body we lack (or, on
  // request, any) becomes the body's nodes.
  if (!find_op(cur.domain, cur.op) || (o.prefer_function_bodies && cur.op != "Identity")) {
    std::vector<Node> body;
    Node fn_node = cur;
    if (g.dialect && g.dialect->expand_function(fn_node, g, &body)) {
      for (Node &x : body) x.guard = fn_node.guard;
      splice(i, body);
      *origin = fn_node;
      return Visit::Spliced;
    }
  }
  const OpDef &d = check_node(g.nodes[i], g);
  if (d.expand) {  // control flow: splice its expansion in its place
    Node cf = g.nodes[i];
    std::vector<Node> repl = d.expand(cf, g);
    if (!d.expand_sets_guards)
      for (Node &x : repl) x.guard = cf.guard;
    splice(i, repl);
    *origin = cf;
    return Visit::Spliced;
  }
  Node &n = g.nodes[i];
  // Nodes are visited in order: an input without a shape yet is computed
  // later, or by this node (a subgraph reading its own node's output).
  for (int v : n.in)
    if (v >= 0 && !g.v(v).shape_known)
      fail_invalid(n.where() + ": input '" + g.v(v).name + "' is read before it is computed (a cycle)");
  d.infer(n, g);
  for (int v : n.out)
    if (v >= 0 && !g.v(v).shape_known) fail_internal(n.where() + ": inference left an output without shape");
  // Run-time extents: the op's rule gives its outputs theirs (from the
  // inputs' extents and the symbolic values it reads as shapes); such a
  // node is never folded (its inputs are not constants).
  bool symbolic_shape = false;
  for (int k : d.const_inputs)
    symbolic_shape = symbolic_shape || (n.has_in((size_t)k) && g.v(n.in[k]).is_sym() && !g.v(n.in[k]).is_const());
  symbolic_shape = reads_run_time_dims(d, n, g) || symbolic_shape;
  if (symbolic_shape) {  // (check_node let a symbolic shape input through only for an op with a dims rule)
    for (int v : n.out)
      if (v >= 0) g.v(v).dims.clear();
    d.dims(n, g);
    fold_symbolic(n, g, d);  // small outputs computed from the extents alone (Shape)
    return Visit::Kept;
  }
  // Shape arithmetic on symbolic values: their elements, through the op's
  // own lowering; computed at run time too unless they all fold.
  for (int v : n.in)
    if (v >= 0 && g.v(v).is_sym() && !g.v(v).is_const()) return fold_symbolic(n, g, d) ? Visit::Folded : Visit::Kept;
  if (d.fold) {
    std::vector<ConstP> outs = d.fold(n, g);
    for (size_t k = 0; k < n.out.size() && k < outs.size(); ++k)
      if (n.out[k] >= 0) g.v(n.out[k]).data = outs[k];
    return Visit::Folded;
  }
  bool all_const = true;
  for (int v : n.in) all_const = all_const && (v < 0 || g.v(v).is_const());
  int64_t size = 0;
  for (int v : n.out)
    if (v >= 0) size += g.v(v).numel();
  // Quantized weights stay integers for fuse_qdq, which folds the rest.
  bool quantized_weight = n.op == "DequantizeLinear" && n.domain.empty() &&
                          (in_val(g, n, 0).dtype == DType::I8 || in_val(g, n, 0).dtype == DType::U8);
  // A data-dependent size (an output axis of a produced extent: NonZero,
  // NMS, Unique, Compress) is computed at run time, constant inputs or not.
  bool produced = false;
  for (int v : n.out)
    for (int a = 0; v >= 0 && a < g.v(v).rank(); ++a)
      produced = produced || (g.v(v).dim(a) >= 0 && g.syms[(size_t)g.v(v).dim(a)].produced);
  if (all_const && d.lower && size <= kMaxFoldElements && !quantized_weight && !produced) {
    FoldCtx fc(g, n, fold_ops);
    d.lower(n, fc);
    return Visit::Folded;
  }
  return Visit::Kept;
}

// Does guard `gd` or one of its parents belong to a branch that cannot be
// compiled?
bool branch_failed(const Graph &g, int gd) {
  for (; gd >= 0; gd = g.guards[gd].parent)
    if (!g.guards[gd].failure.empty()) return true;
  return false;
}

// Node i merges the branches of an If with a runtime condition (a Where
// with _if_condition, control_flow.cpp). When one branch cannot be
// compiled, the merge becomes a copy of the other branch's value, and a
// BranchError node guarded like the failed branch stops the run when it
// is taken (once per branch); when neither can, the If cannot be compiled
// for these input shapes. Returns true when node i was replaced.
bool resolve_merge(Graph &g, size_t i, const Splice &splice) {
  const Node &n = g.nodes[i];
  if (n.op != "Where" || !n.domain.empty() || !n.has("_if_condition")) return false;
  const int gt = (int)n.geti("_if_condition", -1), ge = gt + 1;
  const Guard &t = g.guards.at(gt), &e = g.guards.at(ge);
  if (t.failure.empty() && e.failure.empty()) return false;
  if (!t.failure.empty() && !e.failure.empty()) {
    std::string bind;
    for (auto &in : g.upstream_inputs(t.cond)) bind += (bind.empty() ? "" : ", ") + ("--bind " + in + "=...");
    fail_unsupported("neither branch of the If whose condition is '" + g.v(t.cond).name +
                     "' can be compiled for the model's input shapes (then: " + t.failure + "; else: " + e.failure +
                     ")" + (bind.empty() ? std::string() : "; choose one with " + bind));
  }
  const int bad = t.failure.empty() ? ge : gt;
  const int good_value = n.in.at(bad == gt ? 2 : 1);
  Node copy = make_node(g, "Identity", n.name, {good_value}, {n.out.at(0)});
  copy.guard = n.guard;
  std::vector<Node> repl = {copy};
  bool placed = false;
  for (const Node &x : g.nodes) placed = placed || (x.op == "BranchError" && x.guard == bad);
  if (!placed) {
    const Guard &b = g.guards[bad];
    // The runtime's message buffer is short: the reason goes first.
    std::string msg = "the model was not compiled for the " + b.what + " (" + b.failure + ")";
    if (msg.size() > 400) msg = msg.substr(0, 397) + "...";
    int placeholder = new_value(g, n.name + "_branch_error");
    Node err = make_node(g, "BranchError", n.name + "_branch_error", {b.eff}, {placeholder});
    err.domain = "tinyrt";
    err.guard = bad;
    err.attrs["message"].kind = Attr::Kind::String;
    err.attrs["message"].s = msg;
    err.attrs["_branch"] = int_attr(bad);
    g.effects.push_back(placeholder);
    repl.push_back(err);
  }
  splice(i, repl);
  return true;
}

// The types and shapes the model declares for its values (value_info,
// graph outputs) must be what its nodes compute: the application reads
// the declared ones. A symbolic dimension matches any, a run-time extent
// any size in its bounds.
void check_declarations(const Graph &g) {
  for (const auto &kv : g.model_declared) {
    const Value &v = g.v(kv.first);
    const Graph::Declaration &d = kv.second;
    if (!v.shape_known) continue;
    bool type_ok = d.dtype == DType::Undefined || d.dtype == v.dtype;
    bool shape_ok = !d.has_shape || d.dims.size() == v.shape.size();
    // A run-time extent matches a size within its bounds (an exporter's
    // one run of a data-dependent size).
    for (size_t i = 0; shape_ok && d.has_shape && i < d.dims.size(); ++i) {
      const int s = v.dim((int)i);
      shape_ok = d.dims[i] < 0 || d.dims[i] == v.shape[i] ||
                 (s >= 0 && d.dims[i] >= g.syms[(size_t)s].lo && d.dims[i] <= g.syms[(size_t)s].hi);
    }
    if (type_ok && shape_ok) continue;
    std::string decl = d.dtype == DType::Undefined ? std::string("?") : dtype_name(d.dtype);
    if (d.has_shape) {
      decl += "[";
      for (size_t i = 0; i < d.dims.size(); ++i)
        decl += (i ? "," : "") + (d.dims[i] < 0 ? std::string("?") : std::to_string(d.dims[i]));
      decl += "]";
    }
    fail_invalid("value '" + v.name + "' is declared " + decl + " in the model, but its producer computes " +
                 dtype_name(v.dtype) + shape_str(v.shape));
  }
}

// A symbolic value read as a shape (a constant input of an op with a dims
// rule, which took its elements) is not needed at run time: the reader
// gets a constant of the elements' upper bounds that carries the elements
// too (Value::sym), so that the Shape/Gather/Concat chain computing it is
// dropped as dead.
void detach_symbolic_shapes(Graph &g) {
  for (Node &n : g.nodes) {
    const OpDef *d = find_op(n.domain, n.op);
    if (!d) continue;
    for (int k : d->const_inputs) {
      if (!n.has_in((size_t)k)) continue;
      const Value &v = g.v(n.in[k]);
      if (!v.is_sym() || v.is_const()) continue;
      std::vector<double> hi;
      for (int64_t x : const_ints(g, n, (size_t)k)) hi.push_back((double)x);  // the elements' upper bounds
      ConstP bounds = values_as_tensor(hi, v.dtype, v.shape, "the symbolic value '" + v.name + "'");
      std::vector<ExprP> sym = v.sym;
      int c = g.add_const(g.fresh_name(v.name + "_bounds"), bounds);
      g.v(c).sym = sym;
      n.in[k] = c;
    }
  }
}

}  // namespace

void infer_and_fold(PassContext &c, const InferAndFoldOptions &o) {
  Graph &g = c.program.graph;
  int folded = 0;
  const size_t start_nodes = g.nodes.size();
  int64_t folded_bytes = 0, fold_ops = 0;
  // g.nodes holds the nodes visited so far, the node being visited last;
  // `todo` the nodes still to visit, the next one last. An expansion
  // replaces the node being visited by its nodes, pushed onto `todo` (so
  // a node costs the same wherever it is: no shifting of the nodes after
  // it, which made nested Loops quadratic). Producers of what a node reads
  // are visited before it, so messages that trace producers find them in
  // g.nodes; folded nodes are dropped at the end.
  std::vector<Node> todo(std::make_move_iterator(g.nodes.rbegin()), std::make_move_iterator(g.nodes.rend()));
  g.nodes.clear();
  std::vector<bool> drop;
  auto check_growth = [&](const Node &n) {
    size_t total = g.nodes.size() + todo.size();
    if ((int64_t)(total - std::min(total, start_nodes)) > g.limits.max_expanded_nodes)
      fail_unsupported(n.where() + ": expanding control flow and functions exceeds the limit of " +
                       std::to_string(g.limits.max_expanded_nodes) + " added nodes (--max-expanded-nodes)");
  };
  auto count_folded = [&](const Node &n) {
    for (int v : n.out)
      if (v >= 0 && g.v(v).data) folded_bytes += (int64_t)g.v(v).data->bytes.size();
    if (folded_bytes > g.limits.max_folded_bytes)
      fail_unsupported(n.where() + ": constant folding has created " + std::to_string(folded_bytes) +
                       " bytes of constants, more than the limit of " + std::to_string(g.limits.max_folded_bytes) +
                       " (--max-folded-bytes)");
  };
  auto splice = [&](size_t i, const std::vector<Node> &repl) {
    if (i + 1 != g.nodes.size()) fail_internal("infer_and_fold: splice of a node other than the one visited");
    g.nodes.pop_back();
    drop.pop_back();
    todo.insert(todo.end(), repl.rbegin(), repl.rend());
  };
  while (!todo.empty()) {
    g.nodes.push_back(std::move(todo.back()));
    todo.pop_back();
    drop.push_back(false);
    const size_t i = g.nodes.size() - 1;
    const int guard = g.nodes[i].guard;
    // A node of a branch that cannot be compiled (but the error step that
    // stands for that branch).
    if (branch_failed(g, guard) && !(g.nodes[i].op == "BranchError" && g.nodes[i].domain == "tinyrt")) {
      drop[i] = true;
      continue;
    }
    // What the node became: spliced (an expansion replaced it), folded, or
    // kept; the budget checks run outside the try, so that exceeding a cap
    // always fails the compilation.
    Visit done = Visit::Kept;
    Node origin;
    try {
      if (resolve_merge(g, i, splice)) continue;
      done = visit_node(c, o, g, i, splice, &origin, &fold_ops);
    } catch (const CompileError &e) {
      // In a branch of an If with a runtime condition, an error for the
      // model's shapes makes the branch a run-time error instead (but a
      // value that must be constant still names the inputs to bind).
      if (guard < 0 || g.guards[guard].must_compile || e.kind() == CompileError::Kind::Internal ||
          e.kind() == CompileError::Kind::Usage || dynamic_cast<const ConstantRequired *>(&e) ||
          dynamic_cast<const CapExceeded *>(&e))
        throw;
      g.guards[guard].failure = e.what();
      if (c.log) *c.log << "    " << g.guards[guard].what << " is not compiled: " << e.what() << "\n";
      drop[i] = true;
      continue;
    }
    if (done == Visit::Spliced) {
      check_growth(origin);
    } else if (done == Visit::Folded) {
      count_folded(g.nodes[i]);
      drop[i] = true;
      ++folded;
    }
  }
  check_declarations(g);
  g.remove_nodes(drop);
  detach_symbolic_shapes(g);
  g.remove_dead_nodes();
  if (c.log) *c.log << "  folded " << folded << " nodes, " << g.nodes.size() << " remain\n";
}

}  // namespace tinyrt

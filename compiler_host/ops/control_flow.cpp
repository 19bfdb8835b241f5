// control_flow.cpp — If, Loop and Scan: their subgraphs are inlined into
// the graph (infer_and_fold splices the expansion in place of the node,
// then infers and folds it like any other nodes).
//  * If: a constant condition keeps one branch; a runtime condition keeps
//    both, each under a guard (Graph::guards: its steps run only when the
//    branch is taken), and selects (outputs must then have one shape); a
//    branch that cannot be compiled for the input shapes becomes a step
//    that stops the run when taken.
//  * Loop: the body must pass its condition through; it unrolls. A trip
//    count computed at run time from extents (Shape(x)[0], with x's
//    dimension a range) unrolls to its bound, each iteration's nodes under
//    a guard (its index below the count), the carried values selected past
//    the count, the scan outputs stacked to the bound and cut at the count.
//  * Scan: unrolls over the static sequence length.
#include <algorithm>
#include <set>

#include "ir/subgraph.h"
#include "ops/op_registry.h"

namespace tinyrt {

namespace {

void set_int(Node &n, const std::string &name, int64_t v) { n.attrs[name] = int_attr(v); }

// Stacks per-iteration values along `axis` (Unsqueeze then Concat) into `out`.
void stack(Graph &g, std::vector<Node> &nodes, const std::vector<int> &parts, int64_t axis, int out,
           const std::string &base) {
  std::vector<int> us;
  int axes = g.add_const(g.fresh_name(base + "_axes"), make_const_i64({1}, {axis}));
  for (int p : parts) {
    int u = new_value(g, base + "_unsq");
    nodes.push_back(make_node(g, "Unsqueeze", base + "_unsq", {p, axes}, {u}));
    nodes.back().opset = std::max(13, g.opset);
    us.push_back(u);
  }
  Node cat = make_node(g, "Concat", base + "_concat", us, {out});
  set_int(cat, "axis", axis);
  nodes.push_back(cat);
}

Node identity(Graph &g, int in, int out, const std::string &base) {
  return make_node(g, "Identity", base, {in}, {out});
}

// ------------------------------------------------------------------- If --

// A branch output that its own nodes do not compute is a value from outside
// the If, which must exist before it (not the If's own output: a cycle).
void require_computed(const Node &n, const Graph &g, const InlinedGraph &b, const char *what) {
  std::set<int> made;
  for (const Node &x : b.nodes) made.insert(x.out.begin(), x.out.end());
  for (int v : b.outputs)
    if (!made.count(v) && !g.v(v).shape_known && !g.v(v).is_const())
      fail_invalid(n.where() + ": " + what + " returns '" + g.v(v).name +
                   "', which is not computed before the node (a cycle)");
}

// Each branch must give every output of the node.
void require_outputs(const Node &n, const Subgraph &body, const char *what) {
  if (body.outputs.size() < n.out.size())
    fail_invalid(n.where() + ": " + what + " has " + std::to_string(body.outputs.size()) + " outputs, the node " +
                 std::to_string(n.out.size()));
}

// A branch of an If whose condition is known only at run time: its nodes
// run only when the condition is `expect` (and the If's own guard holds).
// A nested branch tests one byte too: the And of its parent's condition and
// its own, computed by nodes that run always (their result is false
// whenever the parent does not hold, whatever the skipped parent left in
// the inner condition's bytes).
int add_guard(Graph &g, const Node &n, std::vector<Node> &nodes, bool expect, int cond, const std::string &what) {
  Guard gd;
  gd.cond = cond;
  gd.expect = expect;
  gd.parent = n.guard;
  gd.what = what;
  if (n.guard < 0) {
    gd.eff = gd.cond;
    gd.eff_expect = expect;
  } else {
    auto holds = [&](int v, bool want) {  // a bool that is true when v == want
      if (want) return v;
      int r = new_value(g, n.name + "_not");
      nodes.push_back(make_node(g, "Not", n.name + "_not", {v}, {r}));
      return r;
    };
    const Guard &pg = g.guards.at(n.guard);
    int a = holds(pg.eff, pg.eff_expect), b = holds(gd.cond, expect);
    gd.eff = new_value(g, n.name + (expect ? "_then" : "_else"));
    nodes.push_back(make_node(g, "And", n.name + "_guard", {a, b}, {gd.eff}));
  }
  g.guards.push_back(gd);
  return (int)g.guards.size() - 1;
}

std::vector<Node> expand_if(const Node &n, Graph &g) {
  const Value &cond = in_val(g, n, 0);
  const auto &then_g = *n.attrs.at("then_branch").graph, &else_g = *n.attrs.at("else_branch").graph;
  require_dtype(n, g, 0, DType::Bool, "the condition");
  require_one_element(n, g, 0, "the condition");
  require_outputs(n, then_g, "then_branch");
  require_outputs(n, else_g, "else_branch");
  std::vector<Node> nodes;
  if (cond.is_const()) {
    InlinedGraph b = inline_subgraph(g, cond.data->get_i(0) ? then_g : else_g, {}, n.name + "/");
    nodes = b.nodes;
    for (size_t k = 0; k < n.out.size(); ++k)
      if (n.out[k] >= 0) nodes.push_back(identity(g, b.outputs.at(k), n.out[k], n.name + "_out"));
    for (Node &x : nodes) x.guard = n.guard;
    return nodes;
  }
  // Known only at run time: each branch runs under its guard, and a merge
  // per output selects the branch's value (infer_and_fold turns the merge
  // into a copy of one branch when the other cannot be compiled).
  int gt = add_guard(g, n, nodes, true, n.in[0], "then branch of " + n.where());
  int ge = add_guard(g, n, nodes, false, n.in[0], "else branch of " + n.where());
  InlinedGraph t = inline_subgraph(g, then_g, {}, n.name + "/then/");
  InlinedGraph e = inline_subgraph(g, else_g, {}, n.name + "/else/");
  require_computed(n, g, t, "then_branch");
  require_computed(n, g, e, "else_branch");
  for (Node &x : t.nodes) x.guard = gt;
  for (Node &x : e.nodes) x.guard = ge;
  nodes.insert(nodes.end(), t.nodes.begin(), t.nodes.end());
  nodes.insert(nodes.end(), e.nodes.begin(), e.nodes.end());
  for (size_t k = 0; k < n.out.size(); ++k) {
    if (n.out[k] < 0) continue;
    Node w = make_node(g, "Where", n.name + "_select", {n.in[0], t.outputs.at(k), e.outputs.at(k)}, {n.out[k]});
    w.attrs["_if_condition"] = int_attr(gt);  // the then guard; the else guard follows it
    w.guard = n.guard;
    nodes.push_back(w);
  }
  return nodes;
}

// The step that stops the run when a branch that could not be compiled is
// taken (infer_and_fold places it, marked _branch, which a file cannot
// set): input 0 is the branch guard's condition, output 0 a placeholder
// nothing reads (Graph::effects keeps the node).
void def_branch_error() {
  OpDef d;
  d.name = "BranchError";
  d.domain = "tinyrt";
  d.attrs = {"message", "_branch"};
  d.infer = [](Node &n, Graph &g) {
    if (!n.has("_branch") || n.guard < 0 || n.gets("message", "").empty())
      fail_unsupported(n.where() + ": BranchError is the compiler's own step for a branch it could not compile");
    set_out(n, g, 0, DType::Bool, {});
  };
  d.lower = [](const Node &n, LowerCtx &c) { c.fail(n.out[0], n.in, n.gets("message", "")); };
  register_op(std::move(d));
}

// ----------------------------------------------------------------- Loop --

// Is the body's condition output its condition input (or a constant true)?
bool passes_condition_through(const Subgraph &body) {
  std::string cond_in = body.inputs.at(1), cond_out = body.outputs.at(0);
  for (int hop = 0; hop < 64; ++hop) {
    if (cond_out == cond_in) return true;
    const Subgraph::Step *prod = nullptr;
    for (auto &st : body.steps)
      for (auto &o : st.out)
        if (o == cond_out) prod = &st;
    if (!prod) return false;
    if (prod->op == "Identity" && !prod->in.empty()) {
      cond_out = prod->in[0];
      continue;
    }
    if (prod->op == "Constant" && prod->attrs.size() == 1 && prod->attrs.begin()->second.t) {
      const ConstData &t = *prod->attrs.begin()->second.t;  // one element, not zero
      return t.shape.empty() || shape_numel(t.shape) == 1
                 ? std::any_of(t.bytes.begin(), t.bytes.end(), [](uint8_t b) { return b != 0; })
                 : false;
    }
    return false;
  }
  return false;
}

// Unrolling `steps` copies of `body` must stay within the node cap.
void check_unroll(const Node &n, const Graph &g, int64_t steps, const Subgraph &body) {
  int64_t per = std::max<int64_t>(1, (int64_t)body.steps.size()) + 2;
  if (steps > g.limits.max_expanded_nodes / per)
    fail_unsupported(n.where() + ": unrolling " + std::to_string(steps) + " iterations of a " +
                     std::to_string(body.steps.size()) + "-node body exceeds the limit of " +
                     std::to_string(g.limits.max_expanded_nodes) + " nodes (--max-expanded-nodes)");
}

std::vector<Node> expand_loop(const Node &n, Graph &g) {
  const Subgraph &body = *n.attrs.at("body").graph;
  if (!n.has_in(0)) fail_unsupported(n.where() + ": a Loop without a trip count (a while loop)");
  const Value &m = in_val(g, n, 0);
  require_dtype(n, g, 0, DType::I64, "the trip count");
  require_one_element(n, g, 0, "the trip count");
  // A count computed at run time from extents: unrolled to its bound.
  ExprP run_count = !m.is_const() && m.is_sym() ? sym_index(m.sym.at(0)) : nullptr;
  if (!m.is_const() && !run_count) throw_constant_required(g, n, n.in[0]);
  int64_t trips = 0;
  if (run_count) {
    Interval r = index_range(run_count, {});
    if (!r.known)
      fail_unsupported(n.where() + ": the trip count " + to_string(run_count) +
                       " has no bound for the inputs' ranges (--dim, --input-shape)");
    trips = std::max<int64_t>(0, r.hi);
  } else {
    trips = m.data->get_i(0);
  }
  int cond = n.has_in(1) ? n.in[1] : g.add_const(g.fresh_name(n.name + "_true"), make_const(DType::Bool, {}, {1}));
  require_dtype(n, g, 1, DType::Bool, "the condition");
  if (!g.v(cond).is_const()) throw_constant_required(g, n, cond);  // it decides the trip count
  require_one_element(n, g, 1, "the condition");
  if (!g.v(cond).data->get_i(0)) trips = 0;
  if (n.in.size() < 2 || body.inputs.size() != n.in.size() || body.outputs.size() < n.in.size() - 1)
    fail_invalid(n.where() + ": a Loop with " + std::to_string(n.in.size()) +
                 " inputs needs a body with as many inputs " + "and at least " + std::to_string((int)n.in.size() - 1) +
                 " outputs; it has " + std::to_string(body.inputs.size()) + " and " +
                 std::to_string(body.outputs.size()));
  if (!passes_condition_through(body))
    fail_unsupported(n.where() + ": the body computes its own loop condition (only counted loops are supported)");
  if (trips < 0) fail_invalid(n.where() + ": negative trip count " + std::to_string(trips));
  check_unroll(n, g, trips, body);
  size_t carried = n.in.size() - 2;
  size_t scans = body.outputs.size() - 1 - carried;
  std::vector<int> state(n.in.begin() + 2, n.in.end());
  std::vector<std::vector<int>> scan_parts(scans);
  std::vector<Node> nodes;
  const Scope scope = body_scope(g, body);
  std::set<size_t> always;  // nodes that run whatever the loop's own guard
  // The count as a scalar (a run-time count; the input may be [1]).
  int count = -1;
  if (run_count) {
    int empty = g.add_const(g.fresh_name(n.name + "_scalar"), make_const_i64({0}, {}));
    count = new_value(g, n.name + "_count");
    nodes.push_back(make_node(g, "Reshape", n.name + "_count", {n.in[0], empty}, {count}));
  }
  for (int64_t i = 0; i < trips; ++i) {
    int iter = g.add_const(g.fresh_name(n.name + "_iter"), make_const_i64({}, {i}));
    std::vector<int> ins = {iter, cond};
    ins.insert(ins.end(), state.begin(), state.end());
    const std::string at = n.name + "/" + std::to_string(i) + "/";
    InlinedGraph b = inline_subgraph(g, body, ins, at, &scope);
    int runs = -1, guard = -1;  // (a run-time count) this iteration runs: i < count
    if (run_count) {
      runs = new_value(g, at + "runs");
      nodes.push_back(make_node(g, "Less", at + "runs", {iter, count}, {runs}));
      size_t before = nodes.size();
      guard = add_guard(g, n, nodes, true, runs, "iteration " + std::to_string(i) + " of " + n.where());
      for (size_t j = before; j < nodes.size(); ++j) always.insert(j);  // the guard's chain runs always
      g.guards[(size_t)guard].must_compile = true;
      for (Node &x : b.nodes) x.guard = guard;
    }
    nodes.insert(nodes.end(), b.nodes.begin(), b.nodes.end());
    for (size_t k = 0; k < carried; ++k) {
      if (!run_count) {
        state[k] = b.outputs[1 + k];
        continue;
      }
      // Past the count the value stays (a skipped iteration's output is
      // never read: Where selects the value before it).
      int kept = new_value(g, at + "carried");
      Node w = make_node(g, "Where", at + "carried", {runs, b.outputs[1 + k], state[k]}, {kept});
      w.attrs["_loop_carried"] = int_attr(1);  // (one shape: elementwise.cpp)
      w.guard = n.guard;
      nodes.push_back(w);
      state[k] = kept;
    }
    for (size_t k = 0; k < scans; ++k) scan_parts[k].push_back(b.outputs[1 + carried + k]);
  }
  for (size_t k = 0; k < carried; ++k)
    if (k < n.out.size() && n.out[k] >= 0) nodes.push_back(identity(g, state[k], n.out[k], n.name + "_final"));
  int end = -1;  // (a run-time count) the count as a [1] tensor, where the scan outputs end
  for (size_t k = 0; k < scans; ++k) {
    int out = carried + k < n.out.size() ? n.out[carried + k] : -1;
    if (out < 0) continue;
    if (scan_parts[k].empty()) fail_unsupported(n.where() + ": scan outputs of a loop that runs zero times");
    if (!run_count) {
      stack(g, nodes, scan_parts[k], 0, out, n.name + "_scan");
      continue;
    }
    // Stacked to the bound, then the first `count` iterations' rows
    // (a Slice to a run-time end).
    int all = new_value(g, n.name + "_scan_all");
    stack(g, nodes, scan_parts[k], 0, all, n.name + "_scan");
    if (end < 0) {
      int one = g.add_const(g.fresh_name(n.name + "_one"), make_const_i64({1}, {1}));
      end = new_value(g, n.name + "_scan_end");
      nodes.push_back(make_node(g, "Reshape", n.name + "_scan_end", {count, one}, {end}));
    }
    int zero = g.add_const(g.fresh_name(n.name + "_zero"), make_const_i64({1}, {0}));
    Node cut = make_node(g, "Slice", n.name + "_scan_cut", {all, zero, end, zero}, {out});
    cut.opset = std::max(10, g.opset);
    nodes.push_back(cut);
  }
  for (size_t j = 0; j < nodes.size(); ++j)  // (the iterations' nodes keep their own guards)
    if (nodes[j].guard < 0 && !always.count(j)) nodes[j].guard = n.guard;
  return nodes;
}

// ----------------------------------------------------------------- Scan --

std::vector<Node> expand_scan(const Node &n, Graph &g) {
  const Subgraph &body = *n.attrs.at("body").graph;
  bool v8 = n.opset < 9;
  size_t first = v8 ? 1 : 0;  // opset 8: input 0 is sequence_lens
  if (v8 && n.has_in(0)) fail_unsupported(n.where() + ": sequence_lens");
  int64_t num_scan = n.geti("num_scan_inputs", 0);
  if (num_scan < 1 || num_scan > (int64_t)n.in.size() - (int64_t)first)
    fail_invalid(n.where() + ": num_scan_inputs " + std::to_string(num_scan) + " does not fit its " +
                 std::to_string(n.in.size() - first) + " inputs");
  size_t nstate = n.in.size() - first - (size_t)num_scan;
  if (body.inputs.size() != nstate + (size_t)num_scan || body.outputs.size() < nstate)
    fail_invalid(n.where() + ": the body takes " + std::to_string(body.inputs.size()) + " inputs and gives " +
                 std::to_string(body.outputs.size()) + " outputs for " + std::to_string(nstate) + " states and " +
                 std::to_string(num_scan) + " scan inputs");
  for (size_t i = first; i < n.in.size(); ++i)
    if (!n.has_in(i)) fail_invalid(n.where() + ": input " + std::to_string(i) + " is missing");
  size_t nscan_out = body.outputs.size() - nstate;
  std::vector<int64_t> in_axes = n.getints("scan_input_axes", std::vector<int64_t>(num_scan, 0));
  std::vector<int64_t> in_dirs =
      n.getints(v8 ? "directions" : "scan_input_directions", std::vector<int64_t>(num_scan, 0));
  std::vector<int64_t> out_axes = n.getints("scan_output_axes", std::vector<int64_t>(nscan_out, 0));
  std::vector<int64_t> out_dirs = n.getints("scan_output_directions", std::vector<int64_t>(nscan_out, 0));
  auto need = [&](const std::vector<int64_t> &v, size_t len, const char *what) {
    if (v.size() != len)
      fail_invalid(n.where() + ": " + what + " has " + std::to_string(v.size()) + " entries, expected " +
                   std::to_string(len));
  };
  need(in_axes, num_scan, "scan_input_axes");
  need(in_dirs, num_scan, v8 ? "directions" : "scan_input_directions");
  need(out_axes, nscan_out, "scan_output_axes");
  need(out_dirs, nscan_out, "scan_output_directions");
  if (v8) in_axes.assign(num_scan, 1);  // [batch, sequence, ...]
  for (int64_t j = 0; j < num_scan; ++j) {
    const Shape &s = in_val(g, n, first + nstate + j).shape;
    norm_axis(in_axes[j], (int)s.size(), n);
  }
  std::vector<Node> nodes;
  auto gather = [&](int x, int64_t index, int64_t axis, const std::string &base) {
    int ix = g.add_const(g.fresh_name(base + "_i"), make_const_i64({}, {index}));
    int out = new_value(g, base);
    Node gn = make_node(g, "Gather", base, {x, ix}, {out});
    set_int(gn, "axis", axis);
    nodes.push_back(gn);
    return out;
  };
  const Scope scope = body_scope(g, body);
  int64_t batches = 1;
  for (size_t i = first; v8 && i < n.in.size(); ++i)
    if (in_val(g, n, i).rank() < 1) fail_invalid(n.where() + ": input " + std::to_string(i) + " has no batch axis");
  if (v8) batches = in_val(g, n, first).shape.at(0);
  std::vector<std::vector<int>> final_states(nstate), scan_outs(nscan_out);
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<int> state, xs;
    for (size_t k = 0; k < nstate; ++k)
      state.push_back(v8 ? gather(n.in[first + k], b, 0, n.name + "_state") : n.in[first + k]);
    for (int64_t j = 0; j < num_scan; ++j)
      xs.push_back(v8 ? gather(n.in[first + nstate + j], b, 0, n.name + "_batch") : n.in[first + nstate + j]);
    int64_t T = -1;
    for (int64_t j = 0; j < num_scan; ++j) {
      const Shape &s = in_val(g, n, first + nstate + j).shape;
      int64_t ax = in_axes[j] < 0 ? in_axes[j] + (int64_t)s.size() : in_axes[j];
      if (T >= 0 && s.at(ax) != T)
        fail_invalid(n.where() + ": scan inputs have different sequence lengths " + std::to_string(T) + " and " +
                     std::to_string(s.at(ax)));
      T = s.at(ax);
      if (v8) in_axes[j] = 0;  // after removing the batch axis
    }
    std::vector<std::vector<int>> per_step(nscan_out);
    check_unroll(n, g, T * batches, body);
    for (int64_t t = 0; t < T; ++t) {
      std::vector<int> ins = state;
      for (int64_t j = 0; j < num_scan; ++j) {
        int64_t at = in_dirs[j] ? T - 1 - t : t;
        ins.push_back(gather(xs[j], at, in_axes[j], n.name + "_slice"));
      }
      InlinedGraph bg =
          inline_subgraph(g, body, ins, n.name + "/" + std::to_string(b) + "_" + std::to_string(t) + "/", &scope);
      nodes.insert(nodes.end(), bg.nodes.begin(), bg.nodes.end());
      for (size_t k = 0; k < nstate; ++k) state[k] = bg.outputs[k];
      for (size_t k = 0; k < nscan_out; ++k) per_step[k].push_back(bg.outputs[nstate + k]);
    }
    for (size_t k = 0; k < nstate; ++k) final_states[k].push_back(state[k]);
    for (size_t k = 0; k < nscan_out; ++k) {
      std::vector<int> parts = per_step[k];
      if (out_dirs[k]) std::reverse(parts.begin(), parts.end());
      if (!v8) {
        scan_outs[k] = parts;
        continue;
      }
      int stacked = new_value(g, n.name + "_seq");
      stack(g, nodes, parts, 0, stacked, n.name + "_seq");
      scan_outs[k].push_back(stacked);
    }
  }
  for (size_t k = 0; k < nstate; ++k) {
    if (k >= n.out.size() || n.out[k] < 0) continue;
    if (v8)
      stack(g, nodes, final_states[k], 0, n.out[k], n.name + "_states");
    else
      nodes.push_back(identity(g, final_states[k][0], n.out[k], n.name + "_final"));
  }
  for (size_t k = 0; k < nscan_out; ++k) {
    int out = nstate + k < n.out.size() ? n.out[nstate + k] : -1;
    if (out < 0) continue;
    if (scan_outs[k].empty()) fail_unsupported(n.where() + ": empty scan");
    stack(g, nodes, scan_outs[k], v8 ? 0 : out_axes[k], out, n.name + "_out");
  }
  return nodes;
}

void def_control(const std::string &name, int min_opset, std::vector<std::string> attrs,
                 std::function<std::vector<Node>(const Node &, Graph &)> expand, bool sets_guards = false) {
  OpDef d;
  d.name = name;
  d.min_opset = min_opset;
  d.attrs = std::move(attrs);
  d.expand = std::move(expand);
  d.expand_sets_guards = sets_guards;
  register_op(std::move(d));
}

}  // namespace

void register_control_flow_ops() {
  def_control("If", 1, {"then_branch", "else_branch"}, expand_if, true);
  def_branch_error();
  def_control("Loop", 1, {"body"}, expand_loop, true);
  def_control("Scan", 8,
              {"body", "num_scan_inputs", "scan_input_axes", "scan_input_directions", "scan_output_axes",
               "scan_output_directions", "directions"},
              expand_scan);
}

}  // namespace tinyrt

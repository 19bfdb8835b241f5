// infer_and_fold.cpp — walks the graph in order: validates each node
// against the op table, infers its output shapes, and evaluates it on the
// host when its inputs are constants (PyTorch's Shape/Gather/Concat chains
// that compute Reshape targets disappear here).
#include "frontend/onnx_import.h"
#include "ir/interp.h"
#include "ops/op_registry.h"
#include "passes/pass.h"

#include <algorithm>

namespace tinyrt {

namespace {

// Evaluates lowered kernels at once; used only on constant inputs.
class FoldCtx : public LowerCtx {
 public:
  using LowerCtx::LowerCtx;
  void kernel(int out, std::vector<int> ins, ExprP expr) override {
    std::vector<ConstP> data;
    for (int v : ins) {
      if (!g.v(v).is_const()) fail_internal("folding reads non-constant '" + g.v(v).name + "'");
      data.push_back(g.v(v).data);
    }
    Value &o = g.v(out);
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
};

// Folding materializes the result; keep huge expansions as code instead.
constexpr int64_t kMaxFoldElements = 1 << 22;

// A custom op's outputs: declared by the model (value_info or graph
// outputs) or, with the `same` rule, output 0 is input 0's type and shape.
// Never folded: the call happens at run time.
void infer_custom_op(Node &n, Graph &g, const CustomOpDecl &d) {
  std::string decl = "--custom-op " + d.domain + "::" + d.op + "=" + d.symbol;
  for (size_t k = 0; k < n.in.size(); ++k)
    if (n.in[k] < 0) fail_unsupported(n.where() + ": custom op input " + std::to_string(k) + " is omitted; calls take present inputs only");
  if (n.out.empty()) fail_invalid(n.where() + ": custom op without outputs");
  for (size_t k = 0; k < n.out.size(); ++k) {
    if (n.out[k] < 0) fail_unsupported(n.where() + ": custom op output " + std::to_string(k) + " is omitted; name every output");
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
                       "' are unknown (ONNX shape inference cannot know a custom op): declare it with a static "
                       "shape in the model's value_info (or as a graph output)" +
                       (k == 0 ? ", or pass " + decl + ":same if it has input 0's type and shape" : std::string()));
    set_out(n, g, k, it->second.first, it->second.second);
  }
}

}  // namespace

void infer_and_fold(PassContext &c) {
  Graph &g = c.program.graph;
  int folded = 0;
  const size_t start_nodes = g.nodes.size();
  int64_t folded_bytes = 0;
  auto check_growth = [&](const Node &n) {
    if ((int64_t)(g.nodes.size() - std::min(g.nodes.size(), start_nodes)) > g.limits.max_expanded_nodes)
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
  // g.nodes stays complete while we go (messages trace producers through
  // it); folded nodes are dropped at the end.
  std::vector<bool> drop(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    // ONNX functions: an op defined by a function body we lack (or, on
    // request, any) becomes the body's nodes.
    const Node &cur = g.nodes[i];
    if (const CustomOpDecl *cd = c.program.custom_op(cur)) {
      infer_custom_op(g.nodes[i], g, *cd);
      continue;
    }
    if (!find_op(cur.domain, cur.op) || (c.prefer_function_bodies && cur.op != "Identity")) {
      std::vector<Node> body;
      Node fn_node = cur;
      if (expand_function(fn_node, g, &body)) {
        g.nodes.erase(g.nodes.begin() + (long)i);
        drop.erase(drop.begin() + (long)i);
        g.nodes.insert(g.nodes.begin() + (long)i, body.begin(), body.end());
        drop.insert(drop.begin() + (long)i, body.size(), false);
        check_growth(fn_node);
        --i;
        continue;
      }
    }
    const OpDef &d = check_node(g.nodes[i], g);
    if (d.expand) {  // control flow: splice its expansion in its place
      Node cf = g.nodes[i];
      std::vector<Node> repl = d.expand(cf, g);
      g.nodes.erase(g.nodes.begin() + (long)i);
      drop.erase(drop.begin() + (long)i);
      g.nodes.insert(g.nodes.begin() + (long)i, repl.begin(), repl.end());
      drop.insert(drop.begin() + (long)i, repl.size(), false);
      check_growth(cf);
      --i;
      continue;
    }
    Node &n = g.nodes[i];
    for (int v : n.in)
      if (v >= 0 && !g.v(v).shape_known)
        fail_internal(n.where() + ": input '" + g.v(v).name + "' has no inferred shape");
    d.infer(n, g);
    for (int v : n.out)
      if (v >= 0 && !g.v(v).shape_known) fail_internal(n.where() + ": inference left an output without shape");
    if (d.fold) {
      std::vector<ConstP> outs = d.fold(n, g);
      for (size_t k = 0; k < n.out.size() && k < outs.size(); ++k)
        if (n.out[k] >= 0) g.v(n.out[k]).data = outs[k];
      count_folded(n);
      drop[i] = true;
      ++folded;
      continue;
    }
    bool all_const = true;
    for (int v : n.in) all_const = all_const && (v < 0 || g.v(v).is_const());
    int64_t size = 0;
    for (int v : n.out)
      if (v >= 0) size += g.v(v).numel();
    // Quantized weights stay integers for fuse_qdq, which folds the rest.
    bool quantized_weight = n.op == "DequantizeLinear" && n.domain.empty() &&
                            (in_val(g, n, 0).dtype == DType::I8 || in_val(g, n, 0).dtype == DType::U8);
    if (all_const && d.lower && size <= kMaxFoldElements && !quantized_weight) {
      FoldCtx fc(g);
      d.lower(n, fc);
      count_folded(n);
      drop[i] = true;
      ++folded;
    }
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  g.remove_dead_nodes();
  if (c.log) *c.log << "  folded " << folded << " nodes, " << g.nodes.size() << " remain\n";
}

}  // namespace tinyrt

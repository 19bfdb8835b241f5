// linalg.cpp — Einsum (any equation becomes one reduction over a product
// of loads) and Det (Leibniz expansion for small matrices).
#include <algorithm>
#include <map>
#include <numeric>

#include "ops/op_registry.h"

namespace tinyrt {

namespace {

struct EinsumPlan {
  std::vector<std::string> inputs;  // letters per input, '.' stands for the ellipsis
  std::string output;
  int ell = 0;  // ellipsis rank
  std::map<char, int64_t> size;
  Shape ell_shape;
  Shape out_shape;
};

EinsumPlan plan_einsum(const Node &n, const Graph &g) {
  EinsumPlan p;
  std::string eq;
  for (char ch : n.gets("equation", ""))
    if (ch != ' ') eq += ch;
  std::string lhs = eq, rhs;
  bool explicit_out = false;
  size_t arrow = eq.find("->");
  if (arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    explicit_out = true;
  }
  auto compact = [&](std::string t) {  // "..." -> '.'
    size_t e = t.find("...");
    if (e != std::string::npos) t.replace(e, 3, ".");
    if (std::count(t.begin(), t.end(), '.') > (e != std::string::npos ? 1 : 0))
      fail_invalid(n.where() + ": term '" + t + "' of the equation has a '.' outside its one ellipsis");
    return t;
  };
  size_t start = 0;
  for (;;) {
    size_t comma = lhs.find(',', start);
    p.inputs.push_back(compact(lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (p.inputs.size() != n.in.size())
    fail_invalid(n.where() + ": equation has " + std::to_string(p.inputs.size()) + " operands, the node " +
                 std::to_string(n.in.size()));
  std::map<char, int> count;
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    const std::string &t = p.inputs[k];
    const Shape &s = in_val(g, n, k).shape;
    int letters = (int)std::count_if(t.begin(), t.end(), [](char ch) { return ch != '.'; });
    bool has_ell = t.find('.') != std::string::npos;
    int e = (int)s.size() - letters;
    if (e < 0 || (!has_ell && e != 0))
      fail_invalid(n.where() + ": operand " + std::to_string(k) + " rank does not match '" + t + "'");
    p.ell = std::max(p.ell, has_ell ? e : 0);
    int axis = 0;
    for (char ch : t) {
      if (ch == '.') {
        axis += e;
        continue;
      }
      int64_t d = s[axis++];
      auto it = p.size.find(ch);
      if (it != p.size.end() && it->second != d)
        fail_invalid(n.where() + ": letter '" + std::string(1, ch) + "' has sizes " + std::to_string(it->second) +
                     " and " + std::to_string(d));
      p.size[ch] = d;
      count[ch]++;
    }
  }
  // Ellipsis dims broadcast, aligned right.
  p.ell_shape.assign(p.ell, 1);
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    const std::string &t = p.inputs[k];
    size_t pos = t.find('.');
    if (pos == std::string::npos) continue;
    const Shape &s = in_val(g, n, k).shape;
    int letters = (int)t.size() - 1;
    int e = (int)s.size() - letters;
    for (int j = 0; j < e; ++j) {
      int64_t d = s[pos + j];
      int64_t &o = p.ell_shape[p.ell - e + j];
      if (o != 1 && d != 1 && o != d) fail_invalid(n.where() + ": ellipsis dimensions do not broadcast");
      if (d != 1) o = d;
    }
  }
  if (explicit_out) {
    p.output = compact(rhs);
  } else {
    if (p.ell > 0) p.output = ".";
    for (auto &kv : count)
      if (kv.second == 1) p.output += kv.first;
  }
  for (char ch : p.output) {
    if (ch == '.') {
      p.out_shape.insert(p.out_shape.end(), p.ell_shape.begin(), p.ell_shape.end());
    } else {
      if (!p.size.count(ch))
        fail_invalid(n.where() + ": output letter '" + std::string(1, ch) + "' is not in any input");
      p.out_shape.push_back(p.size[ch]);
    }
  }
  return p;
}

void def_einsum() {
  OpDef d;
  d.name = "Einsum";
  d.min_opset = 12;
  d.attrs = {"equation"};
  d.types = {DType::F32, DType::F64, DType::I32, DType::I64};
  d.infer = [](Node &n, Graph &g) { set_out(n, g, 0, in_val(g, n, 0).dtype, plan_einsum(n, g).out_shape); };
  d.lower = [](const Node &n, LowerCtx &c) {
    EinsumPlan p = plan_einsum(n, c.g);
    DType t = in_val(c.g, n, 0).dtype;
    // Index expression of each letter and each ellipsis dim.
    std::map<char, ExprP> idx;
    std::vector<ExprP> ell_idx(p.ell);
    std::vector<RVar> rv;
    int pos = 0;
    bool ell_out = false;
    for (char ch : p.output) {
      if (ch == '.') {
        for (int j = 0; j < p.ell; ++j) ell_idx[j] = var(pos++);
        ell_out = true;
      } else {
        idx[ch] = var(pos++);
      }
    }
    int next = kFirstReduceVar;
    for (auto &kv : p.size)
      if (!idx.count(kv.first)) {
        rv.push_back({next, kv.second});
        idx[kv.first] = var(next++);
      }
    if (!ell_out)
      for (int j = 0; j < p.ell; ++j) {
        rv.push_back({next, p.ell_shape[j]});
        ell_idx[j] = var(next++);
      }
    ExprP prod;
    for (size_t k = 0; k < p.inputs.size(); ++k) {
      const Shape &s = in_val(c.g, n, k).shape;
      const std::string &term = p.inputs[k];
      std::vector<ExprP> ii;
      int e = (int)s.size() - (int)std::count_if(term.begin(), term.end(), [](char ch) { return ch != '.'; });
      for (char ch : term) {
        if (ch != '.') {
          ii.push_back(idx[ch]);
          continue;
        }
        for (int j = 0; j < e; ++j) {
          int64_t dim = s[ii.size()];
          ii.push_back(dim == 1 ? cidx(0) : ell_idx[p.ell - e + j]);
        }
      }
      ExprP v = load((int)k, t, ii);
      prod = prod ? prod * v : v;
    }
    c.kernel(n.out[0], n.in, rv.empty() ? prod : reduce(ReduceKind::Sum, rv, prod));
  };
  register_op(std::move(d));
}

// det A = sum over permutations s of sign(s) * prod_i A[i, s(i)].
void def_det() {
  OpDef d;
  d.name = "Det";
  d.min_opset = 11;
  d.types = {DType::F32, DType::F64};
  d.infer = [](Node &n, Graph &g) {
    const Value &x = in_val(g, n, 0);
    if (x.rank() < 2 || x.shape[x.rank() - 1] != x.shape[x.rank() - 2])
      fail_invalid(n.where() + ": input must be [..., M, M]");
    if (x.shape.back() > 5) fail_unsupported(n.where() + ": matrices larger than 5x5");
    set_out(n, g, 0, x.dtype, Shape(x.shape.begin(), x.shape.end() - 2));
  };
  d.lower = [](const Node &n, LowerCtx &c) {
    const Value &x = in_val(c.g, n, 0);
    DType t = x.dtype;
    int m = (int)x.shape.back(), b = x.rank() - 2;
    std::vector<int> perm(m);
    std::iota(perm.begin(), perm.end(), 0);
    ExprP sum;
    do {
      int inv = 0;
      for (int i = 0; i < m; ++i)
        for (int j = i + 1; j < m; ++j) inv += perm[i] > perm[j];
      ExprP term;
      for (int i = 0; i < m; ++i) {
        std::vector<ExprP> ii = out_vars(b);
        ii.push_back(cidx(i));
        ii.push_back(cidx(perm[i]));
        ExprP v = load(0, t, ii);
        term = term ? term * v : v;
      }
      if (inv % 2) term = un(EOp::Neg, term);
      sum = sum ? sum + term : term;
    } while (std::next_permutation(perm.begin(), perm.end()));
    c.kernel(n.out[0], {n.in[0]}, sum);
  };
  register_op(std::move(d));
}

}  // namespace

void register_linalg_ops() {
  def_einsum();
  def_det();
}

}  // namespace tinyrt

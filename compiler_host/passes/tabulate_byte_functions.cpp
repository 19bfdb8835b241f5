// tabulate_byte_functions.cpp — an elementwise kernel whose output element
// is a function of one 8-bit input element becomes a lookup in a table of
// 256 entries, computed once on the host.
//
// QDQ graphs are full of them: SiLU as DequantizeLinear → Sigmoid →
// QuantizeLinear → DequantizeLinear → Mul → QuantizeLinear, hard-swish,
// GELU, Tanh, LeakyRelu between quantized tensors. Evaluated per element,
// such a kernel costs an exponential and a dozen conversions; as a table it
// costs one lookup, which the code generator turns into byte shuffles
// (pshufb on x86, tbl on AArch64, vtbl on ARMv7; codegen/expr_emitter).
//
// The table is computed by the interpreter (ir/interp), the reference the
// generated code is tested against, so a lookup gives what the
// interpreter gives for each of the 256 inputs, on every target.
//
// Conditions: a Loop kernel without reductions; every load of a tensor that
// is not a constant reads the same element of the same 8-bit integer
// tensor; constants are read at constant indices; the index variables
// appear only in that load's indices; and evaluating the expression costs
// more than a lookup (a transcendental function, a division, or enough
// arithmetic).
#include <string>

#include "ir/interp.h"
#include "passes/pass.h"

namespace tinyrt {

namespace {

constexpr int kMinCost = 12;  // below this, computing is as cheap as a lookup

int op_cost(EOp op) {
  if (is_math_function(op)) return 20;
  switch (op) {
    case EOp::Sqrt: return 20;
    case EOp::Div:
    case EOp::Rem:
    case EOp::Recip: return 6;
    case EOp::Const:
    case EOp::Var:
    case EOp::Load: return 0;
    default: return 1;
  }
}

bool is_byte_int(DType t) { return t == DType::U8 || t == DType::I8; }

// The one varying load of `e` (nullptr when there is none, or more than one
// distinct one, or a constant is read at a varying index).
const Expr *single_varying_load(const Graph &g, const Kernel &k, const ExprP &e, bool *ok) {
  const Expr *found = nullptr;
  std::string key;
  *ok = true;
  visit(e, [&](const Expr &n) {
    if (!*ok || n.op != EOp::Load) return;
    if (g.v(k.ins[n.id]).is_const()) {
      for (const ExprP &i : n.a)
        if (!i->is_const()) *ok = false;
      return;
    }
    std::string s = to_string(std::make_shared<const Expr>(n));
    if (!found) {
      found = &n;
      key = s;
    } else if (s != key) {
      *ok = false;
    }
  });
  if (!found || !is_byte_int(found->type)) *ok = false;
  return *ok ? found : nullptr;
}

}  // namespace

void tabulate_byte_functions(PassContext &c) {
  Program &p = c.program;
  Graph &g = p.graph;
  int tabulated = 0;
  for (Kernel &k : p.kernels) {
    if (k.kind != KernelKind::Loop || !k.expr || has_reduce(k.expr)) continue;
    DType out = g.v(k.out).dtype;
    if (out == DType::Bool || dtype_bytes(out) > 4) continue;
    bool ok = false;
    const Expr *x = single_varying_load(g, k, k.expr, &ok);
    if (!ok) continue;
    int cost = 0;
    visit(k.expr, [&](const Expr &n) { cost += op_cost(n.op); });
    if (cost < kMinCost) continue;
    // f(v) for v = the table index: Var(0) over [0, 256), the loaded byte
    // being v (uint8) or v - 128 (int8).
    const std::string key = to_string(std::make_shared<const Expr>(*x));
    const int in_slot = (int)k.ins.size();  // the 256 input values
    ExprP body = rewrite_top_down(k.expr, [&](const ExprP &n) -> ExprP {
      if (n->op == EOp::Load && !g.v(k.ins[n->id]).is_const() && to_string(n) == key)
        return load(in_slot, x->type, {var(0)});
      return nullptr;
    });
    // An index variable outside the byte's own indices makes the output
    // depend on the position, not only on the byte.
    ExprP rest = rewrite_top_down(body, [&](const ExprP &n) -> ExprP {
      return n->op == EOp::Load && n->id == in_slot ? cst(x->type, 0) : nullptr;
    });
    bool positional = false;
    visit(rest, [&](const Expr &n) { positional |= n.op == EOp::Var; });
    if (positional) continue;

    Bytes values(256);
    for (int v = 0; v < 256; ++v) values[(size_t)v] = (uint8_t)(x->type == DType::U8 ? v : v - 128);
    std::vector<ConstP> inputs(k.ins.size() + 1);
    for (size_t s = 0; s < k.ins.size(); ++s)
      if (g.v(k.ins[s]).is_const()) inputs[s] = g.v(k.ins[s]).data;
    inputs[(size_t)in_slot] = make_const(x->type, {256}, std::move(values));
    ConstP table = interpret(body, out, {256}, inputs);

    // The kernel now reads the byte and the table.
    ExprP byte = load(0, x->type, x->a);
    ExprP index = cast(byte, kIndexType);
    if (x->type == DType::I8) index = index + 128;
    int src = k.ins[(size_t)x->id];
    int tid = g.add_const(g.fresh_name(g.v(k.out).name + "_table"), table);
    k.ins = {src, tid};
    k.expr = load(1, out, {index});
    k.label += "(table)";
    ++tabulated;
  }
  if (c.log && tabulated)
    *c.log << "tabulate_byte_functions: " << tabulated << " kernels of one 8-bit input as 256-entry tables\n";
}

}  // namespace tinyrt

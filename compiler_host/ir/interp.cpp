#include "ir/interp.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "ir/error.h"

namespace tinyrt {

int64_t wrap_int(int64_t v, DType t) {
  switch (t) {
    case DType::I8: return (int8_t)v;
    case DType::U8: return (uint8_t)v;
    case DType::I16: return (int16_t)v;
    case DType::U16: return (uint16_t)v;
    case DType::I32: return (int32_t)v;
    case DType::U32: return (uint32_t)v;
    case DType::Bool: return v != 0;
    default: return v;
  }
}

// float16/bfloat16 compute in float32 (as the code generator does); the
// rounding to 16 bits happens at casts and stores.
static double round_float(double v, DType t) { return t == DType::F64 ? v : (double)(float)v; }

static double to_storage(double v, DType t) {
  if (t == DType::F16) return half_to_float(float_to_half((float)v));
  if (t == DType::BF16) return bf16_to_float(float_to_bf16((float)v));
  return v;
}

double eval_float_op(EOp op, double a, double b, DType t) {
  double r = 0;
  switch (op) {
    case EOp::Neg: r = -a; break;
    case EOp::Abs: r = std::fabs(a); break;
    case EOp::Sqrt: r = std::sqrt(a); break;
    case EOp::Exp: r = std::exp(a); break;
    case EOp::Log: r = std::log(a); break;
    case EOp::Tanh: r = std::tanh(a); break;
    case EOp::Sigmoid: r = 1.0 / (1.0 + std::exp(-a)); break;
    case EOp::Erf: r = std::erf(a); break;
    case EOp::Floor: r = std::floor(a); break;
    case EOp::Ceil: r = std::ceil(a); break;
    case EOp::Round: r = std::nearbyint(a); break;
    case EOp::Recip: r = 1.0 / a; break;
    case EOp::Sin: r = std::sin(a); break;
    case EOp::Cos: r = std::cos(a); break;
    case EOp::Tan: r = std::tan(a); break;
    case EOp::Atan: r = std::atan(a); break;
    case EOp::ExpNeg: r = std::isnan(a) ? a : std::exp(-std::max(a, 0.0)); break;
    case EOp::Add: r = a + b; break;
    case EOp::Sub: r = a - b; break;
    case EOp::Mul: r = a * b; break;
    case EOp::Div: r = a / b; break;
    case EOp::Rem: r = std::fmod(a, b); break;
    case EOp::Min: r = (a < b || std::isnan(a)) ? a : b; break;
    case EOp::Max: r = (a > b || std::isnan(a)) ? a : b; break;
    case EOp::Pow: r = std::pow(a, b); break;
    case EOp::Eq: return a == b;
    case EOp::Ne: return a != b;
    case EOp::Lt: return a < b;
    case EOp::Le: return a <= b;
    case EOp::Gt: return a > b;
    case EOp::Ge: return a >= b;
    default: fail_internal(std::string("float op ") + eop_name(op));
  }
  return round_float(r, t);
}

int64_t eval_int_op(EOp op, int64_t a, int64_t b, DType t) {
  bool u = !dtype_is_signed(t);
  int64_t r = 0;
  switch (op) {
    case EOp::Neg: r = (int64_t)(0 - (uint64_t)a); break;  // wraps, as the generated code does
    case EOp::Abs: r = a < 0 ? (int64_t)(0 - (uint64_t)a) : a; break;
    case EOp::Not: r = !a; break;
    case EOp::Add: r = (int64_t)((uint64_t)a + (uint64_t)b); break;
    case EOp::Sub: r = (int64_t)((uint64_t)a - (uint64_t)b); break;
    case EOp::Mul: r = (int64_t)((uint64_t)a * (uint64_t)b); break;
    // As the generated code (safe_int_div): x / 0 = x % 0 = 0, and
    // INT64_MIN / -1, which traps, is -x (wrapped), x % -1 = 0.
    case EOp::Div:
      if (b == 0) return 0;
      if (!u && b == -1)
        r = (int64_t)(0 - (uint64_t)a);
      else
        r = u ? (int64_t)((uint64_t)a / (uint64_t)b) : a / b;
      break;
    case EOp::Rem:
      if (b == 0 || (!u && b == -1)) return 0;
      r = u ? (int64_t)((uint64_t)a % (uint64_t)b) : a % b;
      break;
    case EOp::Min: r = u ? ((uint64_t)a < (uint64_t)b ? a : b) : std::min(a, b); break;
    case EOp::Max: r = u ? ((uint64_t)a > (uint64_t)b ? a : b) : std::max(a, b); break;
    case EOp::Pow: {
      // Exact: a^b modulo 2^64 by repeated squaring (wrapping as C's
      // unsigned arithmetic), then wrapped to t. A negative exponent of a
      // signed type truncates 1 / a^|b| toward zero: 1 for a = 1, +-1 for
      // a = -1, else 0 (a = 0 too, as x / 0 = 0). The generated code
      // computes the same (codegen/expr_emitter.cpp, int_pow).
      if (!u && b < 0) {
        r = a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
        break;
      }
      uint64_t base = (uint64_t)a, res = 1;
      for (uint64_t e = (uint64_t)b; e; e >>= 1) {
        if (e & 1) res *= base;
        base *= base;
      }
      r = (int64_t)res;
      break;
    }
    case EOp::And: r = a & b; break;
    case EOp::Or: r = a | b; break;
    case EOp::Xor: r = a ^ b; break;
    case EOp::Shl: r = (b < 0 || b >= 64) ? 0 : (int64_t)((uint64_t)a << b); break;
    case EOp::Shr:
      if (b < 0 || b >= dtype_bytes(t) * 8) return 0;
      r = u ? (int64_t)((uint64_t)wrap_int(a, t) >> b) : (wrap_int(a, t) >> b);
      break;
    case EOp::Eq: return a == b;
    case EOp::Ne: return a != b;
    case EOp::Lt: return u ? (uint64_t)a < (uint64_t)b : a < b;
    case EOp::Le: return u ? (uint64_t)a <= (uint64_t)b : a <= b;
    case EOp::Gt: return u ? (uint64_t)a > (uint64_t)b : a > b;
    case EOp::Ge: return u ? (uint64_t)a >= (uint64_t)b : a >= b;
    default: fail_internal(std::string("int op ") + eop_name(op));
  }
  return wrap_int(r, t);
}

namespace {

struct Scalar {
  double f = 0;
  int64_t i = 0;
};

struct Interp {
  const std::vector<ConstP> &inputs;
  std::vector<std::vector<int64_t>> strides;
  std::vector<int64_t> vars;

  Scalar eval(const Expr &e) {
    Scalar r;
    bool fl = dtype_is_float(e.type);
    switch (e.op) {
      case EOp::Const:
        r.f = e.fval;
        r.i = e.ival;
        return r;
      case EOp::Var: r.i = vars.at(e.id); return r;
      case EOp::Load: {
        const ConstData &c = *inputs.at(e.id);
        int64_t off = 0;
        for (size_t k = 0; k < e.a.size(); ++k) {
          int64_t ix = eval(*e.a[k]).i;
          if (ix < 0 || ix >= c.shape[k])
            fail_internal("interpreter load out of bounds: index " + std::to_string(ix) + " on axis " +
                          std::to_string(k) + " of " + shape_str(c.shape));
          off += ix * strides[e.id][k];
        }
        if (fl)
          r.f = c.get_f(off);
        else
          r.i = c.get_i(off);
        return r;
      }
      case EOp::Cast: {
        const Expr &x = *e.a[0];
        Scalar v = eval(x);
        bool xf = dtype_is_float(x.type);
        if (fl) {
          r.f = round_float(xf ? v.f : (dtype_is_signed(x.type) ? (double)v.i : (double)(uint64_t)v.i), e.type);
          r.f = to_storage(r.f, e.type);
        } else if (e.type == DType::Bool) {
          r.i = xf ? v.f != 0 : v.i != 0;
        } else if (xf) {
          // Saturating, as generated code converts (fptosi/fptoui.sat):
          // NaN is 0, out-of-range values the type's extremes.
          double d = std::trunc(v.f);
          int bits = dtype_bytes(e.type) * 8;
          bool sg = dtype_is_signed(e.type);
          double lo = sg ? -std::ldexp(1.0, bits - 1) : 0.0, end = std::ldexp(1.0, sg ? bits - 1 : bits);
          if (std::isnan(d))
            r.i = 0;
          else if (d <= lo)
            r.i = reduce_init_int(ReduceKind::Max, e.type);  // the lowest value
          else if (d >= end)
            r.i = reduce_init_int(ReduceKind::Min, e.type);  // the highest value
          else
            r.i = sg ? (int64_t)d : (int64_t)(uint64_t)d;
        } else {
          r.i = wrap_int(v.i, e.type);
        }
        return r;
      }
      case EOp::Select: return eval(*e.a[0]).i ? eval(*e.a[1]) : eval(*e.a[2]);
      case EOp::Reduce: return eval_reduce(e);
      case EOp::Acc: fail_internal("interpreting an epilogue");
      case EOp::Dim: fail_internal("interpreting a run-time extent (a value with dynamic dimensions is never folded)");
      default: break;
    }
    const Expr &x = *e.a[0];
    bool xf = dtype_is_float(x.type);
    Scalar a = eval(x), b;
    if (e.a.size() > 1) b = eval(*e.a[1]);
    if (xf) {
      double v = eval_float_op(e.op, a.f, b.f, x.type);
      if (is_compare(e.op))
        r.i = (int64_t)v;
      else
        r.f = v;
    } else {
      r.i = eval_int_op(e.op, a.i, b.i, x.type);
    }
    return r;
  }

  Scalar eval_reduce(const Expr &e) {
    bool fl = dtype_is_float(e.type);
    double init = reduce_init(e.rk, e.type);
    Scalar accv;
    accv.f = init;
    accv.i = reduce_init_int(e.rk, e.type);  // (int64_t)init is undefined for INT64_MAX
    for (auto &rv : e.rvars) {
      if ((int)vars.size() <= rv.id) vars.resize(rv.id + 1);
      if (rv.extent == 0) return accv;
    }
    for (auto &rv : e.rvars) vars[rv.id] = 0;
    EOp combine = reduce_combiner(e.rk);
    for (;;) {
      Scalar v = eval(*e.a[0]);
      if (fl)
        accv.f = eval_float_op(combine, accv.f, v.f, e.type);
      else
        accv.i = eval_int_op(combine, accv.i, v.i, e.type);
      size_t k = e.rvars.size();
      while (k > 0) {
        const RVar &rv = e.rvars[k - 1];
        if (++vars[rv.id] < rv.extent) break;
        vars[rv.id] = 0;
        --k;
      }
      if (k == 0) break;
    }
    return accv;
  }
};

template <class T>
void put(Bytes &b, int64_t i, T v) {
  std::memcpy(b.data() + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

static int64_t tree_cost(const Expr &e, std::map<const Expr *, int64_t> &memo) {
  auto it = memo.find(&e);
  if (it != memo.end()) return it->second;
  int64_t c = 1;
  for (const ExprP &a : e.a) c = sat_add(c, tree_cost(*a, memo));
  if (e.op == EOp::Reduce) {
    int64_t n = 1;
    for (const RVar &rv : e.rvars) n = sat_mul(n, std::max<int64_t>(rv.extent, 0));
    c = sat_add(1, sat_mul(n, c - 1));
  }
  memo[&e] = c;
  return c;
}

int64_t interpret_cost(const ExprP &e) {
  std::map<const Expr *, int64_t> memo;
  return tree_cost(*e, memo);
}

ConstP interpret(const ExprP &e, DType type, const Shape &shape, const std::vector<ConstP> &inputs) {
  Interp in{inputs, {}, {}};
  for (auto &c : inputs) in.strides.push_back(c ? row_major_strides(c->shape) : std::vector<int64_t>{});
  int64_t n = shape_numel(shape);
  Bytes out((size_t)(n * dtype_bytes(type)));
  int nv = std::max<int>(max_var_id(e) + 1, (int)shape.size());
  in.vars.assign(nv, 0);
  for (int64_t lin = 0; lin < n; ++lin) {
    int64_t rem = lin;
    for (size_t k = shape.size(); k-- > 0;) {
      in.vars[k] = rem % shape[k];
      rem /= shape[k];
    }
    Scalar s = in.eval(*e);
    switch (type) {
      case DType::F32: put<float>(out, lin, (float)s.f); break;
      case DType::F64: put<double>(out, lin, s.f); break;
      case DType::F16: put<uint16_t>(out, lin, float_to_half((float)s.f)); break;
      case DType::BF16: put<uint16_t>(out, lin, float_to_bf16((float)s.f)); break;
      case DType::I8: put<int8_t>(out, lin, (int8_t)s.i); break;
      case DType::U8:
      case DType::Bool: put<uint8_t>(out, lin, (uint8_t)s.i); break;
      case DType::I16: put<int16_t>(out, lin, (int16_t)s.i); break;
      case DType::U16: put<uint16_t>(out, lin, (uint16_t)s.i); break;
      case DType::I32: put<int32_t>(out, lin, (int32_t)s.i); break;
      case DType::U32: put<uint32_t>(out, lin, (uint32_t)s.i); break;
      case DType::I64:
      case DType::U64: put<int64_t>(out, lin, s.i); break;
      default: fail_unsupported(std::string("constant of type ") + dtype_name(type));
    }
  }
  return make_const(type, shape, std::move(out));
}

}  // namespace tinyrt

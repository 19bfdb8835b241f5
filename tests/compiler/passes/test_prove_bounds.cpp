// passes/prove_bounds.cpp: every load of a loop kernel proved inside its
// tensor by interval analysis, or the model refused naming the range.
#include "pass_test.h"

using namespace tinyrt;
using namespace tinyrt::test;

namespace {

// A Relu over [2, 5] through every pass before prove_bounds; the test then
// replaces its one loop kernel's expression and runs the proof.
struct ProveCase {
  Program p;
  Target t = resolve_target("x86-64-avx2");
  ProveCase() { p = run_until("graph opset 17\ninput x: f32[2,5]\ny = Relu(x)\noutput y\n", "split_recurrent"); }
  // The proof's message, or "" when it holds.
  std::string prove(ExprP e, std::vector<int> extra_ins = {}) {
    Kernel &k = p.kernels.at(0);
    k.expr = e;
    for (int v : extra_ins) k.ins.push_back(v);
    PassContext c{p, t, nullptr};
    try {
      prove_bounds(c);
    } catch (const CompileError &err) {
      return err.what();
    }
    return "";
  }
  ExprP x(ExprP i0, ExprP i1) { return load(0, DType::F32, {i0, i1}); }
  int int_const(std::vector<int64_t> v) {
    Bytes b((const uint8_t *)v.data(), (const uint8_t *)(v.data() + v.size()));
    return p.graph.add_const("idx", make_const(DType::I64, {(int64_t)v.size()}, std::move(b)));
  }
};

}  // namespace

TEST(ProveBounds, IdentityLoadHolds) {
  ProveCase c;
  EXPECT_EQ(c.prove(c.x(var(0), var(1))), "");
}

TEST(ProveBounds, ShiftedLoadIsRefusedWithItsRange) {
  ProveCase c;
  std::string m = c.prove(c.x(var(0), var(1) + 1));
  EXPECT_NE(m.find("cannot prove its reads of 'x' [2,5]"), std::string::npos) << m;
  EXPECT_NE(m.find("may be 1 to 5"), std::string::npos) << m;
}

TEST(ProveBounds, GuardsNarrowBothBranches) {
  ProveCase c;
  // Padding: the load only where the shifted index is inside.
  ExprP i = var(1) - 1;
  EXPECT_EQ(c.prove(select(in_range(i, 5), c.x(var(0), i), cst(DType::F32, 0))), "");
  // Concat's choice: i < 3 reads at i, otherwise at i - 3 (in [0, 2)).
  EXPECT_EQ(c.prove(select(lt(var(1), cidx(3)), c.x(var(0), var(1)), c.x(var(0), var(1) - 3))), "");
  // A guard next to the load in an And does not protect it (both sides run).
  std::string m = c.prove(cast(land(in_range(i, 5), bin(EOp::Gt, c.x(var(0), i), cst(DType::F32, 0))), DType::F32));
  EXPECT_NE(m.find("cannot prove"), std::string::npos) << m;
}

TEST(ProveBounds, DataIndicesNeedClampsConstantsTheirValues) {
  ProveCase c;
  // An index read from a tensor may be anything until clamped.
  int idx = c.int_const({0, 4, 3, 1, 2});
  ExprP raw = cast(load(1, DType::I64, {var(1)}), kIndexType);
  EXPECT_EQ(c.prove(c.x(var(0), raw), {idx}), "");  // a constant: 0 .. 4
  ProveCase d;
  int big = d.int_const({0, 4, 5, 1, 2});
  std::string m = d.prove(d.x(var(0), cast(load(1, DType::I64, {var(1)}), kIndexType)), {big});
  EXPECT_NE(m.find("may be 0 to 5"), std::string::npos) << m;
  ProveCase e;
  int in = e.p.graph.inputs.at(0);
  ExprP data = cast(load(1, DType::F32, {var(0), var(1)}), kIndexType);
  EXPECT_NE(e.prove(e.x(var(0), data), {in}).find("cannot prove"), std::string::npos);
  EXPECT_EQ(e.prove(e.x(var(0), emax(cidx(0), emin(cidx(4), data)))), "");
}

TEST(ProveBounds, ComparisonsBoundDifferences) {
  ProveCase c;
  // ReverseSequence: t < len reads at (len - t) - 1, len clamped to [0, 5].
  ExprP len = emax(cidx(0), emin(cidx(5), cast(load(1, DType::F32, {var(0), cidx(0)}), kIndexType)));
  int in = c.p.graph.inputs.at(0);
  EXPECT_EQ(c.prove(c.x(var(0), select(lt(var(1), len), (len - var(1)) - 1, var(1))), {in}), "");
}

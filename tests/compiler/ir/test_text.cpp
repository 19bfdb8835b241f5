// The textual graph IR (ir/text.h): parse and print round-trip, and
// malformed text is refused with its line named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/subgraph.h"
#include "ir/text.h"

using namespace tinyrt;

namespace {

// Every kind of constant and attribute, a subgraph, a guard.
const char *kSample = R"txt(# a sample graph
graph main opset 17 domains ai.onnx=17,com.microsoft=1
input x: f32[1,3,8,8]
input mask: bool[2]
const w: f32[4,3,3,3] = random(7)
const shape: i64[2] = [1, -1]
const h: f16[3] = [0.5, -2, 65504]
const b16: bf16[2] = [1.5, -0.25]
const d: f64[2] = [0.1, 1e300]
const u: u8[3] = [0, 17, 255]
const s8: i8[2] = [-128, 127]
const i: i32[] = [42]
const big: u64[1] = [18446744073709551615]
const flags: bool[3] = [true, false, 1]
const ones: f32[2,2] = fill(1)
const c: bool[] = [true]
y: f32[1,4,8,8] = Conv(x, w) {kernel_shape=[3,3], pads=[1,1,1,1], strides=ints[]}
z = LeakyRelu(y) {alpha=0.1}
r = Reshape@13[reshape1](z, shape)
q = Clip(r, , ones)
_, idx = TopK(q, shape) {axis=1}
cm: f32[?,4], cs: i64[2,2] = com.microsoft::Custom(q, ,
    idx) {i=3, f=0.5, fi=2.0, s="a \"q\"\n", ints=[1,-2], floats=[0.5,1.0], strings=["a","b"],
          t=tensor i64[2] [1, 2], empty=floats[], forced=floats[1,2], none=other}
br = If(c) {else_branch=graph {
  n2 = Neg(z)
  output n2
}, then_branch=graph then {
  input unused
  const k: f32[1] = [2]
  t = Mul(z, k)
  inner = If(c) {then_branch=graph {
    v = Add(t, z)
    output v
  }, else_branch=graph {output t}}
  output inner
}}
gz = Relu(z) guard 0
output br, cm
output gz
effect cs
guard 0: cond=c expect=true eff=c eff_expect=false what="then branch of node 'br' (If)"
)txt";

std::string error_of(const std::string &text) {
  try {
    parse_graph(text);
  } catch (const CompileError &e) {
    EXPECT_EQ(e.kind(), CompileError::Kind::InvalidModel) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "parsed:\n" << text;
  return "";
}

#define EXPECT_ERROR(text, line, part)                                  \
  do {                                                                  \
    std::string msg_ = error_of(text);                                  \
    EXPECT_NE(msg_.find("line " #line ":"), std::string::npos) << msg_; \
    EXPECT_NE(msg_.find(part), std::string::npos) << msg_;              \
  } while (0)

int id_of(const Graph &g, const std::string &name) {
  int id = g.latest_value(name);
  EXPECT_GE(id, 0) << name;
  return id;
}

const Node &node_of(const Graph &g, const std::string &op) {
  for (const Node &n : g.nodes)
    if (n.op == op) return n;
  ADD_FAILURE() << "no " << op;
  return g.nodes.front();
}

}  // namespace

TEST(IrText, ParsesEveryConstruct) {
  Graph g = parse_graph(kSample);
  EXPECT_EQ(g.name, "main");
  EXPECT_EQ(g.opset, 17);
  EXPECT_EQ(g.domain_opsets, (std::map<std::string, int>{{"", 17}, {"com.microsoft", 1}}));
  ASSERT_EQ(g.inputs.size(), 2u);
  const Value &x = g.v(g.inputs[0]);
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dtype, DType::F32);
  EXPECT_EQ(x.shape, (Shape{1, 3, 8, 8}));
  EXPECT_TRUE(x.shape_known);

  // Constants of each type hold the listed values.
  const ConstData &h = *g.v(id_of(g, "h")).data;
  EXPECT_EQ(h.dtype, DType::F16);
  EXPECT_EQ(h.get_f(0), 0.5);
  EXPECT_EQ(h.get_f(1), -2);
  EXPECT_EQ(h.get_f(2), 65504);
  EXPECT_EQ(g.v(id_of(g, "b16")).data->get_f(1), -0.25);
  EXPECT_EQ(g.v(id_of(g, "d")).data->as<double>()[0], 0.1);
  EXPECT_EQ(g.v(id_of(g, "d")).data->as<double>()[1], 1e300);
  EXPECT_EQ(g.v(id_of(g, "u")).data->get_i(2), 255);
  EXPECT_EQ(g.v(id_of(g, "s8")).data->get_i(0), -128);
  const ConstData &i = *g.v(id_of(g, "i")).data;
  EXPECT_TRUE(i.shape.empty());
  EXPECT_EQ(i.get_i(0), 42);
  EXPECT_EQ(g.v(id_of(g, "big")).data->as<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  const ConstData &flags = *g.v(id_of(g, "flags")).data;
  EXPECT_EQ(flags.bytes, (Bytes{1, 0, 1}));
  const ConstData &ones = *g.v(id_of(g, "ones")).data;
  for (int k = 0; k < 4; ++k) EXPECT_EQ(ones.as<float>()[k], 1.0f);
  EXPECT_EQ(g.v(id_of(g, "w")).data->bytes.size(), 4u * 3 * 3 * 3 * 4);

  // Nodes: default names and opsets as the importer gives them, omitted
  // inputs and outputs, outputs left to inference unless declared.
  const Node &conv = node_of(g, "Conv");
  EXPECT_EQ(conv.name, "Conv_0");
  EXPECT_EQ(conv.opset, 17);
  EXPECT_EQ(conv.getints("kernel_shape"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(conv.attrs.at("strides").kind, Attr::Kind::Ints);
  EXPECT_TRUE(conv.attrs.at("strides").ints.empty());
  int y = conv.out[0];
  EXPECT_EQ(g.v(y).dtype, DType::F32);  // the declaration, as the importer sets it
  EXPECT_FALSE(g.v(y).shape_known);
  ASSERT_EQ(g.model_declared.count(y), 1u);
  EXPECT_EQ(g.model_declared[y].dtype, DType::F32);
  EXPECT_TRUE(g.model_declared[y].has_shape);
  EXPECT_EQ(g.model_declared[y].dims, (std::vector<int64_t>{1, 4, 8, 8}));
  EXPECT_EQ(g.declared.count(y), 0u);  // only ops outside ai.onnx take declared shapes
  const Node &relu = node_of(g, "LeakyRelu");
  EXPECT_EQ(relu.name, "LeakyRelu_1");
  EXPECT_EQ(relu.attrs.at("alpha").kind, Attr::Kind::Float);
  EXPECT_EQ(relu.getf("alpha", 0), 0.1f);
  EXPECT_EQ(g.v(relu.out[0]).dtype, DType::Undefined);
  EXPECT_FALSE(g.v(relu.out[0]).shape_known);
  EXPECT_EQ(g.model_declared.count(relu.out[0]), 0u);
  const Node &reshape = node_of(g, "Reshape");
  EXPECT_EQ(reshape.name, "reshape1");
  EXPECT_EQ(reshape.opset, 13);
  EXPECT_EQ(node_of(g, "Clip").in, (std::vector<int>{reshape.out[0], -1, id_of(g, "ones")}));
  EXPECT_EQ(node_of(g, "Clip").name, "Clip_2");
  const Node &topk = node_of(g, "TopK");
  ASSERT_EQ(topk.out.size(), 2u);
  EXPECT_EQ(topk.out[0], -1);

  // Every attribute kind, on a node of another domain.
  const Node &cu = node_of(g, "Custom");
  EXPECT_EQ(cu.domain, "com.microsoft");
  EXPECT_EQ(cu.opset, 1);
  EXPECT_EQ(cu.in.size(), 3u);
  EXPECT_EQ(cu.in[1], -1);
  EXPECT_EQ(cu.attrs.at("i").kind, Attr::Kind::Int);
  EXPECT_EQ(cu.geti("i", 0), 3);
  EXPECT_EQ(cu.attrs.at("fi").kind, Attr::Kind::Float);
  EXPECT_EQ(cu.getf("fi", 0), 2.0f);
  EXPECT_EQ(cu.gets("s", ""), "a \"q\"\n");
  EXPECT_EQ(cu.getints("ints"), (std::vector<int64_t>{1, -2}));
  EXPECT_EQ(cu.attrs.at("floats").kind, Attr::Kind::Floats);
  EXPECT_EQ(cu.getfloats("floats"), (std::vector<float>{0.5f, 1.0f}));
  EXPECT_EQ(cu.attrs.at("forced").kind, Attr::Kind::Floats);
  EXPECT_EQ(cu.getfloats("forced"), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(cu.attrs.at("empty").kind, Attr::Kind::Floats);
  EXPECT_EQ(cu.attrs.at("strings").strings, (std::vector<std::string>{"a", "b"}));
  const Attr &t = cu.attrs.at("t");
  ASSERT_EQ(t.kind, Attr::Kind::Tensor);
  EXPECT_EQ(t.t->dtype, DType::I64);
  EXPECT_EQ(t.t->get_i(1), 2);
  EXPECT_EQ(cu.attrs.at("none").kind, Attr::Kind::Other);
  // Declarations: a symbolic dimension is -1; a static shape of an op
  // outside ai.onnx is also what its inference takes.
  EXPECT_EQ(g.model_declared.at(cu.out[0]).dims, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(g.declared.count(cu.out[0]), 0u);
  ASSERT_EQ(g.declared.count(cu.out[1]), 1u);
  EXPECT_EQ(g.declared.at(cu.out[1]).first, DType::I64);
  EXPECT_EQ(g.declared.at(cu.out[1]).second, (Shape{2, 2}));

  // Subgraphs: names only, nested, reading outer values.
  const Node &br = node_of(g, "If");
  const Subgraph &then = *br.attrs.at("then_branch").graph;
  EXPECT_EQ(then.name, "then");
  EXPECT_EQ(then.inputs, (std::vector<std::string>{"unused"}));
  ASSERT_EQ(then.initializers.size(), 1u);
  EXPECT_EQ(then.initializers[0].first, "k");
  EXPECT_EQ(then.initializers[0].second->get_f(0), 2.0);
  ASSERT_EQ(then.steps.size(), 2u);
  EXPECT_EQ(then.steps[0].op, "Mul");
  EXPECT_EQ(then.steps[0].name, "");
  EXPECT_EQ(then.steps[0].in, (std::vector<std::string>{"z", "k"}));
  const Subgraph &inner = *then.steps[1].attrs.at("then_branch").graph;
  EXPECT_EQ(inner.steps[0].in, (std::vector<std::string>{"t", "z"}));
  EXPECT_EQ(then.outputs, (std::vector<std::string>{"inner"}));
  EXPECT_EQ(br.attrs.at("else_branch").graph->outputs, (std::vector<std::string>{"n2"}));

  // Outputs, effects, guards.
  EXPECT_EQ(g.outputs, (std::vector<int>{br.out[0], cu.out[0], id_of(g, "gz")}));
  EXPECT_EQ(g.effects, (std::vector<int>{cu.out[1]}));
  ASSERT_EQ(g.guards.size(), 1u);
  EXPECT_EQ(g.guards[0].cond, id_of(g, "c"));
  EXPECT_EQ(g.guards[0].eff, id_of(g, "c"));
  EXPECT_TRUE(g.guards[0].expect);
  EXPECT_FALSE(g.guards[0].eff_expect);
  EXPECT_EQ(g.guards[0].parent, -1);
  EXPECT_EQ(g.guards[0].what, "then branch of node 'br' (If)");
  EXPECT_EQ(node_of(g, "Relu").guard, 0);
}

TEST(IrText, PrintParseIsAFixpoint) {
  Graph g = parse_graph(kSample);
  std::string once = print_graph(g);
  Graph again = parse_graph(once);
  EXPECT_EQ(print_graph(again), once);
  // The reparsed graph holds the same data.
  ASSERT_EQ(again.values.size(), g.values.size());
  for (size_t i = 0; i < g.values.size(); ++i) {
    EXPECT_EQ(again.values[i].name, g.values[i].name);
    EXPECT_EQ(again.values[i].dtype, g.values[i].dtype);
    ASSERT_EQ(again.values[i].is_const(), g.values[i].is_const());
    if (g.values[i].is_const()) {
      EXPECT_EQ(again.values[i].data->bytes, g.values[i].data->bytes) << g.values[i].name;
    }
  }
  ASSERT_EQ(again.nodes.size(), g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(again.nodes[i].name, g.nodes[i].name);
    EXPECT_EQ(again.nodes[i].opset, g.nodes[i].opset);
    EXPECT_EQ(again.nodes[i].in, g.nodes[i].in);
    EXPECT_EQ(again.nodes[i].out, g.nodes[i].out);
  }
  EXPECT_EQ(again.model_declared.size(), g.model_declared.size());
  EXPECT_EQ(again.declared, g.declared);
}

TEST(IrText, CanonicalTextPrintsAsWritten) {
  const std::string text = R"txt(graph tiny opset 13 domains ai.onnx=13,com.microsoft=1
input x: f32[2,3]
const k: i64[1] = [1]
const s: f32[2] = [0.1, -3.5e-08]
y: f32[2,3] = Relu(x)
_, i: i64[?] = TopK(y, k) {axis=0, largest=1}
o = com.microsoft::Gelu@2["my gelu"](x, , y) {approximate="tanh", scales=[1.0,0.5]}
"input" = Identity(o)
output i, "input"
)txt";
  EXPECT_EQ(print_graph(parse_graph(text)), text);
}

TEST(IrText, FloatsReadBackExactly) {
  const float fvals[] = {0.1f,
                         1.0f / 3,
                         -0.0f,
                         std::numeric_limits<float>::denorm_min(),
                         std::numeric_limits<float>::max(),
                         std::numeric_limits<float>::lowest(),
                         std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(),
                         16777217.0f};
  std::vector<float> fv(std::begin(fvals), std::end(fvals));
  Graph g;
  g.opset = 17;
  int in = g.add_value("x", DType::F32, {9});
  g.inputs.push_back(in);
  int c = g.add_const("c", make_const_f32({9}, fv));
  int o = g.add_value("o", DType::F32, {9});
  Node n = make_node(g, "Add", "add", {in, c}, {o});
  Attr fs;
  fs.kind = Attr::Kind::Floats;
  fs.floats = fv;
  n.attrs["fs"] = fs;
  Attr f;
  f.kind = Attr::Kind::Float;
  f.f = 1.0f / 3;
  n.attrs["f"] = f;
  g.nodes.push_back(n);
  g.outputs.push_back(o);
  std::string text = print_graph(g);
  Graph back = parse_graph(text);
  EXPECT_EQ(back.v(back.latest_value("c")).data->bytes, g.v(c).data->bytes) << text;
  const Node &bn = back.nodes.at(0);
  ASSERT_EQ(bn.getfloats("fs").size(), fv.size());
  EXPECT_EQ(std::memcmp(bn.getfloats("fs").data(), fv.data(), fv.size() * 4), 0) << text;
  EXPECT_EQ(bn.getf("f", 0), 1.0f / 3);
  EXPECT_EQ(print_graph(back), text);
  // NaN stays NaN.
  Graph nan = parse_graph("graph g\nconst n: f32[2] = [nan, -inf]\noutput n\n");
  EXPECT_TRUE(std::isnan(nan.v(0).data->as<float>()[0]));
  EXPECT_EQ(nan.v(0).data->as<float>()[1], -std::numeric_limits<float>::infinity());
}

TEST(IrText, FillersAreDeterministic) {
  const std::string text = R"txt(graph g opset 17
const a: f32[64] = random(7)
const b: f32[64] = random(7)
const c: f32[64] = random(8)
const i: i8[64] = random(7)
const u: u16[64] = random(7)
const h: f16[64] = random(7)
const z: i32[0] = random(1)
output a
)txt";
  Graph g = parse_graph(text);
  const ConstData &a = *g.v(0).data, &b = *g.v(1).data, &c = *g.v(2).data;
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_NE(a.bytes, c.bytes);
  for (int k = 0; k < 64; ++k) {
    EXPECT_GE(a.as<float>()[k], -1.0f);
    EXPECT_LT(a.as<float>()[k], 1.0f);
    EXPECT_GE(g.v(3).data->get_i(k), -8);
    EXPECT_LE(g.v(3).data->get_i(k), 7);
    EXPECT_LE(g.v(4).data->get_i(k), 15);
    EXPECT_LE(std::fabs(g.v(5).data->get_f(k)), 1.0);
  }
  EXPECT_TRUE(g.v(6).data->bytes.empty());
  // Printed as values, which read back to the same bytes.
  std::string printed = print_graph(g);
  EXPECT_EQ(printed.find("random"), std::string::npos);
  Graph back = parse_graph(printed);
  for (int k = 0; k < 7; ++k) EXPECT_EQ(back.v(k).data->bytes, g.v(k).data->bytes);
}

TEST(IrText, PrintsAGraphBuiltInCode) {
  // Inferred types are printed; a name two values share stays with the
  // latest value.
  Graph g;
  g.name = "built";
  g.opset = 17;
  int x = g.add_value("x", DType::F32, {2, 3});
  g.inputs.push_back(x);
  int c = g.add_const("c", make_const_f32({3}, {1, 2, 3}));
  int a = g.add_value("a", DType::F32, {2, 3});
  g.nodes.push_back(make_node(g, "Add", "add", {x, c}, {a}));
  int a2 = g.add_value("a", DType::F32, {2, 3});
  g.nodes.push_back(make_node(g, "Relu", "relu", {a}, {a2}));
  int u = new_value(g, "u");
  g.nodes.push_back(make_node(g, "Neg", "neg", {a2}, {u}));
  g.outputs = {a2, u};
  std::string text = print_graph(g);
  EXPECT_EQ(text, R"txt(graph built opset 17
input x: f32[2,3]
const c: f32[3] = [1, 2, 3]
a~1: f32[2,3] = Add[add__0](x, c)
a: f32[2,3] = Relu[relu__0](a~1)
u__0 = Neg[neg__0](a)
output a, u__0
)txt");
  EXPECT_EQ(print_graph(parse_graph(text)), text);
}

TEST(IrTextErrors, UnknownValue) {
  EXPECT_ERROR("graph g opset 17\ninput x: f32[2]\ny = Relu(q)\noutput y\n", 3, "unknown value 'q'");
  EXPECT_ERROR("graph g opset 17\ninput x: f32[2]\ny = Relu(x)\noutput z\n", 4, "unknown value 'z'");
  // A value is used after its definition only.
  EXPECT_ERROR("graph g opset 17\ninput x: f32[2]\ny = Relu(z)\nz = Relu(x)\noutput y\n", 3, "unknown value 'z'");
  // In a subgraph: names of enclosing graphs defined before it.
  EXPECT_ERROR("graph g\ninput c: bool[]\ny = If(c) {then_branch=graph {\n  t = Neg(c)\n  output nope\n}}\noutput y\n",
               5, "unknown value 'nope'");
  EXPECT_ERROR("graph g\ninput c: bool[]\ny = If(c) {then_branch=graph {\n  output y\n}}\noutput y\n", 4,
               "unknown value 'y'");
  EXPECT_ERROR("graph g\ninput c: bool[]\ny = Relu(c) guard 0\nguard 0: cond=c eff=e\noutput y\n", 4,
               "unknown value 'e'");
}

TEST(IrTextErrors, BadDtype) {
  EXPECT_ERROR("graph g opset 17\ninput x: f31[2]\noutput x\n", 2, "unknown element type 'f31'");
  EXPECT_ERROR("graph g opset 17\nconst s: string[1] = [1]\noutput s\n", 2, "string");
  EXPECT_ERROR("graph g opset 17\ninput x: f32[2]\ny: float33 = Relu(x)\noutput y\n", 3, "unknown element type");
  EXPECT_ERROR("graph g opset 17\ninput x: [2]\noutput x\n", 2, "expected an element type");
}

TEST(IrTextErrors, BadShape) {
  EXPECT_ERROR("graph g\ninput x: f32[2,-1]\noutput x\n", 2, "dimension -1 is negative");
  EXPECT_ERROR("graph g\ninput x: f32[2,a]\noutput x\n", 2, "expected a dimension");
  EXPECT_ERROR("graph g\ninput x: f32[2,?]\noutput x\n", 2, "expected a dimension");
  EXPECT_ERROR("graph g\ninput x: f32[2\noutput x\n", 2, "expected ',' or ']' in a shape, found end of line");
  EXPECT_ERROR("graph g\ninput x: f32\noutput x\n", 2, "expected '[' starting a shape");
  EXPECT_ERROR("graph g\ninput x: f32[99999999999,99999999999]\noutput x\n", 2, "elements");
  EXPECT_ERROR("graph g\nconst x: f32[100000,100000] = random(1)\noutput x\n", 2, "elements");
  EXPECT_ERROR("graph g\nconst x: f32[2,2] = [1, 2, 3]\noutput x\n", 2, "(4 values) but 3 are listed");
  EXPECT_ERROR("graph g\nconst x: f32[2] = [1, 2,\n 3]\noutput x\n", 3, "more than its 2 values");
}

TEST(IrTextErrors, DuplicateDefinition) {
  EXPECT_ERROR("graph g\ninput x: f32[2]\nx = Relu(x)\noutput x\n", 3, "value 'x' is already defined on line 2");
  EXPECT_ERROR("graph g\ninput x: f32[2]\nconst x: f32[1] = [1]\noutput x\n", 3, "already defined on line 2");
  EXPECT_ERROR("graph g\ninput x: f32[2]\na, a = Split(x)\noutput a\n", 3, "value 'a' is already defined on line 3");
  EXPECT_ERROR("graph g\ninput c: bool[]\ny = If(c) {then_branch=graph {\n  input p, p\n  output p\n}}\noutput y\n", 4,
               "value 'p' is already defined in this subgraph");
  EXPECT_ERROR("graph g\ninput x: f32[2]\ny = Relu(x) {alpha=1, alpha=2}\noutput y\n", 3,
               "attribute 'alpha' is given twice");
  EXPECT_ERROR("graph g domains ai.onnx=1,ai.onnx=2\ninput x: f32[2]\noutput x\n", 1, "listed twice");
}

TEST(IrTextErrors, TruncatedInput) {
  EXPECT_ERROR("graph g\ninput x: f32[2]\nconst w: f32[4] = [1, 2", 3, "found end of text");
  EXPECT_ERROR("graph g\ninput x: f32[2]\ny = Relu(x", 3,
               "expected ',' or ')' in the node's inputs, found end of text");
  EXPECT_ERROR("graph g\ninput x: f32[2]\ny = Relu(x) {alpha=", 3, "expected an attribute value");
  EXPECT_ERROR("graph g\ninput c: bool[]\ny = If(c) {then_branch=graph {\n  t = Neg(c)\n", 4,
               "expected '}' closing the subgraph of line 3, found end of text");
  EXPECT_ERROR("graph g\ninput x: f32[2]\ns = \"abc", 3, "unterminated string");
  EXPECT_ERROR("graph g\ninput x: f32[2]\ny = Relu(x)\n", 3, "the graph has no outputs");
  EXPECT_ERROR("graph g\ninput x: f32[2]\ny = Relu(x)\n\n# done\n", 3, "the graph has no outputs");
  EXPECT_ERROR("", 1, "expected 'graph'");
}

TEST(IrTextErrors, BadAttributes) {
  const std::string head = "graph g\ninput x: f32[2]\n";
  EXPECT_ERROR(head + "y = Resize(x) {mode=nearest}\noutput y\n", 3, "expected an attribute value");
  EXPECT_ERROR(head + "y = Resize(x) {axes=[]}\noutput y\n", 3, "an empty list needs its kind");
  EXPECT_ERROR(head + "y = Resize(x) {axes=[1, \"a\"]}\noutput y\n", 3, "numbers or strings, not both");
  EXPECT_ERROR(head + "y = Resize(x) {axes=ints[1, 0.5]}\noutput y\n", 3, "expected an integer in the list");
  EXPECT_ERROR(head + "y = Resize(x) {axes=[1 2]}\noutput y\n", 3, "expected ',' or ']' in a list");
  EXPECT_ERROR(head + "y = Resize(x) {axes 1}\noutput y\n", 3, "expected '=' after attribute 'axes'");
  EXPECT_ERROR(head + "y = Resize(x) {a=1e99}\noutput y\n", 3, "expected an attribute value");
  EXPECT_ERROR(head + "y = Resize(x) {a=99999999999999999999}\noutput y\n", 3, "out of the range of int64");
  EXPECT_ERROR(head + "y = Resize(x) {a=[1, 99999999999999999999]}\noutput y\n", 3, "out of the range of int64");
  EXPECT_ERROR(head + "y = Resize(x) {t=tensor u8[2] [1, 256]}\noutput y\n", 3, "'256' is not a value of type u8");
  EXPECT_ERROR(head + "y = Resize(x) {t=tensor i64[2] [1, 2.5]}\noutput y\n", 3, "'2.5' is not a value of type i64");
  EXPECT_ERROR(head + "y = Resize(x) {s=\"\\q\"}\noutput y\n", 3, "bad escape");
  EXPECT_ERROR(head + "y = Resize(x) {g=graph {\n  graph x\n}}\noutput y\n", 4, "'graph' cannot be in a subgraph");
  EXPECT_ERROR(head + "y = Relu(x) % 2\noutput y\n", 3, "unexpected character '%'");
  EXPECT_ERROR(head + "y = Relu(x) guard 1\noutput y\n", 3, "guard 1 is not defined");
  EXPECT_ERROR(head + "y = Relu(x)\noutput y\nguard 1: cond=x eff=x\n", 5, "expected guard 0");
  EXPECT_ERROR(head + "y = Relu(x)\noutput y\nguard 0: cond=x eff=x parent=0\n", 5, "not another guard");
  EXPECT_ERROR(head + "y = Relu(x)\noutput y\ngraph h\n", 5, "the graph is named once");
}

TEST(IrTextErrors, NeverCrashesOnDamagedText) {
  // Every prefix of the sample and the sample with each character replaced
  // either parses or is refused with its line named.
  const std::string text = kSample;
  auto check = [](const std::string &t) {
    try {
      parse_graph(t);
    } catch (const CompileError &e) {
      EXPECT_EQ(std::string(e.what()).rfind("line ", 0), 0u) << e.what();
    }
  };
  for (size_t n = 0; n <= text.size(); ++n) check(text.substr(0, n));
  for (size_t n = 0; n < text.size(); ++n)
    for (char c : {'(', '}', ',', '"', '\n', 'q'}) {
      std::string t = text;
      t[n] = c;
      check(t);
    }
}

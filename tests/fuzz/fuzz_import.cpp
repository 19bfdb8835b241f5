// fuzz_import — ONNX bytes through the importer and every pass of the
// pipeline up to memory planning (plan_model; no LLVM code generation),
// a quarter of them with --quantize dynamic.
//
// A documented refusal (CompileError other than Internal) is fine. A crash,
// a sanitizer report, an internal error or another exception, a time-out
// or runaway memory is a finding; so is a memory plan that breaks its own
// rules (checked below): a buffer outside the arena or misaligned, two
// buffers live at the same step that overlap, a value whose elements reach
// outside its buffer's arena range, an arena above the cap.
//
// A structure-aware mutator (LLVMFuzzerCustomMutator) works on inputs that
// parse as a model: it moves a node into a new model-local function, makes
// a function call another (or itself: recursion, also through a cycle),
// repeats a call (fan-out), and nests a node's subgraph inside itself, so
// that deep, recursive and exponential function and subgraph structures
// are reached, not only byte-level variations (half the mutations stay
// libFuzzer's own).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "driver/compiler.h"
#include "fuzz_common.h"
#include "onnx/onnx_pb.h"

using namespace tinyrt;

namespace {

void check_plan(const Program &p, const Limits &lim) {
  const PlanStats &st = p.stats;
  const int64_t arena = st.arena_bytes;
  if (arena < 0 || arena > lim.max_arena_bytes)
    fuzz::finding("arena of " + std::to_string(arena) + " bytes passed the cap " + std::to_string(lim.max_arena_bytes));
  auto name = [&](int v) { return "'" + p.graph.v(v).name + "'"; };
  for (const PlannedBuffer &b : st.buffers) {
    if (b.offset < 0 || b.offset % 64 || b.bytes < 0 || b.offset > arena || b.bytes > arena - b.offset)
      fuzz::finding("buffer of " + name(b.value) + " at " + std::to_string(b.offset) + " + " + std::to_string(b.bytes) +
                    " lies outside the arena of " + std::to_string(arena) + " bytes or is misaligned");
    if (b.first > b.last)
      fuzz::finding("buffer of " + name(b.value) + " is live from step " + std::to_string(b.first) + " to " +
                    std::to_string(b.last));
  }
  // Buffers live at a common step must not overlap (quadratic: checked for
  // plans of up to 3000 buffers, which covers every model the fuzzer makes
  // within the time-out).
  if (st.buffers.size() <= 3000)
    for (size_t i = 0; i < st.buffers.size(); ++i)
      for (size_t j = i + 1; j < st.buffers.size(); ++j) {
        const PlannedBuffer &a = st.buffers[i], &b = st.buffers[j];
        if (a.first <= b.last && b.first <= a.last && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes &&
            a.bytes > 0 && b.bytes > 0)
          fuzz::finding("buffers of " + name(a.value) + " and " + name(b.value) + " overlap while both are live");
      }
  // Every value the kernels read or write in the arena: its elements (by
  // its strides) stay inside the arena.
  for (size_t v = 0; v < p.storage.size() && v < p.graph.values.size(); ++v) {
    const Storage &s = p.storage[v];
    if (s.where != Storage::Where::Arena) continue;
    const Value &val = p.graph.values[v];
    if (val.numel() == 0) continue;
    if (s.strides.size() != val.shape.size())
      fuzz::finding("value " + name((int)v) + " has " + std::to_string(s.strides.size()) + " strides for rank " +
                    std::to_string(val.shape.size()));
    for (int64_t st : s.strides)
      if (st < 0) fuzz::finding("value " + name((int)v) + " has a negative stride");
    int64_t end = s.offset + p.span_bytes((int)v);
    if (s.offset < 0 || end > arena)
      fuzz::finding("value " + name((int)v) + " spans arena bytes " + std::to_string(s.offset) + " to " +
                    std::to_string(end) + ", beyond the arena of " + std::to_string(arena));
  }
}

// ------------------------------------------------- structure mutations --

const char *const kFnDomain = "fz";

void import_domain(onnx::ModelProto &m, const std::string &d) {
  for (const auto &op : m.opset_import())
    if (op.domain() == d) return;
  auto *op = m.add_opset_import();
  op->set_domain(d);
  op->set_version(1);
}

// Moves main-graph node i into a new function of its own (formal inputs
// and outputs a0.., b0..), called in its place.
void outline_node(onnx::ModelProto &m, std::mt19937 &r) {
  auto *nodes = m.mutable_graph()->mutable_node();
  if (nodes->empty()) return;
  onnx::NodeProto &n = (*nodes)[(int)(r() % nodes->size())];
  onnx::FunctionProto *f = m.add_functions();
  f->set_domain(kFnDomain);
  f->set_name("F" + std::to_string(m.functions_size()));
  for (const auto &op : m.opset_import())
    if (op.domain() != kFnDomain) *f->add_opset_import() = op;
  onnx::NodeProto body = n;
  onnx::NodeProto call;
  call.set_op_type(f->name());
  call.set_domain(kFnDomain);
  call.set_name(n.name());
  for (int i = 0; i < body.input_size(); ++i) {
    if (body.input(i).empty()) continue;
    call.add_input(body.input(i));
    f->add_input("a" + std::to_string(i));
    body.set_input(i, "a" + std::to_string(i));
  }
  for (int i = 0; i < body.output_size(); ++i) {
    call.add_output(body.output(i));
    f->add_output("b" + std::to_string(i));
    body.set_output(i, "b" + std::to_string(i));
  }
  *f->add_node() = body;
  n = call;
  import_domain(m, kFnDomain);
}

// A call of function g (by name) that reads `in` and writes fresh names.
onnx::NodeProto call_of(const onnx::FunctionProto &g, const std::string &in, const std::string &tag) {
  onnx::NodeProto c;
  c.set_op_type(g.name());
  c.set_domain(g.domain());
  for (int i = 0; i < g.input_size(); ++i) c.add_input(in);
  for (int i = 0; i < g.output_size(); ++i) c.add_output(tag + "_" + std::to_string(i));
  return c;
}

// Function f gains a call of function g (g == f: recursion; g calling f
// already: a cycle) reading f's first input, its results unused.
void add_call(onnx::ModelProto &m, std::mt19937 &r) {
  if (m.functions_size() == 0) return;
  onnx::FunctionProto &f = *m.mutable_functions((int)(r() % m.functions_size()));
  const onnx::FunctionProto &g = m.functions((int)(r() % m.functions_size()));
  if (f.input_size() == 0) return;
  onnx::NodeProto c = call_of(g, f.input(0), "c" + std::to_string(r() % 100000));
  auto *nodes = f.mutable_node();
  nodes->Add(std::move(c));
  // At a random place, not always last (order checks matter too).
  for (int i = nodes->size() - 1; i > 0 && r() % 2; --i) nodes->SwapElements(i, i - 1);
}

// A call node in a function body or the main graph repeated (fan-out:
// chains of repeated calls grow exponentially once inlined).
void repeat_call(onnx::ModelProto &m, std::mt19937 &r) {
  const int k = m.functions_size() ? (int)(r() % (m.functions_size() + 1)) : 0;
  auto *nodes = k == 0 ? m.mutable_graph()->mutable_node() : m.mutable_functions(k - 1)->mutable_node();
  std::vector<int> calls;
  for (int i = 0; i < nodes->size(); ++i)
    if ((*nodes)[i].domain() == kFnDomain) calls.push_back(i);
  if (calls.empty()) return;
  onnx::NodeProto c = (*nodes)[calls[r() % calls.size()]];
  const std::string tag = "r" + std::to_string(r() % 100000);
  for (auto &o : *c.mutable_output()) o = tag + "_" + o;
  int copies = 1 + (int)(r() % 4);
  for (int i = 0; i < copies; ++i) *nodes->Add() = c;
}

// A node's subgraph placed inside a node of that same subgraph (one level
// deeper each time), or a subgraph's node moved into a new function.
void nest_subgraph(onnx::ModelProto &m, std::mt19937 &r) {
  std::vector<onnx::AttributeProto *> graphs;
  for (auto &n : *m.mutable_graph()->mutable_node())
    for (auto &a : *n.mutable_attribute())
      if (a.has_g()) graphs.push_back(&a);
  if (graphs.empty()) return;
  onnx::AttributeProto *a = graphs[r() % graphs.size()];
  std::vector<onnx::AttributeProto *> inner;
  for (auto &n : *a->mutable_g()->mutable_node())
    for (auto &b : *n.mutable_attribute())
      if (b.has_g()) inner.push_back(&b);
  if (inner.empty()) return;
  onnx::GraphProto copy = a->g();
  *inner[r() % inner.size()]->mutable_g() = copy;
}

size_t mutate_structure(uint8_t *data, size_t size, size_t max_size, unsigned seed) {
  std::mt19937 r(seed);
  onnx::ModelProto m;
  if (!m.ParseFromArray(data, (int)size)) return 0;
  switch (r() % 4) {
    case 0: outline_node(m, r); break;
    case 1: add_call(m, r); break;
    case 2: repeat_call(m, r); break;
    default: nest_subgraph(m, r); break;
  }
  std::string out;
  if (!m.SerializeToString(&out) || out.size() > max_size) return 0;
  memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  if (seed % 2 == 0)
    if (size_t n = mutate_structure(data, size, max_size, seed)) return n;
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  resolve_target("host");  // initializes LLVM's host detection once
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  CompileOptions opt;
  opt.target = "host";
  opt.import.limits = fuzz::fuzz_limits();
  std::string bytes(reinterpret_cast<const char *>(data), size);
  // A quarter of the inputs (by a hash of their bytes, so that a finding
  // replays) also go through --quantize dynamic's rewrites.
  uint32_t h = 2166136261u;
  for (unsigned char ch : bytes) h = (h ^ ch) * 16777619u;
  if ((h & 3) == 0) opt.quantize = Quantize::Dynamic;
  Program p;
  if (fuzz::compiles([&] { p = plan_model(bytes, opt); })) check_plan(p, opt.import.limits);
  return 0;
}

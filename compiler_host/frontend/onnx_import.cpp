#include "frontend/onnx_import.h"

#include "frontend/onnx_functions.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace tinyrt {

template <class Dst, class Src>
static void fill(Bytes &b, const Src &src, int64_t n) {
  b.resize((size_t)n * sizeof(Dst));
  for (int64_t i = 0; i < n; ++i) {
    Dst v = (Dst)src.Get((int)i);
    std::memcpy(b.data() + i * sizeof(Dst), &v, sizeof(Dst));
  }
}

// The number of values a tensor's typed data field holds for its type.
static int typed_values(const onnx::TensorProto &t, DType dt) {
  switch (dt) {
    case DType::F32: return t.float_data_size();
    case DType::F64: return t.double_data_size();
    case DType::I64: return t.int64_data_size();
    case DType::U32: case DType::U64: return t.uint64_data_size();
    default: return t.int32_data_size();
  }
}

// A tensor's data must be exactly what its type and shape say: raw_data
// of numel * element-size bytes, or numel typed values. Checked before
// anything reads a tensor (ONNX's shape inference, which tinyrt ran
// before, copied all of raw_data into a buffer sized from it rounded down:
// a Resize whose scales had 15 bytes of raw_data wrote 3 bytes past a
// 12-byte buffer, found by fuzz_import under ASan).
static void check_tensor_proto(const onnx::TensorProto &t, DType *dt_out = nullptr, int64_t *n_out = nullptr) {
  DType dt = (DType)t.data_type();
  std::string what = "tensor '" + t.name() + "'";
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    fail_unsupported(what + " stores its data in an external file");
  if (dt == DType::String) fail_unsupported(what + " holds strings: out of scope (strings)");
  if (!dtype_supported(dt)) fail_unsupported(what + " has unsupported type " + dtype_name(dt));
  Shape shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0) fail_invalid(what + " has a negative dimension in " + shape_str(shape));
  int64_t n = shape_numel(shape), bytes;
  // The byte count must not wrap either: 4 bytes of raw_data would else
  // "match" 2^62 + 1 floats.
  if (__builtin_mul_overflow(n, (int64_t)dtype_bytes(dt), &bytes))
    fail_invalid(what + " has shape " + shape_str(shape) + ": its size in bytes overflows 64 bits");
  if (t.has_raw_data()) {
    if ((int64_t)t.raw_data().size() != bytes)
      fail_invalid(what + ": raw_data has " + std::to_string(t.raw_data().size()) + " bytes, expected " +
                   std::to_string(bytes));
  } else if (typed_values(t, dt) != n) {
    fail_invalid(what + " has " + std::to_string(typed_values(t, dt)) + " values for shape " + shape_str(shape));
  }
  if (dt_out) *dt_out = dt;
  if (n_out) *n_out = n;
}

ConstP const_from_tensor_proto(const onnx::TensorProto &t) {
  DType dt;
  int64_t n;
  check_tensor_proto(t, &dt, &n);
  Shape shape(t.dims().begin(), t.dims().end());
  Bytes b;
  if (t.has_raw_data()) {
    b.assign(t.raw_data().begin(), t.raw_data().end());
    return make_const(dt, shape, std::move(b));
  }
  switch (dt) {
    case DType::F32: fill<float>(b, t.float_data(), n); break;
    case DType::F64: fill<double>(b, t.double_data(), n); break;
    case DType::I64: fill<int64_t>(b, t.int64_data(), n); break;
    case DType::I32: fill<int32_t>(b, t.int32_data(), n); break;
    case DType::I16: fill<int16_t>(b, t.int32_data(), n); break;
    case DType::U16: case DType::F16: case DType::BF16: fill<uint16_t>(b, t.int32_data(), n); break;
    case DType::I8: fill<int8_t>(b, t.int32_data(), n); break;
    case DType::U8: case DType::Bool: fill<uint8_t>(b, t.int32_data(), n); break;
    case DType::U32: fill<uint32_t>(b, t.uint64_data(), n); break;
    case DType::U64: fill<uint64_t>(b, t.uint64_data(), n); break;
    default: fail_unsupported("tensor '" + t.name() + "' has unsupported type " + dtype_name(dt));
  }
  return make_const(dt, shape, std::move(b));
}

ConstP read_tensor_file(const std::string &path, std::string *name) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail_usage("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  onnx::TensorProto t;
  if (!t.ParseFromString(ss.str())) fail_invalid(path + " is not a serialized TensorProto");
  if (name) *name = t.name();
  return const_from_tensor_proto(t);
}

static Attr convert_attr(const onnx::AttributeProto &a, const std::string &where) {
  Attr r;
  switch (a.type()) {
    case onnx::AttributeProto::INT: r.kind = Attr::Kind::Int; r.i = a.i(); break;
    case onnx::AttributeProto::FLOAT: r.kind = Attr::Kind::Float; r.f = a.f(); break;
    case onnx::AttributeProto::STRING: r.kind = Attr::Kind::String; r.s = a.s(); break;
    case onnx::AttributeProto::INTS:
      r.kind = Attr::Kind::Ints;
      r.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      r.kind = Attr::Kind::Floats;
      r.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::STRINGS:
      r.kind = Attr::Kind::Strings;
      r.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case onnx::AttributeProto::TENSOR:
      r.kind = Attr::Kind::Tensor;
      r.t = const_from_tensor_proto(a.t());
      break;
    case onnx::AttributeProto::GRAPH:
      r.kind = Attr::Kind::Graph;  // expanded by the op (If, Loop, Scan)
      r.graph = std::make_shared<onnx::GraphProto>(a.g());
      break;
    default:
      r.kind = Attr::Kind::Other;  // type protos, sparse tensors: no op of ours reads them
      break;
  }
  return r;
}

ConstP values_as_tensor(const std::vector<double> &v, DType dt, const Shape &shape, const std::string &what) {
  Bytes bytes((size_t)((int64_t)v.size() * dtype_bytes(dt)));
  for (size_t i = 0; i < v.size(); ++i) {
    uint8_t *p = bytes.data() + i * dtype_bytes(dt);
    switch (dt) {
      case DType::F32: { float x = (float)v[i]; std::memcpy(p, &x, 4); break; }
      case DType::F64: { double x = v[i]; std::memcpy(p, &x, 8); break; }
      case DType::I64: { int64_t x = (int64_t)v[i]; std::memcpy(p, &x, 8); break; }
      case DType::I32: { int32_t x = (int32_t)v[i]; std::memcpy(p, &x, 4); break; }
      case DType::U8: case DType::Bool: *p = (uint8_t)v[i]; break;
      case DType::I8: *p = (uint8_t)(int8_t)v[i]; break;
      default: fail_usage(what + ": type " + dtype_name(dt) + " needs a tensor file (@file.pb)");
    }
  }
  return make_const(dt, shape, std::move(bytes));
}

static ConstP resolve_binding(const onnx::ValueInfoProto &vi, const Binding &b) {
  const std::string &name = vi.name();
  DType dt = vi.type().has_tensor_type() ? (DType)vi.type().tensor_type().elem_type() : DType::Undefined;
  ConstP c = b.tensor;
  if (!c) {
    Shape shape = {(int64_t)b.values.size()};
    if (vi.type().tensor_type().has_shape()) {
      Shape declared;
      bool fixed = true;
      for (auto &d : vi.type().tensor_type().shape().dim()) {
        fixed = fixed && d.has_dim_value();
        declared.push_back(d.dim_value());
      }
      if (fixed && shape_numel(declared) == (int64_t)b.values.size()) shape = declared;
    }
    c = values_as_tensor(b.values, dt, shape, "--bind " + name);
  }
  if (c->dtype != dt)
    fail_usage("--bind " + name + ": the tensor is " + dtype_name(c->dtype) + ", the input is " + dtype_name(dt));
  return c;
}

std::pair<std::string, Shape> parse_input_shape(const std::string &arg) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) fail_usage("--input-shape expects NAME=D0,D1,..., got '" + arg + "'");
  Shape s;
  std::stringstream ss(arg.substr(eq + 1));
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    char *end = nullptr;
    long long d = strtoll(tok.c_str(), &end, 10);
    if (tok.empty() || *end || d < 0) fail_usage("--input-shape " + arg + ": '" + tok + "' is not a dimension");
    s.push_back(d);
  }
  return {arg.substr(0, eq), s};
}

std::pair<std::string, Binding> parse_binding(const std::string &arg) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) fail_usage("--bind expects NAME=V0,V1,... or NAME=@file.pb, got '" + arg + "'");
  Binding b;
  std::string rest = arg.substr(eq + 1);
  if (!rest.empty() && rest[0] == '@') {
    b.tensor = read_tensor_file(rest.substr(1));
  } else {
    std::stringstream ss(rest);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
      char *end = nullptr;
      double v = strtod(tok.c_str(), &end);
      if (tok.empty() || *end) fail_usage("--bind " + arg + ": '" + tok + "' is not a number");
      b.values.push_back(v);
    }
  }
  return {arg.substr(0, eq), b};
}

// Converts one NodeProto. `ids` maps names in scope to values; new output
// values are named prefix + name (unique when a subgraph is inlined more
// than once).
// Subgraphs refer to enclosing values by name. When the enclosing nodes are
// inlined (renamed), rewrite the subgraph's free names to the values they
// now denote, recursively.
static void rename_free_names(onnx::GraphProto &sub, const std::map<std::string, int> &ids, const Graph &g) {
  std::set<std::string> local;
  for (auto &i : sub.input()) local.insert(i.name());
  for (auto &t : sub.initializer()) local.insert(t.name());
  for (auto &nd : sub.node())
    for (auto &o : nd.output()) local.insert(o);
  auto fix = [&](std::string *name) {
    if (name->empty() || local.count(*name)) return;
    auto it = ids.find(*name);
    if (it != ids.end()) *name = g.v(it->second).name;
  };
  for (auto &nd : *sub.mutable_node()) {
    for (auto &in : *nd.mutable_input()) fix(&in);
    for (auto &a : *nd.mutable_attribute())
      if (a.has_g()) rename_free_names(*a.mutable_g(), ids, g);
  }
  for (auto &o : *sub.mutable_output()) fix(o.mutable_name());
}

// An input may be omitted ("" in the file, or a model-local function's
// formal input its call left out) only where the op's schema makes it
// optional: the ops' inference and lowering read every other input (a
// Concat reached through a function called with fewer inputs read value
// -1, found by fuzz_import). Every node from the file, a subgraph or a
// function body passes here.
static void check_omitted_inputs(const Node &n) {
  const onnx::OpSchema *s = onnx::OpSchemaRegistry::Schema(n.op, n.opset, n.domain == "ai.onnx" ? "" : n.domain);
  if (!s || s->inputs().empty()) return;
  const auto &formal = s->inputs();
  for (size_t k = 0; k < n.in.size(); ++k) {
    if (n.in[k] >= 0) continue;
    const auto &f = formal[std::min(k, formal.size() - 1)];
    if (k >= formal.size() && f.GetOption() != onnx::OpSchema::Variadic) continue;  // past the schema: the op's own checks
    if (f.GetOption() != onnx::OpSchema::Optional)
      fail_invalid(n.where() + ": input " + std::to_string(k) + " (" + f.GetName() + ") is omitted, but the op requires it");
  }
}

static Node convert_node(const onnx::NodeProto &np, Graph &g, std::map<std::string, int> &ids,
                         const std::string &prefix, int &unnamed) {
  Node n;
  n.name = prefix + (np.name().empty() ? np.op_type() + "_" + std::to_string(unnamed++) : np.name());
  n.op = np.op_type();
  n.domain = np.domain();
  auto dom = g.domain_opsets.find(n.domain.empty() ? "" : n.domain);
  n.opset = dom != g.domain_opsets.end() ? dom->second : g.opset;
  for (auto &a : np.attribute()) {
    // Names starting with '_' are the compiler's own marks on the ops of
    // the domains it implements (passes/quantize_dynamic.cpp, an If's
    // merge and branch error); a file cannot set them.
    bool own = n.domain.empty() || n.domain == "ai.onnx" || n.domain == "com.microsoft" || n.domain == "tinyrt";
    if (own && !a.name().empty() && a.name()[0] == '_')
      fail_unsupported(n.where() + ": attribute '" + a.name() + "' is not supported");
    n.attrs[a.name()] = convert_attr(a, n.where());
    if (a.has_g() && !prefix.empty()) {
      auto sub = std::make_shared<onnx::GraphProto>(a.g());
      rename_free_names(*sub, ids, g);
      n.attrs[a.name()].graph = sub;
    }
  }
  for (auto &in : np.input()) {
    if (in.empty()) {
      n.in.push_back(-1);
      continue;
    }
    auto it = ids.find(in);
    if (it == ids.end()) fail_invalid(n.where() + ": input '" + in + "' is not produced before use");
    n.in.push_back(it->second);
  }
  check_omitted_inputs(n);
  for (auto &out : np.output()) {
    if (out.empty()) {
      n.out.push_back(-1);
      continue;
    }
    if (ids.count(out) && prefix.empty()) fail_invalid(n.where() + ": output '" + out + "' is assigned twice");
    int id = g.add_value(prefix + out, DType::Undefined, {});
    g.v(id).shape_known = false;
    ids[out] = id;
    n.out.push_back(id);
  }
  return n;
}

// Names a subgraph reads but does not define, its nested subgraphs' included.
static void free_names(const onnx::GraphProto &sub, std::set<std::string> *out) {
  std::set<std::string> local, read;
  for (auto &i : sub.input()) local.insert(i.name());
  for (auto &t : sub.initializer()) local.insert(t.name());
  for (auto &nd : sub.node()) {
    read.insert(nd.input().begin(), nd.input().end());
    for (auto &a : nd.attribute()) {
      if (a.has_g()) free_names(a.g(), &read);
      for (auto &gr : a.graphs()) free_names(gr, &read);
    }
    local.insert(nd.output().begin(), nd.output().end());
  }
  for (auto &o : sub.output()) read.insert(o.name());
  for (auto &r : read)
    if (!r.empty() && !local.count(r)) out->insert(r);
}

Scope body_scope(const Graph &g, const onnx::GraphProto &body) {
  std::set<std::string> wanted;
  free_names(body, &wanted);
  Scope s;
  for (const std::string &name : wanted)  // the latest value of a name wins
    if (int id = g.latest_value(name); id >= 0) s.emplace(name, id);
  return s;
}

InlinedGraph inline_subgraph(Graph &g, const onnx::GraphProto &body, const std::vector<int> &inputs,
                             const std::string &prefix, const Scope *outer) {
  if ((int)inputs.size() != body.input_size())
    fail_invalid("subgraph '" + body.name() + "' takes " + std::to_string(body.input_size()) + " inputs, got " +
                 std::to_string(inputs.size()));
  // Names in scope: the outer values the body reads, then the body's own.
  std::map<std::string, int> ids = outer ? *outer : body_scope(g, body);
  for (auto &t : body.initializer()) ids[t.name()] = g.add_const(prefix + t.name(), const_from_tensor_proto(t));
  for (int i = 0; i < body.input_size(); ++i) ids[body.input(i).name()] = inputs[i];
  InlinedGraph r;
  int unnamed = 0;
  for (auto &np : body.node()) r.nodes.push_back(convert_node(np, g, ids, prefix, unnamed));
  for (auto &vi : body.output()) {
    auto it = ids.find(vi.name());
    if (it == ids.end()) fail_invalid("subgraph output '" + vi.name() + "' is never produced");
    r.outputs.push_back(it->second);
  }
  return r;
}

// Our attribute back to an AttributeProto (function bodies, export).
onnx::AttributeProto attribute_proto(const std::string &name, const Attr &a) {
  onnx::AttributeProto p;
  p.set_name(name);
  switch (a.kind) {
    case Attr::Kind::Int: p.set_type(onnx::AttributeProto::INT); p.set_i(a.i); break;
    case Attr::Kind::Float: p.set_type(onnx::AttributeProto::FLOAT); p.set_f(a.f); break;
    case Attr::Kind::String: p.set_type(onnx::AttributeProto::STRING); p.set_s(a.s); break;
    case Attr::Kind::Ints:
      p.set_type(onnx::AttributeProto::INTS);
      for (auto v : a.ints) p.add_ints(v);
      break;
    case Attr::Kind::Floats:
      p.set_type(onnx::AttributeProto::FLOATS);
      for (auto v : a.floats) p.add_floats(v);
      break;
    case Attr::Kind::Strings:
      p.set_type(onnx::AttributeProto::STRINGS);
      for (auto &v : a.strings) p.add_strings(v);
      break;
    case Attr::Kind::Tensor: {
      p.set_type(onnx::AttributeProto::TENSOR);
      auto *t = p.mutable_t();
      t->set_data_type((int)a.t->dtype);
      for (auto d : a.t->shape) t->add_dims(d);
      t->set_raw_data(std::string(a.t->bytes.begin(), a.t->bytes.end()));
      break;
    }
    default: break;
  }
  return p;
}

bool expand_function(const Node &n, Graph &g, std::vector<Node> *nodes) {
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(n.op, n.opset, n.domain);
  if (!schema) return false;
  // The node as a NodeProto, with input types for context-dependent bodies.
  onnx::NodeProto np;
  np.set_op_type(n.op);
  np.set_domain(n.domain);
  std::vector<onnx::TypeProto> types;
  for (int v : n.in) {
    np.add_input(v >= 0 ? g.v(v).name : "");
    onnx::TypeProto tp;
    if (v >= 0) {
      auto *tt = tp.mutable_tensor_type();
      tt->set_elem_type((int)g.v(v).dtype);
      for (auto d : g.v(v).shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    types.push_back(tp);
  }
  for (int v : n.out) np.add_output(v >= 0 ? g.v(v).name : "");
  for (auto &kv : n.attrs)
    if (kv.first[0] != '_') *np.add_attribute() = attribute_proto(kv.first, kv.second);
  onnx::FunctionProto fn;
  if (schema->HasContextDependentFunction()) {
    onnx::FunctionBodyBuildContextImpl ctx(np, types);
    if (!schema->BuildContextDependentFunction(ctx, fn)) return false;
  } else if (schema->HasFunction()) {
    fn = *schema->GetFunction();
  } else {
    return false;
  }
  // Bind: formal inputs to the node's values (missing optional ones stay
  // unnamed), attribute references to the node's attributes.
  std::map<std::string, int> ids;
  for (size_t i = 0; i < g.values.size(); ++i) ids[g.values[i].name] = (int)i;
  for (int i = 0; i < fn.input_size(); ++i)
    if (i < (int)n.in.size() && n.in[i] >= 0) ids[fn.input(i)] = n.in[i];
    else ids.erase(fn.input(i));
  std::string prefix = n.name + "/";
  int unnamed = 0;
  for (onnx::NodeProto body : fn.node()) {
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
    for (auto &a : body.attribute()) {
      if (a.ref_attr_name().empty()) {
        *attrs.Add() = a;
        continue;
      }
      auto it = n.attrs.find(a.ref_attr_name());
      if (it != n.attrs.end()) {
        *attrs.Add() = attribute_proto(a.name(), it->second);
        continue;
      }
      // Not set on the node: the op's default for that attribute, if any.
      auto def = schema->attributes().find(a.ref_attr_name());
      if (def != schema->attributes().end() && def->second.default_value.type() != onnx::AttributeProto::UNDEFINED) {
        onnx::AttributeProto r = def->second.default_value;
        r.set_name(a.name());
        *attrs.Add() = r;
      }
    }
    body.mutable_attribute()->Swap(&attrs);
    nodes->push_back(convert_node(body, g, ids, prefix, unnamed));
  }
  for (int i = 0; i < fn.output_size() && i < (int)n.out.size(); ++i) {
    if (n.out[i] < 0) continue;
    auto it = ids.find(fn.output(i));
    if (it == ids.end()) fail_invalid(n.where() + ": function body output '" + fn.output(i) + "' is never produced");
    Node id;
    id.op = "Identity";
    id.name = prefix + "output_" + std::to_string(i);
    id.in = {it->second};
    id.out = {n.out[i]};
    id.opset = g.opset;
    nodes->push_back(id);
  }
  return true;
}

// Attributes that are sizes, strides, counts or axes are checked here
// first, in every subgraph too, before the onnx library's checker or any
// op reads them (ONNX's shape inference, which tinyrt no longer runs,
// divided by a zero stride: SIGFPE inside the onnx library).
static void prevalidate_attributes(const onnx::GraphProto &gp, int depth);

static void prevalidate_nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes, int depth) {
  static const std::set<std::string> positive_ints = {"strides", "dilations", "kernel_shape"};
  static const std::set<std::string> positive_int = {"blocksize", "group", "hidden_size", "size"};
  for (const auto &np : nodes) {
    std::string where = "node '" + np.name() + "' (" + np.op_type() + ")";
    for (const auto &a : np.attribute()) {
      if (a.type() == onnx::AttributeProto::INTS && positive_ints.count(a.name()))
        for (int64_t v : a.ints())
          if (v < 1 || v > INT32_MAX)
            fail_invalid(where + ": attribute " + a.name() + " holds " + std::to_string(v) +
                         "; each entry must be in [1, 2^31)");
      if (a.type() == onnx::AttributeProto::INT && positive_int.count(a.name()) && (a.i() < 1 || a.i() > INT32_MAX))
        fail_invalid(where + ": attribute " + a.name() + " = " + std::to_string(a.i()) + " must be in [1, 2^31)");
      // GatherND's batch_dims counts axes: the onnx library's inference
      // indexes dimensions with it unchecked (batch_dims -33 read far
      // outside a shape, found by fuzz_import).
      if (a.type() == onnx::AttributeProto::INT && a.name() == "batch_dims" && a.i() < 0)
        fail_invalid(where + ": attribute batch_dims = " + std::to_string(a.i()) + " must not be negative");
      // Axes index dimensions: ONNX's inference truncates them to int.
      static const std::set<std::string> axis_like = {"axis", "axes", "batch_axis", "time_axis", "batch_dims", "perm"};
      if (axis_like.count(a.name())) {
        auto bad = [](int64_t v) { return v < -4096 || v > 4096; };
        if ((a.type() == onnx::AttributeProto::INT && bad(a.i())))
          fail_invalid(where + ": attribute " + a.name() + " = " + std::to_string(a.i()) + " is not an axis");
        if (a.type() == onnx::AttributeProto::INTS)
          for (int64_t v : a.ints())
            if (bad(v)) fail_invalid(where + ": attribute " + a.name() + " holds " + std::to_string(v) + ", not an axis");
      }
      if (a.type() == onnx::AttributeProto::INTS && a.name() == "pads")
        for (int64_t v : a.ints())
          if (v < -INT32_MAX || v > INT32_MAX)
            fail_invalid(where + ": attribute pads holds " + std::to_string(v));
      if (a.has_g()) prevalidate_attributes(a.g(), depth + 1);
      for (const auto &sub : a.graphs()) prevalidate_attributes(sub, depth + 1);
    }
  }
}

static void prevalidate_attributes(const onnx::GraphProto &gp, int depth) {
  if (depth > 64) fail_unsupported("subgraphs nested more than 64 deep");
  prevalidate_nodes(gp.node(), depth);
}

// Every tensor of the model (initializers, tensor attributes, in every
// subgraph) holds the data its type and shape say (check_tensor_proto),
// before anything parses one.
static void validate_tensors(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes);
static void validate_tensors(const onnx::GraphProto &gp) {
  for (const auto &t : gp.initializer()) check_tensor_proto(t);
  if (gp.sparse_initializer_size() > 0) fail_unsupported("sparse initializers");
  validate_tensors(gp.node());
}
static void validate_tensors(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes) {
  for (const auto &np : nodes)
    for (const auto &a : np.attribute()) {
      if (a.has_t()) check_tensor_proto(a.t());
      for (const auto &t : a.tensors()) check_tensor_proto(t);
      if (a.has_sparse_tensor() || a.sparse_tensors_size() > 0)
        fail_unsupported("node '" + np.name() + "' (" + np.op_type() + "): attribute " + a.name() +
                         " holds a sparse tensor");
      if (a.has_g()) validate_tensors(a.g());  // depth: prevalidate_attributes bounded it
      for (const auto &sub : a.graphs()) validate_tensors(sub);
    }
}

static void set_input_shape(onnx::ValueInfoProto *vi, const Shape &s) {
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  auto *sh = tt->mutable_shape();
  sh->clear_dim();
  for (int64_t d : s) sh->add_dim()->set_dim_value(d);
}

static ImportResult import_model(onnx::ModelProto &model, int64_t file_bytes,
                                 const ImportOptions &opt);

ImportResult import_onnx_bytes(const std::string &bytes, const ImportOptions &opt) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) fail_invalid("not an ONNX model: the protobuf does not parse");
  return import_model(model, (int64_t)bytes.size(), opt);
}

// The weights cap by default: 256 MiB, or 4 times the file's size for a
// file that brings large weights of its own (packing and Winograd enlarge
// weights up to 4 times), so that a small file cannot make the compiler
// hold more (folding creates at most --max-folded-bytes).
static Limits resolve_limits(Limits lim, int64_t file_bytes) {
  if (lim.max_weights_bytes <= 0)
    lim.max_weights_bytes = std::max<int64_t>(Limits::kMinWeightsCap, file_bytes > INT64_MAX / 4 ? INT64_MAX : 4 * file_bytes);
  return lim;
}

static ImportResult import_model(onnx::ModelProto &model, int64_t file_bytes,
                                 const ImportOptions &opt_in) {
  ImportResult res;
  ImportOptions opt = opt_in;
  opt.limits = resolve_limits(opt_in.limits, file_bytes);
  onnx::GraphProto *gp = model.mutable_graph();

  // Apply --input-shape and --bind before ONNX's own checks and inference.
  std::set<std::string> bound;
  std::set<std::string> init_names;
  for (auto &t : gp->initializer()) init_names.insert(t.name());
  for (auto &kv : opt.input_shapes) {
    bool found = false;
    for (auto &vi : *gp->mutable_input())
      if (vi.name() == kv.first) {
        set_input_shape(&vi, kv.second);
        found = true;
      }
    if (!found) fail_usage("--input-shape names '" + kv.first + "', which is not a graph input");
  }
  for (auto &kv : opt.bindings) {
    bool found = false;
    for (int i = 0; i < gp->input_size(); ++i)
      if (gp->input(i).name() == kv.first) found = true;
    if (!found) fail_usage("--bind names '" + kv.first + "', which is not a graph input");
    bound.insert(kv.first);
  }

  // Model-local functions become their bodies first (with their opset
  // imports), checked for recursion, depth and size before anything else
  // reads them; the onnx library never sees a function.
  inline_local_functions(model, opt.limits);

  // Opsets: a version newer than the onnx library's table would be compiled
  // with older semantics, so it is refused; so is a version below 1.
  const auto &known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  std::set<std::string> imported;
  for (auto &op : model.opset_import()) {
    std::string dom = op.domain() == "ai.onnx" ? "" : op.domain();
    if (!imported.insert(dom).second)
      fail_invalid("the model imports domain " + (dom.empty() ? std::string("ai.onnx") : dom) +
                   " twice (which opset its nodes follow is ambiguous)");
    auto it = known.find(dom);
    std::string dname = dom.empty() ? "ai.onnx" : dom;
    if (it != known.end() && (op.version() > it->second.second || op.version() < it->second.first))
      fail_unsupported("the model imports opset " + std::to_string(op.version()) + " of domain " + dname +
                       "; tinyrt knows opsets " + std::to_string(it->second.first) + " to " +
                       std::to_string(it->second.second));
    if (op.version() < 1 || op.version() > 100000)
      fail_invalid("the model imports opset " + std::to_string(op.version()) + " of domain " + dname);
  }
  prevalidate_attributes(*gp, 0);
  // Sizes before ONNX's inference, which loops over dimensions: graph
  // inputs and initializers within the element cap, each dimension too.
  {
    Limits lim = opt.limits;
    auto check_dims = [&](const std::string &what, const Shape &s) {
      for (int64_t d : s)
        if (d > lim.max_tensor_elements)
          fail_unsupported(what + " has dimension " + std::to_string(d) + ", more than the " +
                           std::to_string(lim.max_tensor_elements) + " elements tinyrt allows per tensor");
      check_tensor_size(s, lim, what);
    };
    for (auto &vi : gp->input()) {
      if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
      Shape s;
      for (auto &d : vi.type().tensor_type().shape().dim())
        if (d.has_dim_value()) s.push_back(d.dim_value());
      check_dims("graph input '" + vi.name() + "'", s);
    }
    for (auto &t : gp->initializer()) check_dims("initializer '" + t.name() + "'", Shape(t.dims().begin(), t.dims().end()));
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    fail_invalid(std::string("the ONNX checker rejects the model: ") + e.what());
  }
  validate_tensors(*gp);

  Graph &g = res.graph;
  g.name = gp->name();
  g.limits = opt.limits;
  for (auto &op : model.opset_import()) {
    std::string dom = op.domain() == "ai.onnx" ? "" : op.domain();
    if (dom.empty()) g.opset = (int)op.version();
    g.domain_opsets[dom] = (int)op.version();
  }
  // A model without an ai.onnx opset uses only other domains; its nodes
  // are rejected one by one with their domain named.

  std::map<std::string, int> ids;
  for (auto &t : *gp->mutable_initializer()) {
    ids[t.name()] = g.add_const(t.name(), const_from_tensor_proto(t));
    std::string().swap(*t.mutable_raw_data());  // the graph holds the bytes now: one copy, not two
  }
  if (gp->sparse_initializer_size() > 0) fail_unsupported("sparse initializers");

  for (auto &vi : gp->input()) {
    const std::string &name = vi.name();
    if (bound.count(name)) {
      ids[name] = g.add_const(name, resolve_binding(vi, opt.bindings.at(name)));
      continue;
    }
    if (init_names.count(name)) continue;  // IR < 4 lists initializers as inputs
    if (!vi.type().has_tensor_type())
      fail_unsupported("graph input '" + name + "' is not a tensor: out of scope (sequences, maps, optionals)");
    const auto &tt = vi.type().tensor_type();
    DType dt = (DType)tt.elem_type();
    if (dt == DType::String) fail_unsupported("graph input '" + name + "' holds strings: out of scope (strings)");
    if (!dtype_supported(dt)) fail_unsupported("graph input '" + name + "' has unsupported type " + dtype_name(dt));
    Shape s;
    if (!tt.has_shape()) fail_usage("graph input '" + name + "' has no shape; pass --input-shape " + name + "=D0,D1,...");
    for (auto &d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() < 0)
        fail_invalid("graph input '" + name + "' has a negative dimension " + std::to_string(d.dim_value()));
      if (!d.has_dim_value())
        fail_usage("graph input '" + name + "' has a dynamic dimension '" + d.dim_param() +
                   "'; pass --input-shape " + name + "=D0,D1,...");
      s.push_back(d.dim_value());
    }
    g.check_size(s, "graph input '" + name + "'");
    int id = g.add_value(name, dt, s);
    ids[name] = id;
    g.inputs.push_back(id);
  }

  // Types and shapes the model declares (value_info, graph outputs). tinyrt
  // infers every node itself (ops/*.cpp) and does not run ONNX's shape
  // inference: it recursed without limit through model-local functions and
  // read dimensions unchecked (docs/SECURITY.md).
  std::map<std::string, const onnx::ValueInfoProto *> infos;
  for (auto &vi : gp->value_info()) infos[vi.name()] = &vi;
  for (auto &vi : gp->output()) infos[vi.name()] = &vi;

  int unnamed = 0;
  for (auto &np : gp->node()) {
    Node n = convert_node(np, g, ids, "", unnamed);
    for (int o : n.out) {  // the declared type, for messages before our inference
      auto it = o >= 0 ? infos.find(g.v(o).name) : infos.end();
      if (it != infos.end() && it->second->type().has_tensor_type()) {
        const auto &tt = it->second->type().tensor_type();
        g.v(o).dtype = (DType)tt.elem_type();
        Graph::Declaration &d = g.model_declared[o];
        d.dtype = (DType)tt.elem_type();
        // Shapes declared for the model's own input shapes: --input-shape
        // and --bind may change them.
        d.has_shape = tt.has_shape() && opt.input_shapes.empty() && opt.bindings.empty();
        for (auto &dim : tt.shape().dim()) d.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      }
      // Declared static shapes of other domains' outputs (custom ops).
      if (it != infos.end() && !n.domain.empty() && n.domain != "ai.onnx" && it->second->type().has_tensor_type() &&
          it->second->type().tensor_type().has_shape()) {
        const auto &tt = it->second->type().tensor_type();
        Shape s;
        bool known = dtype_supported((DType)tt.elem_type());
        for (auto &d : tt.shape().dim()) {
          known = known && d.has_dim_value() && d.dim_value() >= 0;
          s.push_back(d.dim_value());
        }
        if (known) g.declared[o] = {(DType)tt.elem_type(), s};
      }
    }
    g.nodes.push_back(std::move(n));
  }
  for (auto &vi : gp->output()) {
    auto it = ids.find(vi.name());
    if (it == ids.end()) fail_invalid("graph output '" + vi.name() + "' is never produced");
    g.outputs.push_back(it->second);
  }
  if (g.outputs.empty()) fail_invalid("the graph has no outputs");
  for (const std::string &name : opt.extra_outputs) {
    auto it = ids.find(name);
    if (it != ids.end() && std::find(g.outputs.begin(), g.outputs.end(), it->second) == g.outputs.end() &&
        std::find(g.inputs.begin(), g.inputs.end(), it->second) == g.inputs.end())
      g.outputs.push_back(it->second);
  }
  return res;
}

// The bytes of a model file; a directory (a test case's, say) or an
// unreadable file is named as such, not parsed as an empty model.
static std::string read_model_file(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    fail_usage("'" + path + "' is a directory, not an ONNX model file (a test case's model is DIR/model.onnx)");
  std::ifstream f(path, std::ios::binary);
  if (!f) fail_usage("cannot open model file '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) fail_usage("cannot read model file '" + path + "'");
  return ss.str();
}

ImportResult import_onnx_file(const std::string &path, const ImportOptions &opt) {
  onnx::ModelProto model;
  int64_t size;
  {
    // The file's bytes go as soon as they are parsed.
    std::string bytes = read_model_file(path);
    if (!model.ParseFromString(bytes)) fail_invalid("not an ONNX model: the protobuf does not parse");
    size = (int64_t)bytes.size();
  }
  return import_model(model, size, opt);
}

}  // namespace tinyrt

namespace tinyrt {

static onnx::ModelProto parse_model_file(const std::string &path) {
  onnx::ModelProto m;
  if (!m.ParseFromString(read_model_file(path))) fail_invalid("not an ONNX model: the protobuf does not parse");
  return m;
}

std::vector<std::string> onnx_graph_inputs(const std::string &path) {
  onnx::ModelProto m = parse_model_file(path);
  std::set<std::string> init;
  for (auto &t : m.graph().initializer()) init.insert(t.name());
  std::vector<std::string> r;
  for (auto &vi : m.graph().input())
    if (!init.count(vi.name())) r.push_back(vi.name());
  return r;
}

std::vector<std::string> onnx_graph_outputs(const std::string &path) {
  onnx::ModelProto m = parse_model_file(path);
  std::vector<std::string> r;
  for (auto &vi : m.graph().output()) r.push_back(vi.name());
  return r;
}

}  // namespace tinyrt

#include "ir/graph.h"

#include <cstring>

namespace tinyrt {

double ConstData::get_f(int64_t i) const {
  switch (dtype) {
    case DType::F32: return as<float>()[i];
    case DType::F64: return as<double>()[i];
    case DType::F16: return half_to_float(as<uint16_t>()[i]);
    case DType::BF16: return bf16_to_float(as<uint16_t>()[i]);
    default: return (double)get_i(i);
  }
}

int64_t ConstData::get_i(int64_t i) const {
  switch (dtype) {
    case DType::F32: return (int64_t)as<float>()[i];
    case DType::F64: return (int64_t)as<double>()[i];
    case DType::F16:
    case DType::BF16: return (int64_t)get_f(i);
    case DType::U8:
    case DType::Bool: return as<uint8_t>()[i];
    case DType::I8: return as<int8_t>()[i];
    case DType::U16: return as<uint16_t>()[i];
    case DType::I16: return as<int16_t>()[i];
    case DType::I32: return as<int32_t>()[i];
    case DType::U32: return as<uint32_t>()[i];
    case DType::I64: return as<int64_t>()[i];
    case DType::U64: return (int64_t)as<uint64_t>()[i];
    default: fail_internal(std::string("get_i on ") + dtype_name(dtype));
  }
}

ConstP make_const(DType t, Shape shape, Bytes bytes) {
  auto c = std::make_shared<ConstData>();
  c->dtype = t;
  c->shape = std::move(shape);
  c->bytes = std::move(bytes);
  TINYRT_CHECK((int64_t)c->bytes.size() == shape_numel(c->shape) * dtype_bytes(t), "constant byte size");
  return c;
}

template <class T>
static ConstP make_typed(DType t, Shape shape, const std::vector<T> &v) {
  Bytes b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return make_const(t, std::move(shape), std::move(b));
}

ConstP values_as_tensor(const std::vector<double> &v, DType dt, const Shape &shape, const std::string &what) {
  Bytes bytes((size_t)((int64_t)v.size() * dtype_bytes(dt)));
  for (size_t i = 0; i < v.size(); ++i) {
    uint8_t *p = bytes.data() + i * dtype_bytes(dt);
    switch (dt) {
      case DType::F32: {
        float x = (float)v[i];
        std::memcpy(p, &x, 4);
        break;
      }
      case DType::F64: {
        double x = v[i];
        std::memcpy(p, &x, 8);
        break;
      }
      case DType::I64: {
        int64_t x = (int64_t)v[i];
        std::memcpy(p, &x, 8);
        break;
      }
      case DType::I32: {
        int32_t x = (int32_t)v[i];
        std::memcpy(p, &x, 4);
        break;
      }
      case DType::U8:
      case DType::Bool: *p = (uint8_t)v[i]; break;
      case DType::I8: *p = (uint8_t)(int8_t)v[i]; break;
      default: fail_usage(what + ": type " + dtype_name(dt) + " needs a tensor file (@file.pb)");
    }
  }
  return make_const(dt, shape, std::move(bytes));
}

ConstP make_const_f32(Shape shape, const std::vector<float> &v) { return make_typed(DType::F32, std::move(shape), v); }
ConstP make_const_i64(Shape shape, const std::vector<int64_t> &v) {
  return make_typed(DType::I64, std::move(shape), v);
}

int64_t Node::geti(const std::string &a, int64_t def) const {
  auto it = attrs.find(a);
  return it == attrs.end() ? def : it->second.i;
}
float Node::getf(const std::string &a, float def) const {
  auto it = attrs.find(a);
  return it == attrs.end() ? def : it->second.f;
}
std::string Node::gets(const std::string &a, const std::string &def) const {
  auto it = attrs.find(a);
  return it == attrs.end() ? def : it->second.s;
}
std::vector<int64_t> Node::getints(const std::string &a, const std::vector<int64_t> &def) const {
  auto it = attrs.find(a);
  return it == attrs.end() ? def : it->second.ints;
}
std::vector<float> Node::getfloats(const std::string &a, const std::vector<float> &def) const {
  auto it = attrs.find(a);
  return it == attrs.end() ? def : it->second.floats;
}
std::string Node::where() const { return "node '" + name + "' (" + op + ")"; }

int Graph::base_sym(const std::string &name, int64_t lo, int64_t hi) {
  if (lo < 0 || lo > hi)
    fail_usage("dimension " + name + ": the range " + std::to_string(lo) + ":" + std::to_string(hi) + " is empty");
  for (size_t i = 0; i < syms.size(); ++i)
    if (syms[i].name == name && !syms[i].def && !syms[i].produced) {
      if (syms[i].lo != lo || syms[i].hi != hi)
        fail_usage("dimension " + name + " is given two ranges, " + std::to_string(syms[i].lo) + ":" +
                   std::to_string(syms[i].hi) + " and " + std::to_string(lo) + ":" + std::to_string(hi));
      return (int)i;
    }
  syms.push_back({name, lo, hi, nullptr});
  return (int)syms.size() - 1;
}

int Graph::derived_sym(const ExprP &def, const std::string &name) {
  if (def->is_const()) return -1;
  if (def->op == EOp::Dim) return def->id;
  std::string key = to_string(def);
  for (size_t i = 0; i < syms.size(); ++i)
    if (syms[i].def && to_string(syms[i].def) == key) return (int)i;
  Interval r = index_range(def, {});
  if (!r.known || r.lo < 0 || r.hi > limits.max_tensor_elements)
    fail_unsupported("the dimension " + name + " = " + key + " has no bounds within [0, " +
                     std::to_string(limits.max_tensor_elements) + "] for the inputs' ranges");
  syms.push_back({name, r.lo, r.hi, def});
  return (int)syms.size() - 1;
}

int Graph::produced_sym(const std::string &name, int64_t hi) {
  for (size_t i = 0; i < syms.size(); ++i)
    if (syms[i].name == name && syms[i].produced) {
      syms[i].hi = hi;
      return (int)i;
    }
  DimSym d{name, 0, hi, nullptr};
  d.produced = true;
  syms.push_back(d);
  return (int)syms.size() - 1;
}

ExprP Graph::sym_expr(int sym) const {
  const DimSym &d = syms.at((size_t)sym);
  return d.def ? d.def : dim_leaf(sym, d.lo, d.hi);
}

ExprP Graph::extent(int v, int axis) const {
  const Value &x = this->v(v);
  int d = x.dim(axis);
  return d >= 0 ? sym_expr(d) : cidx(x.shape.at((size_t)axis));
}

int Graph::add_value(const std::string &n, DType t, Shape shape) {
  Value v;
  v.name = n;
  v.dtype = t;
  v.shape = std::move(shape);
  v.shape_known = true;
  values.push_back(std::move(v));
  latest_[n] = (int)values.size() - 1;
  return (int)values.size() - 1;
}

int Graph::latest_value(const std::string &name) const {
  auto it = latest_.find(name);
  return it == latest_.end() ? -1 : it->second;
}

void Graph::rename_value(int id, const std::string &name) {
  // The old name may now denote an earlier value: find it (rare: graph
  // outputs given a row-major copy).
  std::string old = v(id).name;
  v(id).name = name;
  if (latest_value(name) < id) latest_[name] = id;
  if (latest_value(old) == id) {
    latest_.erase(old);
    for (int i = id; i-- > 0;)
      if (values[(size_t)i].name == old) {
        latest_[old] = i;
        break;
      }
  }
}

int Graph::add_const(const std::string &n, ConstP data) {
  int id = add_value(n, data->dtype, data->shape);
  values[id].data = std::move(data);
  return id;
}

std::string Graph::fresh_name(const std::string &base) {
  int &k = name_counter_[base];
  return base + "__" + std::to_string(k++);
}

std::vector<int> Graph::use_counts() const {
  std::vector<int> uses(values.size(), 0);
  for (const Node &n : nodes) {
    for (int i : n.in)
      if (i >= 0) uses[i]++;
    if (n.guard >= 0) uses[guards.at(n.guard).eff]++;
  }
  for (int o : outputs) uses[o]++;
  for (int e : effects) uses[e]++;
  return uses;
}

bool Graph::guard_implies(int inner, int outer) const {
  if (outer < 0) return true;
  for (int g = inner; g >= 0; g = guards.at(g).parent)
    if (g == outer) return true;
  return false;
}

bool Graph::is_graph_output(int v) const {
  for (int o : outputs)
    if (o == v) return true;
  return false;
}

std::vector<std::string> Graph::upstream_inputs(int v) const {
  std::vector<int> producer(values.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int o : nodes[i].out)
      if (o >= 0) producer[o] = (int)i;
  std::vector<bool> seen(values.size(), false);
  std::vector<int> stack = {v};
  std::vector<std::string> found;
  while (!stack.empty()) {
    int x = stack.back();
    stack.pop_back();
    if (x < 0 || seen[x]) continue;
    seen[x] = true;
    for (int in : inputs)
      if (in == x) found.push_back(values[x].name);
    if (producer[x] >= 0)
      for (int i : nodes[producer[x]].in) stack.push_back(i);
  }
  return found;
}

void check_tensor_size(const Shape &s, const Limits &limits, const std::string &what) {
  int64_t n = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n))
      fail_unsupported(what + " has shape " + shape_str(s) + ": its element count overflows 64 bits");
  const std::string cap = std::to_string(limits.max_tensor_elements) + " tinyrt allows per tensor" +
                          (limits.max_tensor_elements < kMaxTensorElementsHard ? " (--max-tensor-elements)" : "");
  if (n > limits.max_tensor_elements)
    fail_unsupported(what + " has shape " + shape_str(s) + ": " + std::to_string(n) + " elements, more than the " +
                     cap);
  // An empty tensor has no elements, but its strides are products of its
  // other dimensions: those must stay within the cap too (and so within 64
  // and 32 bits), counting zero-length axes as 1.
  int64_t span = 1;
  for (int64_t d : s)
    if (d > 1 && (__builtin_mul_overflow(span, d, &span) || span > limits.max_tensor_elements))
      fail_unsupported(what + " has shape " + shape_str(s) + ": empty, but its other dimensions span more than the " +
                       cap);
}

void Graph::remove_dead_nodes() {
  // Walk backwards so that a chain of dead nodes disappears in one sweep.
  std::vector<int> uses = use_counts();
  std::vector<bool> dead(nodes.size(), false);
  for (size_t k = nodes.size(); k-- > 0;) {
    bool used = false;
    for (int o : nodes[k].out) used = used || (o >= 0 && uses[o] > 0);  // -1: omitted output
    if (!used) {
      dead[k] = true;
      for (int i : nodes[k].in)
        if (i >= 0) uses[i]--;
      if (nodes[k].guard >= 0) uses[guards.at(nodes[k].guard).eff]--;
    }
  }
  remove_nodes(dead);
}

void Graph::remove_nodes(const std::vector<bool> &drop) {
  std::vector<Node> kept;
  for (size_t k = 0; k < nodes.size(); ++k)
    if (k >= drop.size() || !drop[k]) kept.push_back(std::move(nodes[k]));
  nodes = std::move(kept);
}

Node make_node(Graph &g, const std::string &op, const std::string &base, std::vector<int> in, std::vector<int> out) {
  Node n;
  n.op = op;
  n.name = g.fresh_name(base);
  n.in = std::move(in);
  n.out = std::move(out);
  n.opset = g.opset;
  return n;
}

int new_value(Graph &g, const std::string &base) {
  int v = g.add_value(g.fresh_name(base), DType::Undefined, {});
  g.v(v).shape_known = false;
  return v;
}

Attr int_attr(int64_t v) {
  Attr a;
  a.kind = Attr::Kind::Int;
  a.i = v;
  return a;
}

Attr ints_attr(std::vector<int64_t> v) {
  Attr a;
  a.kind = Attr::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

}  // namespace tinyrt

#include "frontend/onnx_import.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "frontend/onnx_dialect.h"
#include "frontend/onnx_functions.h"
#include "frontend/onnx_nodes.h"
#include "frontend/onnx_tensors.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace tinyrt {

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
            if (bad(v))
              fail_invalid(where + ": attribute " + a.name() + " holds " + std::to_string(v) + ", not an axis");
      }
      if (a.type() == onnx::AttributeProto::INTS && a.name() == "pads")
        for (int64_t v : a.ints())
          if (v < -INT32_MAX || v > INT32_MAX) fail_invalid(where + ": attribute pads holds " + std::to_string(v));
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

// Sets an input's shape; a dimension whose lower bound (mins, when given)
// is below its upper one becomes the symbolic dimension "NAME[axis]" with
// that range in `ranges`.
static void set_input_shape(onnx::ValueInfoProto *vi, const Shape &s, const Shape *mins,
                            std::map<std::string, std::pair<int64_t, int64_t>> *ranges) {
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  auto *sh = tt->mutable_shape();
  sh->clear_dim();
  for (size_t k = 0; k < s.size(); ++k) {
    if (mins && k < mins->size() && (*mins)[k] < s[k]) {
      std::string name = vi->name() + "[" + std::to_string(k) + "]";
      sh->add_dim()->set_dim_param(name);
      (*ranges)[name] = {(*mins)[k], s[k]};
    } else {
      sh->add_dim()->set_dim_value(s[k]);
    }
  }
}

static ImportResult import_model(onnx::ModelProto &model, int64_t file_bytes, const ImportOptions &opt);

ImportResult import_onnx_bytes(const std::string &bytes, const ImportOptions &opt) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) fail_invalid("not an ONNX model: the protobuf does not parse");
  return import_model(model, (int64_t)bytes.size(), opt);
}

// The weights' safety cap (without a budget given): 256 MiB, or 4 times
// the file's size for a file that brings large weights of its own
// (packing and Winograd enlarge weights up to 4 times), so that a small
// file cannot make the compiler hold more (folding creates at most
// --max-folded-bytes).
static Limits resolve_limits(Limits lim, int64_t file_bytes) {
  lim.weights_safety_cap =
      std::max<int64_t>(Limits::kMinWeightsCap, file_bytes > INT64_MAX / 4 ? INT64_MAX : 4 * file_bytes);
  return lim;
}

// --input-shape and --bind, applied to the graph's declared inputs before
// anything reads them; returns the names of the bound inputs.
static std::set<std::string> apply_input_options(onnx::GraphProto *gp, const ImportOptions &opt,
                                                 std::map<std::string, std::pair<int64_t, int64_t>> *ranges) {
  std::set<std::string> bound;
  for (auto &kv : opt.input_shapes) {
    bool found = false;
    auto mins = opt.input_shape_mins.find(kv.first);
    for (auto &vi : *gp->mutable_input())
      if (vi.name() == kv.first) {
        set_input_shape(&vi, kv.second, mins == opt.input_shape_mins.end() ? nullptr : &mins->second, ranges);
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
  return bound;
}

// Opsets: a version newer than the onnx library's table would be compiled
// with older semantics, so it is refused; so is a version below 1, and a
// domain imported twice.
static void check_opsets(const onnx::ModelProto &model) {
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
}

// Graph inputs and initializers within the element cap, each dimension too,
// before anything loops over their dimensions.
static void check_declared_sizes(const onnx::GraphProto &gp, const Limits &lim) {
  auto check_dims = [&](const std::string &what, const Shape &s) {
    for (int64_t d : s)
      if (d > lim.max_tensor_elements)
        fail_unsupported(what + " has dimension " + std::to_string(d) + ", more than the " +
                         std::to_string(lim.max_tensor_elements) + " elements tinyrt allows per tensor");
    check_tensor_size(s, lim, what);
  };
  for (auto &vi : gp.input()) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
    Shape s;
    for (auto &d : vi.type().tensor_type().shape().dim())
      if (d.has_dim_value()) s.push_back(d.dim_value());
    check_dims("graph input '" + vi.name() + "'", s);
  }
  for (auto &t : gp.initializer())
    check_dims("initializer '" + t.name() + "'", Shape(t.dims().begin(), t.dims().end()));
}

// The graph's inputs as values (bound ones as constants), in `ids`.
static void convert_inputs(const onnx::GraphProto &gp, const ImportOptions &opt, const std::set<std::string> &bound,
                           const std::map<std::string, std::pair<int64_t, int64_t>> &ranges, Graph &g,
                           std::map<std::string, int> &ids) {
  std::set<std::string> used_ranges;
  std::set<std::string> init_names;
  for (auto &t : gp.initializer()) init_names.insert(t.name());
  for (auto &vi : gp.input()) {
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
    std::vector<int> dims;
    if (!tt.has_shape())
      fail_usage("graph input '" + name + "' has no shape; pass --input-shape " + name + "=D0,D1,...");
    for (auto &d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() < 0)
        fail_invalid("graph input '" + name + "' has a negative dimension " + std::to_string(d.dim_value()));
      auto range = d.has_dim_value() ? ranges.end() : ranges.find(d.dim_param());
      if (range != ranges.end()) {  // a run-time extent
        used_ranges.insert(range->first);
        if (range->second.second > g.limits.max_tensor_elements)
          fail_unsupported("dimension " + range->first + " may be " + std::to_string(range->second.second) +
                           ", more than the " + std::to_string(g.limits.max_tensor_elements) +
                           " elements tinyrt allows per tensor");
        int sym = range->second.first == range->second.second
                      ? -1
                      : g.base_sym(range->first, range->second.first, range->second.second);
        s.push_back(range->second.second);
        dims.push_back(sym);
        continue;
      }
      if (!d.has_dim_value())
        fail_usage("graph input '" + name + "' has a dynamic dimension '" + d.dim_param() + "'; pass --input-shape " +
                   name + "=D0,D1,... (a dimension may be a range MIN:MAX)" +
                   (d.dim_param().empty() ? std::string() : " or --dim " + d.dim_param() + "=MIN:MAX"));
      s.push_back(d.dim_value());
      dims.push_back(-1);
    }
    g.check_size(s, "graph input '" + name + "'");
    int id = g.add_value(name, dt, s);
    g.v(id).dims = dims;
    if (!g.v(id).is_dynamic()) g.v(id).dims.clear();
    ids[name] = id;
    g.inputs.push_back(id);
  }
  for (auto &kv : opt.dim_ranges)
    if (!used_ranges.count(kv.first)) fail_usage("--dim names '" + kv.first + "', which no graph input has");
}

// The main graph's nodes, with what the model declares for their outputs.
static void convert_nodes(const onnx::GraphProto &gp, const ImportOptions &opt, Graph &g,
                          std::map<std::string, int> &ids) {
  // Types and shapes the model declares (value_info, graph outputs). tinyrt
  // infers every node itself (ops/*.cpp) and does not run ONNX's shape
  // inference: it recursed without limit through model-local functions and
  // read dimensions unchecked (docs/SECURITY.md).
  std::map<std::string, const onnx::ValueInfoProto *> infos;
  for (auto &vi : gp.value_info()) infos[vi.name()] = &vi;
  for (auto &vi : gp.output()) infos[vi.name()] = &vi;

  int unnamed = 0;
  for (auto &np : gp.node()) {
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
}

// The graph's outputs, then the tensors the tools asked to see too.
static void convert_outputs(const onnx::GraphProto &gp, const ImportOptions &opt, Graph &g,
                            const std::map<std::string, int> &ids) {
  for (auto &vi : gp.output()) {
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
}

static ImportResult import_model(onnx::ModelProto &model, int64_t file_bytes, const ImportOptions &opt_in) {
  ImportResult res;
  ImportOptions opt = opt_in;
  opt.limits = resolve_limits(opt_in.limits, file_bytes);
  onnx::GraphProto *gp = model.mutable_graph();

  std::map<std::string, std::pair<int64_t, int64_t>> ranges = opt.dim_ranges;
  std::set<std::string> bound = apply_input_options(gp, opt, &ranges);

  // Model-local functions become their bodies first (with their opset
  // imports), checked for recursion, depth and size before anything else
  // reads them; the onnx library never sees a function.
  inline_local_functions(model, opt.limits);

  check_opsets(model);
  prevalidate_attributes(*gp, 0);
  check_declared_sizes(*gp, opt.limits);
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    fail_invalid(std::string("the ONNX checker rejects the model: ") + e.what());
  }
  validate_tensors(*gp);

  Graph &g = res.graph;
  g.dialect = onnx_dialect();
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

  convert_inputs(*gp, opt, bound, ranges, g, ids);
  convert_nodes(*gp, opt, g, ids);
  convert_outputs(*gp, opt, g, ids);
  // The model's own weights (initializers and Constant nodes): the base
  // of a weights budget given as a ratio, and of the default one.
  int64_t own = 0;
  for (const Value &v : g.values)
    if (v.is_const()) own = sat_add(own, (int64_t)v.data->bytes.size());
  for (const Node &n : g.nodes)
    if (n.op == "Constant")
      for (const auto &kv : n.attrs)
        if (kv.second.t) own = sat_add(own, (int64_t)kv.second.t->bytes.size());
  g.limits.model_weights_bytes = own;
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

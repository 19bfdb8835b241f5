// tinyrt-onnx-test — runs ONNX backend-test-layout cases (model.onnx plus
// test_data_set_*/input_*.pb, output_*.pb) through tinyrt on a target and
// compares the outputs: |y - ref| <= atol + rtol * |ref|. A data set with
// expected_error.txt instead expects the run to fail with that text.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "tool_common.h"
#include "custom_op_options.h"
#include "quantize_option.h"
#include "codegen_options.h"
#include "limit_options.h"
#include "shape_options.h"

namespace fs = std::filesystem;
using namespace tinyrt;

namespace {

struct Options {
  std::string target = "host";
  int threads = 1;
  double rtol = 1e-3, atol_scale = 1e-5;
  bool compare_threads = false;
  double max_arena_ratio = 0;  // > 0: fail cases whose arena exceeds ratio * lower bound
  bool keep = false;
  bool function_bodies = false;
  QuantizeArgs quantize;
  WinogradMode winograd = WinogradMode::Auto;
  int64_t winograd_bands = 0;
  WeightStorage weights = WeightStorage::F32;
  Precision precision = Precision::F32;
  std::string tuning;
  Limits budgets;          // --max-weights-bytes
  std::string gemm_tile;   // --gemm-tile
  std::string task_split;  // --task-split
  bool check_addresses = false;
  int64_t serial_step_ops = -1;
  std::vector<std::string> filter;
  std::vector<std::string> shapes, dims;  // --input-shape (ranges allowed), --dim
  CompileOptions custom;                  // custom_ops and link_sources (--custom-op, --custom-op-source)
};

struct DataSet {
  std::vector<std::pair<std::string, ConstP>> inputs;  // by graph input name
  std::vector<ConstP> outputs;                         // in graph output order
  // tinyrt's own cases: the run must fail with a message containing this
  // (expected_error.txt; a branch the model was not compiled for).
  std::string expected_error;
};

struct Outcome {
  enum Kind { Pass, Fail, Unsupported } kind = Pass;
  std::string detail;
};

std::string one_line(std::string s) {
  for (auto &ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  if (s.size() > 400) s = s.substr(0, 400) + "...";
  return s;
}

std::vector<fs::path> sorted_entries(const fs::path &dir, const std::string &prefix) {
  std::vector<fs::path> r;
  for (auto &e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) r.push_back(e.path());
  // input_10 after input_9: order by the number after the prefix.
  std::sort(r.begin(), r.end(), [&](const fs::path &a, const fs::path &b) {
    auto num = [&](const fs::path &p) {
      std::string s = p.stem().string().substr(prefix.size());
      return s.empty() ? -1L : strtol(s.c_str(), nullptr, 10);
    };
    return num(a) != num(b) ? num(a) < num(b) : a < b;
  });
  return r;
}

std::vector<DataSet> load_data_sets(const fs::path &dir, const std::vector<std::string> &input_names) {
  std::vector<DataSet> sets;
  for (auto &ds : sorted_entries(dir, "test_data_set_")) {
    DataSet d;
    auto ins = sorted_entries(ds, "input_");
    for (size_t k = 0; k < ins.size(); ++k) {
      std::string name;
      ConstP t = read_tensor_file(ins[k].string(), &name);
      if (std::find(input_names.begin(), input_names.end(), name) == input_names.end())
        name = k < input_names.size() ? input_names[k] : name;
      d.inputs.push_back({name, t});
    }
    for (auto &o : sorted_entries(ds, "output_")) d.outputs.push_back(read_tensor_file(o.string()));
    if (std::ifstream f(ds / "expected_error.txt"); f) std::getline(f, d.expected_error);
    sets.push_back(std::move(d));
  }
  return sets;
}

// Compares one output; on mismatch describes the worst element.
bool compare(const ConstData &ref, const uint8_t *got, const Options &o, std::string *why) {
  int64_t n = shape_numel(ref.shape);
  if (!dtype_is_float(ref.dtype)) {
    int eb = dtype_bytes(ref.dtype);
    for (int64_t i = 0; i < n; ++i)
      if (std::memcmp(ref.bytes.data() + i * eb, got + i * eb, eb) != 0) {
        ConstData g;
        g.dtype = ref.dtype;
        g.bytes.assign(got + i * eb, got + (i + 1) * eb);
        *why = "element " + std::to_string(i) + ": expected " + std::to_string(ref.get_i(i)) + ", got " +
               std::to_string(g.get_i(0));
        return false;
      }
    return true;
  }
  auto at = [&](const uint8_t *p, int64_t i) {
    if (dtype_is_half(ref.dtype)) {
      uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      return (double)(ref.dtype == DType::F16 ? half_to_float(h) : bf16_to_float(h));
    }
    if (ref.dtype == DType::F64) {
      double v;
      std::memcpy(&v, p + i * 8, 8);
      return v;
    }
    float v;
    std::memcpy(&v, p + i * 4, 4);
    return (double)v;
  };
  double maxabs = 0;
  for (int64_t i = 0; i < n; ++i) {
    double r = at(ref.bytes.data(), i);
    if (std::isfinite(r)) maxabs = std::max(maxabs, std::fabs(r));
  }
  double atol = std::max(o.atol_scale * maxabs, 1e-7);
  double worst = 0;
  int64_t worst_i = -1;
  for (int64_t i = 0; i < n; ++i) {
    double r = at(ref.bytes.data(), i), y = at(got, i);
    bool ok;
    if (std::isnan(r))
      ok = std::isnan(y);
    else if (std::isinf(r))
      ok = y == r;
    else
      ok = std::fabs(y - r) <= atol + o.rtol * std::fabs(r);
    double err = std::isnan(y) || std::isinf(y) ? INFINITY : std::fabs(y - r);
    if (!ok && (worst_i < 0 || err > worst)) {
      worst = err;
      worst_i = i;
    }
  }
  if (worst_i < 0) return true;
  std::ostringstream s;
  s << "max error " << worst << " at element " << worst_i << ": expected " << at(ref.bytes.data(), worst_i) << ", got "
    << at(got, worst_i) << " (max|ref| " << maxabs << ")";
  *why = s.str();
  return false;
}

// ONNX's test data (numpy) has no bfloat16: such tensors are stored as
// uint16 bit patterns.
ConstP as_bf16_if_needed(ConstP t, DType want) {
  if (!t || want != DType::BF16 || t->dtype != DType::U16) return t;
  return make_const(DType::BF16, t->shape, t->bytes);
}

class CaseRunner {
 public:
  CaseRunner(const Options &o) : o_(o) {}

  // The compile options every case takes from the command line.
  // The options for case `dir`: the tool's, and the case's own ranges
  // (tinyrt_dims.txt, a line each: "--dim NAME=MIN:MAX" or "--input-shape
  // NAME=D0,MIN:MAX,...").
  CompileOptions compile_options(const fs::path &dir) const {
    std::vector<std::string> shapes = o_.shapes, dims = o_.dims;
    std::ifstream f(dir / "tinyrt_dims.txt");
    std::string line;
    while (std::getline(f, line)) {
      std::istringstream ls(line);
      std::string opt, val;
      if (!(ls >> opt)) continue;
      if (!(ls >> val) || (opt != "--dim" && opt != "--input-shape"))
        fail_usage((dir / "tinyrt_dims.txt").string() + ": '" + line +
                   "' is neither --dim NAME=MIN:MAX nor --input-shape NAME=D0,...");
      (opt == "--dim" ? dims : shapes).push_back(val);
    }
    CompileOptions co;
    co.target = o_.target;
    co.name = "m";
    co.custom_ops = o_.custom.custom_ops;
    co.link_sources = o_.custom.link_sources;
    co.prefer_function_bodies = o_.function_bodies;
    co.quantize = o_.quantize.mode;
    co.weight_bits = o_.quantize.weight_bits;
    co.winograd = o_.winograd;
    co.winograd_bands = o_.winograd_bands;
    co.weights = o_.weights;
    co.precision = o_.precision;
    co.tuning = o_.tuning;
    co.import.limits = o_.budgets;
    co.gemm_tile = o_.gemm_tile;
    co.task_split = o_.task_split;
    co.check_addresses = o_.check_addresses;
    co.serial_step_ops = o_.serial_step_ops;
    add_shape_options(co.import, shapes, dims);
    return co;
  }

  Outcome run(const fs::path &dir) {
    fs::path model = dir / "model.onnx";
    std::string work = make_temp_dir("tinyrt-onnx-test");
    Outcome out;
    try {
      out = run_in(model, dir, work);
    } catch (const ConstantRequired &e) {
      out = {Outcome::Unsupported, one_line(e.what())};
    } catch (const CompileError &e) {
      out = e.kind() == CompileError::Kind::Unsupported ? Outcome{Outcome::Unsupported, one_line(e.what())}
                                                        : Outcome{Outcome::Fail, one_line(e.what())};
    } catch (const std::exception &e) {
      out = {Outcome::Fail, one_line(std::string("error: ") + e.what())};
    }
    if (!o_.keep)
      fs::remove_all(work);
    else
      out.detail += (out.detail.empty() ? "" : "; ") + std::string("files in ") + work;
    return out;
  }

 private:
  Outcome run_in(const fs::path &model, const fs::path &dir, const std::string &work) {
    std::vector<std::string> in_names = onnx_graph_inputs(model.string());
    std::vector<DataSet> sets;
    try {
      sets = load_data_sets(dir, in_names);
    } catch (const CompileError &) {
      // Data that is not tensors (sequences, optionals) belongs to models
      // the compiler rejects; let it say why.
      build_model(model.string(), compile_options(dir), (fs::path(work) / "probe").string());
      throw;
    }
    if (sets.empty()) return {Outcome::Unsupported, "no test data sets"};
    std::set<std::string> bound_names;
    std::map<std::string, Bytes> bound_values;
    std::unique_ptr<BuiltModel> built;
    for (size_t si = 0; si < sets.size(); ++si) {
      const DataSet &ds = sets[si];
      auto tensor_of = [&](const std::string &name) -> ConstP {
        for (auto &kv : ds.inputs)
          if (kv.first == name) return kv.second;
        return nullptr;
      };
      // Recompile when a bound input has other values in this data set.
      bool stale = !built;
      for (auto &name : bound_names) {
        ConstP t = tensor_of(name);
        stale = stale || !t || t->bytes != bound_values[name];
      }
      for (int attempt = 0; stale; ++attempt) {
        CompileOptions co = compile_options(dir);
        for (auto &name : bound_names) co.import.bindings[name].tensor = tensor_of(name);
        // Dynamic dimensions take the data set's shapes, unless the model
        // is compiled for ranges (--input-shape with MIN:MAX, --dim): then
        // once, and each data set runs at its own shapes.
        const bool ranged = !co.import.dim_ranges.empty() || !co.import.input_shape_mins.empty();
        for (auto &kv : ds.inputs)
          if (!ranged && !co.import.input_shapes.count(kv.first) && !bound_names.count(kv.first) &&
              std::find(in_names.begin(), in_names.end(), kv.first) != in_names.end())
            co.import.input_shapes[kv.first] = kv.second->shape;
        // --quantize static: calibrated on --calibration DIR, or on the
        // case's own data sets.
        if (co.quantize == Quantize::Static)
          co.calibration =
              calibrate(model.string(), co, o_.quantize.calibration.empty() ? dir.string() : o_.quantize.calibration,
                        o_.quantize.percentile);
        try {
          fs::path sub = fs::path(work) / ("build" + std::to_string(si) + "_" + std::to_string(attempt));
          built = std::make_unique<BuiltModel>(build_model(model.string(), co, sub.string()));
          stale = false;
        } catch (const ConstantRequired &e) {
          // Inputs that fix shapes or axes are frozen from the data set
          // (the graph inputs such a value is computed from).
          bool added = false;
          for (auto &name : e.inputs())
            if (tensor_of(name) && !bound_names.count(name)) {
              bound_names.insert(name);
              added = true;
            }
          if (!added || attempt > 16) throw;
        }
        for (auto &name : bound_names) bound_values[name] = tensor_of(name)->bytes;
      }
      // Inputs in descriptor order.
      const Artifact &a = built->artifact;
      std::string in_path = (fs::path(work) / ("in" + std::to_string(si) + ".bin")).string();
      std::string out_path = (fs::path(work) / ("out" + std::to_string(si) + ".bin")).string();
      bool dynamic = false;
      std::vector<Shape> shapes;  // every input's, for a model with run-time dimensions
      {
        std::ofstream f(in_path, std::ios::binary);
        for (auto &ti : a.inputs) {
          ConstP t = as_bf16_if_needed(tensor_of(ti.name), ti.dtype);
          if (!t) return {Outcome::Fail, "data set " + std::to_string(si) + " has no input '" + ti.name + "'"};
          if (!ti.accepts(t->dtype, t->shape))
            return {Outcome::Fail, "input '" + ti.name + "' is " + dtype_name(t->dtype) + shape_str(t->shape) +
                                       ", the model expects " + ti.takes()};
          dynamic = dynamic || ti.dynamic();
          shapes.push_back(t->shape);
          f.write(reinterpret_cast<const char *>(t->bytes.data()), (std::streamsize)t->bytes.size());
        }
      }
      // Data-dependent sizes: the outputs' dims are read back too.
      for (auto &ti : a.outputs) dynamic = dynamic || ti.dynamic();
      std::vector<std::string> args = {"--in", in_path, "--out", out_path, "--threads", std::to_string(o_.threads)};
      if (dynamic) args.insert(args.end(), {"--dims", runner_dims(shapes)});
      if (o_.compare_threads) args.insert(args.end(), {"--compare-threads", "2"});
      ProcessResult pr = run_runner(a.target, *built, args);
      if (!ds.expected_error.empty()) {
        if (pr.exit_code == 0 || pr.output.find(ds.expected_error) == std::string::npos)
          return {Outcome::Fail, "data set " + std::to_string(si) + ": the run should fail with '" + ds.expected_error +
                                     "', the runner exited with " + std::to_string(pr.exit_code) + ": " +
                                     one_line(pr.output)};
        continue;
      }
      if (pr.exit_code != 0)
        return {Outcome::Fail, "runner exited with " + std::to_string(pr.exit_code) + ": " + one_line(pr.output)};
      std::ifstream f(out_path, std::ios::binary);
      std::string got((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      if (ds.outputs.size() != a.outputs.size())
        return {Outcome::Fail, "data set has " + std::to_string(ds.outputs.size()) + " outputs, model " +
                                   std::to_string(a.outputs.size())};
      // The outputs' actual dims, as the runner printed them ("dims K: D0,...").
      std::map<size_t, Shape> out_dims;
      if (dynamic) out_dims = runner_output_dims(pr.output);
      size_t off = 0;
      for (size_t k = 0; k < a.outputs.size(); ++k) {
        const TensorInfo &ti = a.outputs[k];
        ConstP ref_p = as_bf16_if_needed(ds.outputs[k], ti.dtype);
        const ConstData &ref = *ref_p;
        Shape shape = ti.shape;
        if (dynamic && out_dims.count(k)) shape = out_dims[k];
        if (ref.dtype != ti.dtype || ref.shape != shape)
          return {Outcome::Fail, "output '" + ti.name + "' is " + dtype_name(ti.dtype) + shape_str(shape) +
                                     ", expected " + dtype_name(ref.dtype) + shape_str(ref.shape)};
        const size_t bytes = (size_t)shape_numel(shape) * (size_t)dtype_bytes(ti.dtype);
        if (got.size() < off + bytes) return {Outcome::Fail, "runner wrote too few output bytes"};
        std::string why;
        if (!compare(ref, reinterpret_cast<const uint8_t *>(got.data()) + off, o_, &why))
          return {Outcome::Fail, "output '" + ti.name + "' data set " + std::to_string(si) + ": " + why};
        off += bytes;
      }
    }
    std::string note;
    const PlanStats &st = built->artifact.stats;
    if (o_.max_arena_ratio > 0 && st.arena_bytes > o_.max_arena_ratio * (double)st.lower_bound_bytes)
      return {Outcome::Fail, "arena " + std::to_string(st.arena_bytes) + " bytes exceeds " +
                                 std::to_string(o_.max_arena_ratio) + " x lower bound " +
                                 std::to_string(st.lower_bound_bytes)};
    if (!bound_names.empty()) {
      note = "bound:";
      for (auto &n : bound_names) note += " " + n;
    }
    return {Outcome::Pass, note};
  }

  const Options &o_;
};

std::vector<fs::path> collect_cases(const std::vector<std::string> &paths, const std::vector<std::string> &filter) {
  std::vector<fs::path> cases;
  for (auto &p : paths) {
    fs::path d(p);
    if (fs::exists(d / "model.onnx")) {
      cases.push_back(d);
      continue;
    }
    if (!fs::is_directory(d)) fail_usage(p + " is neither a test case nor a directory of test cases");
    std::vector<fs::path> sub;
    for (auto &e : fs::directory_iterator(d))
      if (fs::exists(e.path() / "model.onnx")) sub.push_back(e.path());
    std::sort(sub.begin(), sub.end());
    cases.insert(cases.end(), sub.begin(), sub.end());
  }
  if (!filter.empty())
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [&](const fs::path &c) {
                                 for (auto &f : filter)
                                   if (c.filename().string().find(f) != std::string::npos) return false;
                                 return true;
                               }),
                cases.end());
  return cases;
}

}  // namespace

int main(int argc, char **argv) {
  tinyrt::install_llvm_error_handlers("tinyrt-onnx-test");
  CLI::App app{"tinyrt-onnx-test: run ONNX backend test cases through tinyrt"};
  Options o;
  std::vector<std::string> paths;
  int jobs = 1;
  std::string shard;
  app.add_option("paths", paths, "test case directories, or directories of them")->required();
  tinyrt::add_target_option(app, o.target);
  app.add_option("--threads", o.threads, "threads of the runtime pool")->capture_default_str();
  app.add_option("--rtol", o.rtol, "relative tolerance")->capture_default_str();
  CLI::Option *atol = app.add_option("--atol", o.atol_scale,
                                     "absolute tolerance as a fraction of max|ref| (with --weights fp16 the default "
                                     "is 2e-3: half weights' rounding, docs/PRECISION.md)")
                          ->capture_default_str();
  app.add_option("-j,--jobs", jobs, "cases run in parallel")->capture_default_str();
  app.add_option("--shard", shard, "K/N: run the K-th of N interleaved slices of the cases");
  app.add_option("--filter", o.filter, "only cases whose name contains this (repeatable: any)");
  add_input_shape_options(app, o.shapes, o.dims);
  app.add_flag("--function-bodies", o.function_bodies,
               "expand every op that has an ONNX function body into it (tests the expansion)");
  add_quantize_option(app, o.quantize);
  add_winograd_option(app, o.winograd, o.winograd_bands);
  add_weights_option(app, o.weights);
  add_precision_option(app, o.precision);
  add_tuning_option(app, o.tuning);
  add_budget_options(app, o.budgets);
  add_gemm_tile_option(app, o.gemm_tile);
  add_task_split_option(app, o.task_split);
  add_check_addresses_option(app, o.check_addresses);
  add_serial_step_option(app, o.serial_step_ops);
  app.add_flag("--compare-threads", o.compare_threads, "also check outputs are identical with 2 threads");
  app.add_flag("--keep", o.keep, "keep the work directories");
  app.add_option("--max-arena-ratio", o.max_arena_ratio, "fail when arena > RATIO x its lower bound");
  std::string unless_same_as;
  app.add_option("--unless-same-as", unless_same_as,
                 "TARGET: nothing to do when --target is the same target as this one on this machine (ctest runs "
                 "x86-64-avx2's suites unless the host is x86-64-avx2, whose suites already run them)");
  CustomOpArgs custom;
  add_custom_op_options(app, custom, true);
  CLI11_PARSE(app, argc, argv);
  // Half weights round each weight to 11 significant bits: the outputs of
  // the zoo and the ONNX suites stay within 1e-3 of max|ref|.
  // Half products (--precision fp16) round X too and sum 32 products at a
  // time in half: twice that (the zoo and torchvision: at most 2.0e-3,
  // docs/PRECISION.md).
  if (o.weights == WeightStorage::F16 && atol->count() == 0) o.atol_scale = 2e-3;
  if (o.precision == Precision::F16 && atol->count() == 0) o.atol_scale = 4e-3;

  try {
    Target target = resolve_target(o.target);
    if (!unless_same_as.empty()) {
      Target other = resolve_target(unless_same_as);
      if (target.name == other.name && target.cpu == other.cpu && target.features == other.features) {
        std::cout << o.target << " is " << unless_same_as << " on this machine (" << target.name
                  << "): its suite runs these cases\n";
        return 0;
      }
    }
    check_quantize_args(o.quantize);
    apply_custom_op_options(custom, o.custom);
    std::vector<fs::path> cases = collect_cases(paths, o.filter);
    if (!shard.empty()) {
      int k = 0, n = 1;
      if (sscanf(shard.c_str(), "%d/%d", &k, &n) != 2 || n < 1 || k < 0 || k >= n)
        fail_usage("--shard expects K/N with 0 <= K < N");
      std::vector<fs::path> mine;
      for (size_t i = 0; i < cases.size(); ++i)
        if ((int)(i % n) == k) mine.push_back(cases[i]);
      cases = mine;
    }
    std::vector<Outcome> results(cases.size());
    std::atomic<size_t> next{0};
    std::mutex mu;
    auto worker = [&] {
      CaseRunner cr(o);
      for (size_t i; (i = next++) < cases.size();) {
        results[i] = cr.run(cases[i]);
        const Outcome &r = results[i];
        std::lock_guard<std::mutex> lock(mu);
        const char *k = r.kind == Outcome::Pass ? "PASS" : r.kind == Outcome::Fail ? "FAIL" : "UNSUPPORTED";
        std::cout << k << " " << cases[i].filename().string();
        if (!r.detail.empty()) std::cout << " (" << r.detail << ")";
        std::cout << std::endl;
      }
    };
    std::vector<std::thread> pool;
    for (int j = 0; j < std::max(1, jobs); ++j) pool.emplace_back(worker);
    for (auto &t : pool) t.join();
    int pass = 0, fail = 0, skip = 0;
    for (auto &r : results) (r.kind == Outcome::Pass ? pass : r.kind == Outcome::Fail ? fail : skip)++;
    std::cout << pass << " passed, " << fail << " failed, " << skip << " skipped" << std::endl;
    return fail ? 1 : 0;
  } catch (const CompileError &e) {
    std::cerr << "tinyrt-onnx-test: " << e.what() << "\n";
    return 2;
  }
}

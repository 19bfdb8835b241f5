// tinyrt-perf — compiles a model and measures it: latency on the host;
// executed guest instructions per inference under qemu for ARM targets
// (counted by the project's TCG plugin); arena, weights and code bytes.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tinyrt_artifact.h"
#include "device.h"
#include "device_options.h"
#include "tool_common.h"
#include "custom_op_options.h"
#include "quantize_option.h"
#include "codegen_options.h"
#include "limit_options.h"
#include "shape_options.h"

namespace fs = std::filesystem;
using namespace tinyrt;

namespace {

double field(const std::string &out, const std::string &key) {
  size_t p = out.find(key + "=");
  if (p == std::string::npos) fail_internal("runner output lacks " + key + ": " + out);
  return strtod(out.c_str() + p + key.size() + 1, nullptr);
}

// Runs the model's runner with these arguments (and the emulator's).
using Runner = std::function<ProcessResult(std::vector<std::string>, const std::vector<std::string> &)>;

// The runner's --in file for --input NAME=VALUES|NAME=@tensor.pb: each
// graph input in descriptor order, zeros where not given; for a model with
// run-time dimensions a tensor may have any shape in the input's bounds
// (the run takes it: the runner's --dims), values and absent inputs the
// upper bounds. Returns the runner's arguments.
std::vector<std::string> write_inputs(const Artifact &a, const std::vector<std::string> &specs,
                                      const std::string &work) {
  std::map<std::string, Binding> given;
  for (auto &s : specs) {
    auto kv = parse_binding(s);
    if (!given.insert(kv).second) fail_usage("--input names '" + kv.first + "' twice");
  }
  std::string path = (fs::path(work) / "inputs.bin").string();
  std::ofstream f(path, std::ios::binary);
  std::vector<Shape> shapes;
  bool dynamic = false;
  for (const TensorInfo &ti : a.inputs) {
    Shape shape = ti.shape;
    auto it = given.find(ti.name);
    Bytes bytes((size_t)ti.bytes, 0);
    if (it != given.end()) {
      const Binding &b = it->second;
      ConstP t = b.tensor;
      int64_t n = shape_numel(ti.shape);
      if (!t) {
        std::vector<double> v = b.values;
        if (v.size() == 1) v.assign((size_t)n, v[0]);
        if ((int64_t)v.size() != n)
          fail_usage("--input " + ti.name + ": " + std::to_string(b.values.size()) + " values for " +
                     std::to_string(n) + " elements");
        t = values_as_tensor(v, ti.dtype, ti.shape, "--input " + ti.name);
      }
      if (!ti.accepts(t->dtype, t->shape))
        fail_usage("--input " + ti.name + ": the tensor is " + dtype_name(t->dtype) + shape_str(t->shape) +
                   ", the input " + ti.takes());
      bytes = t->bytes;
      shape = t->shape;
      given.erase(it);
    }
    dynamic = dynamic || ti.dynamic();
    shapes.push_back(shape);
    f.write(reinterpret_cast<const char *>(bytes.data()), (std::streamsize)bytes.size());
  }
  if (!given.empty()) fail_usage("--input names '" + given.begin()->first + "', which is not an input of the model");
  std::vector<std::string> args = {"--in", path};
  if (dynamic) args.insert(args.end(), {"--dims", runner_dims(shapes)});
  return args;
}

// Guest instructions of one runner invocation with `runs` timed runs.
double count_instructions(const Runner &runner, int runs, const std::string &work) {
  std::string out = (fs::path(work) / ("icount" + std::to_string(runs) + ".txt")).string();
  std::string plugin = icount_plugin_path();
  if (!fs::exists(plugin)) fail_usage("QEMU plugin missing: " + plugin);
  ProcessResult r = runner({"--runs", std::to_string(runs)}, {"-plugin", plugin + ",out=" + out});
  if (r.exit_code != 0) fail_internal("runner failed under qemu: " + r.output);
  std::ifstream f(out);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return field(s, "guest_instructions");
}

// The artifact's fusion groups (label, ONNX nodes, family, FLOPs: the
// compile JSON's "fusion_groups") joined with one figure per step: the
// median milliseconds on the host, or the guest instructions per run under
// qemu.
nlohmann::json join_steps(const nlohmann::json &groups, const std::vector<double> &per_step, const char *key) {
  if (per_step.size() != groups.size())
    fail_internal("runner profiled " + std::to_string(per_step.size()) + " steps, the model has " +
                  std::to_string(groups.size()));
  double total = 0;
  for (double v : per_step) total += v;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < per_step.size(); ++i) {
    const nlohmann::json &g = groups[i];
    nlohmann::json r = {{"kernel", i},         {"label", g["label"]}, {"family", g["family"]},
                        {"nodes", g["nodes"]}, {key, per_step[i]},    {"share", total > 0 ? per_step[i] / total : 0.0}};
    if (g.contains("tile")) r["tile"] = g["tile"];
    if (g.contains("gemm")) r["gemm"] = g["gemm"];
    if (g.contains("winograd_class")) r["winograd_class"] = g["winograd_class"];
    if (g.contains("flops")) {
      double f = g["flops"].get<double>();
      if (!strcmp(key, "median_ms") && per_step[i] > 0) r["gflops"] = f / (per_step[i] * 1e6);
      if (!strcmp(key, "guest_instructions") && per_step[i] > 0) r["flops_per_instruction"] = f / per_step[i];
    }
    rows.push_back(r);
  }
  return rows;
}

// Per-step medians from the runner's --profile output.
nlohmann::json profile_table(const std::string &runner_out, const nlohmann::json &groups) {
  std::vector<double> ms;
  std::istringstream in(runner_out);
  std::string line;
  while (std::getline(in, line)) {
    unsigned k;
    double v;
    if (sscanf(line.c_str(), "step %u: %lf ms", &k, &v) == 2) {
      if (k != ms.size()) fail_internal("runner profile out of order: " + line);
      ms.push_back(v);
    }
  }
  return join_steps(groups, ms, "median_ms");
}

// Per-step guest instructions under qemu: the runner marks each step of
// `runs` runs (--mark-steps) and the icount plugin sums the instructions
// between the marks.
nlohmann::json count_steps(const Runner &runner, const nlohmann::json &groups, int runs, const std::string &work) {
  std::string out = (fs::path(work) / "icount-steps.txt").string();
  std::string plugin = icount_plugin_path();
  if (!fs::exists(plugin)) fail_usage("QEMU plugin missing: " + plugin);
  ProcessResult r = runner({"--mark-steps", std::to_string(runs)}, {"-plugin", plugin + ",out=" + out});
  if (r.exit_code != 0) fail_internal("runner failed under qemu: " + r.output);
  std::ifstream f(out);
  std::vector<double> per_step;
  std::string line;
  while (std::getline(f, line)) {
    unsigned k;
    unsigned long long n, runs_seen;
    if (sscanf(line.c_str(), "step %u: %llu %llu", &k, &n, &runs_seen) == 3) {
      if (k != per_step.size()) fail_internal("icount plugin steps out of order: " + line);
      per_step.push_back(runs_seen ? (double)n / (double)runs_seen : 0.0);
    }
  }
  // The plugin lists the steps up to the last one that ran: the steps of a
  // branch not taken at the end ran no instructions.
  if (per_step.size() < groups.size()) per_step.resize(groups.size(), 0.0);
  return join_steps(groups, per_step, "guest_instructions");
}

void print_profile(const nlohmann::json &rows) {
  bool counted = !rows.empty() && rows[0].contains("guest_instructions");
  const char *key = counted ? "guest_instructions" : "median_ms";
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return rows[x][key].get<double>() > rows[y][key].get<double>(); });
  if (counted)
    printf("  %-6s %-10s %12s %6s %8s %6s  %s\n", "kernel", "family", "instructions", "share", "FLOP/ins", "tile",
           "ops (ONNX nodes)");
  else
    printf("  %-6s %-10s %9s %6s %8s  %s\n", "kernel", "family", "median ms", "share", "GFLOP/s", "ops (ONNX nodes)");
  for (size_t i : order) {
    const nlohmann::json &r = rows[i];
    std::string nodes;
    for (auto &n : r["nodes"]) nodes += (nodes.empty() ? "" : ", ") + n.get<std::string>();
    if (nodes.size() > 60) nodes = nodes.substr(0, 57) + "...";
    std::string label = r["label"].get<std::string>(), family = r["family"].get<std::string>();
    if (counted) {
      char fpi[32] = "-", tile[32] = "-";
      if (r.contains("flops_per_instruction"))
        snprintf(fpi, sizeof fpi, "%.2f", r["flops_per_instruction"].get<double>());
      if (r.contains("tile"))
        snprintf(tile, sizeof tile, "%dx%d", r["tile"]["mr"].get<int>(), r["tile"]["nr"].get<int>());
      printf("  %-6zu %-10s %12.0f %5.1f%% %8s %6s  %s (%s)\n", (size_t)r["kernel"].get<int>(), family.c_str(),
             r[key].get<double>(), 100 * r["share"].get<double>(), fpi, tile, label.c_str(), nodes.c_str());
    } else {
      std::string gf = r.contains("gflops") ? std::to_string((int)(r["gflops"].get<double>() + 0.5)) : "-";
      printf("  %-6zu %-10s %9.4f %5.1f%% %8s  %s (%s)\n", (size_t)r["kernel"].get<int>(), family.c_str(),
             r[key].get<double>(), 100 * r["share"].get<double>(), gf.c_str(), label.c_str(), nodes.c_str());
    }
  }
}

// Chrome trace-event format (chrome://tracing, Perfetto): the per-step
// medians laid end to end as one inference.
void write_trace(const std::string &path, const nlohmann::json &rows) {
  nlohmann::json ev = nlohmann::json::array();
  double ts = 0;
  for (auto &r : rows) {
    double dur = r["median_ms"].get<double>() * 1000;
    ev.push_back({{"name", r["label"]},
                  {"cat", r["family"]},
                  {"ph", "X"},
                  {"ts", ts},
                  {"dur", dur},
                  {"pid", 1},
                  {"tid", 1},
                  {"args", {{"kernel", r["kernel"]}, {"nodes", r["nodes"]}}}});
    ts += dur;
  }
  std::ofstream f(path);
  if (!f) fail_usage("cannot write " + path);
  f << nlohmann::json({{"traceEvents", ev}, {"displayTimeUnit", "ms"}})
           .dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
    << "\n";
}

}  // namespace

int main(int argc, char **argv) {
  tinyrt::install_llvm_error_handlers("tinyrt-perf");
  CLI::App app{"tinyrt-perf: measure a compiled model"};
  std::string model, target = "host";
  int threads = 1, runs = 20, warmup = 3;
  bool json = false;
  std::vector<std::string> shapes;
  app.add_option("model", model, "ONNX model file")->required();
  tinyrt::add_target_option(app, target);
  app.add_option("--threads", threads, "threads of the runtime pool")->capture_default_str();
  app.add_option("--runs", runs, "timed runs")->capture_default_str();
  app.add_option("--warmup", warmup, "untimed runs first")->capture_default_str();
  std::vector<std::string> dim_ranges;
  tinyrt::add_input_shape_options(app, shapes, dim_ranges);
  std::vector<std::string> binds;
  app.add_option("--bind", binds,
                 "NAME=V0,V1,... or NAME=@tensor.pb: freeze a graph input to a constant (as tinyrt-compile)");
  std::vector<std::string> inputs;
  app.add_option("--input", inputs,
                 "NAME=V0,V1,... (one value: every element) or NAME=@tensor.pb: the input's values at run time "
                 "(others are zeros), e.g. the condition of an If that picks a branch");
  app.add_flag("--json", json, "print one JSON object");
  std::string tile, trace;
  bool profile = false;
  add_gemm_tile_option(app, tile);
  std::string task_split;
  add_task_split_option(app, task_split);
  QuantizeArgs quantize;
  add_quantize_option(app, quantize);
  WinogradMode winograd = WinogradMode::Auto;
  int64_t winograd_bands = 0;
  add_winograd_option(app, winograd, winograd_bands);
  WeightStorage weights = WeightStorage::F32;
  add_weights_option(app, weights);
  Precision precision = Precision::F32;
  add_precision_option(app, precision);
  std::string tuning;
  add_tuning_option(app, tuning);
  Limits budgets;
  add_budget_options(app, budgets);
  bool check_addresses = false;
  add_check_addresses_option(app, check_addresses);
  int64_t serial_step_ops = -1;
  add_serial_step_option(app, serial_step_ops);
  app.add_flag("--profile", profile,
               "per-kernel table: median ms, share, GFLOP/s on the host; guest instructions per kernel under qemu on "
               "ARM targets (adds \"profile\" to --json)");
  app.add_option("--trace", trace, "write the per-kernel medians as a Chrome trace-event file (implies --profile)");
  int gap_us = 0;
  std::string device;
  add_device_options(app, device, gap_us);
  CustomOpArgs custom;
  add_custom_op_options(app, custom, true);
  CLI11_PARSE(app, argc, argv);
  try {
    CompileOptions co;
    apply_custom_op_options(custom, co);
    co.target = target;
    co.name = "perf";
    co.gemm_tile = tile;
    co.task_split = task_split;
    co.winograd = winograd;
    co.winograd_bands = winograd_bands;
    co.weights = weights;
    co.precision = precision;
    co.tuning = tuning;
    co.import.limits = budgets;
    co.check_addresses = check_addresses;
    co.serial_step_ops = serial_step_ops;
    check_quantize_args(quantize);
    co.quantize = quantize.mode;
    co.weight_bits = quantize.weight_bits;
    tinyrt::add_shape_options(co.import, shapes, dim_ranges);
    for (auto &b : binds) co.import.bindings.insert(parse_binding(b));
    if (co.quantize == Quantize::Static)
      co.calibration = calibrate(model, co, quantize.calibration, quantize.percentile);
    std::string work = make_temp_dir("tinyrt-perf");
    BuiltModel m = build_model(model, co, work);
    const Artifact &a = m.artifact;
    // Every runner invocation below reads the same inputs (--input).
    std::vector<std::string> in_args;
    if (!inputs.empty()) in_args = write_inputs(a, inputs, work);
    // --device: the runs on the device, timed there (for any target).
    std::unique_ptr<Device> dev;
    if (!device.empty()) dev = std::make_unique<Device>(device, a.target, m);
    auto runner = [&](std::vector<std::string> args, const std::vector<std::string> &emulator_args = {}) {
      args.insert(args.end(), in_args.begin(), in_args.end());
      return dev ? dev->run(args) : run_runner(a.target, m, args, emulator_args);
    };
    nlohmann::json j;
    j["model"] = model;
    j["target"] = a.target.name;
    j["threads"] = threads;
    j["arena_bytes"] = a.stats.arena_bytes;
    j["arena_lower_bound_bytes"] = a.stats.lower_bound_bytes;
    j["weights_bytes"] = a.weights_bytes;
    j["code_bytes"] = a.code_bytes;
    const nlohmann::json report = nlohmann::json::parse(a.json);
    const nlohmann::json &groups = report["fusion_groups"];
    j["budgets"] = report["budgets"];  // the weights budget beside the bytes
    // Whether the steps run on the calling thread alone (Target::
    // serial_step_ops against the mean arithmetic operations of the
    // model's layers, the compile's "layers"; tinyrt-tune measures that
    // threshold).
    double ops = 0;
    bool serial = false;
    for (const nlohmann::json &g : groups) {
      ops += g.value("ops", 0.0);
      serial = serial || g.value("serial", false);
    }
    const int64_t layers = report.value("layers", (int64_t)0);
    j["mean_step_ops"] = layers ? ops / (double)layers : 0.0;
    j["steps_serial"] = serial;
    j["compile_seconds"] = a.compile_seconds;
    if (dev) j["device"] = device;
    if (gap_us > 0) j["gap_us"] = gap_us;
    if (dev || host_tools(a.target).emulator.empty()) {
      ProcessResult r = runner({"--runs", std::to_string(runs), "--warmup", std::to_string(warmup), "--threads",
                                std::to_string(threads), "--gap-us", std::to_string(gap_us)});
      if (r.exit_code != 0) fail_internal("runner failed: " + r.output);
      j["median_ms"] = field(r.output, "median_ms");
      j["min_ms"] = field(r.output, "min_ms");
      j["p50_ms"] = j["median_ms"];
      j["p90_ms"] = field(r.output, "p90_ms");
      j["p99_ms"] = field(r.output, "p99_ms");
      j["runs"] = runs;
      if (profile || !trace.empty()) {
        ProcessResult pr = runner({"--profile", std::to_string(std::max(runs, 1)), "--threads", std::to_string(threads),
                                   "--gap-us", std::to_string(gap_us)});
        if (pr.exit_code != 0) fail_internal("runner failed: " + pr.output);
        j["profile"] = profile_table(pr.output, groups);
        if (!trace.empty()) write_trace(trace, j["profile"]);
      }
    } else {
      if (gap_us > 0) fail_usage("--gap-us pauses timed runs: use a host target or --device (ARM runs are counted)");
      if (!trace.empty())
        fail_usage(
            "--trace times kernels on this machine: use a host target (--profile counts ARM instructions per kernel)");
      if (profile && threads != 1)
        fail_usage("--profile on an emulated target counts one thread's instructions: use --threads 1");
      // One run costs (count(1 + n) - count(1)) / n: start-up and loading cancel out.
      int n = std::max(1, std::min(runs, 3));
      double c1 = count_instructions(runner, 1, work);
      double cn = count_instructions(runner, 1 + n, work);
      j["guest_instructions"] = (int64_t)((cn - c1) / n);
      j["median_ms"] = nullptr;
      j["min_ms"] = nullptr;
      if (profile) j["profile"] = count_steps(runner, groups, n, work);
    }
    fs::remove_all(work);
    if (json) {
      std::cout << j.dump() << "\n";
    } else {
      std::cout << "model " << model << " target " << a.target.name << " threads " << threads << "\n";
      if (j.contains("guest_instructions"))
        std::cout << "  guest instructions per inference: " << j["guest_instructions"] << "\n";
      else
        std::cout << "  latency: median " << j["median_ms"] << " ms, min " << j["min_ms"] << " ms, p90 " << j["p90_ms"]
                  << " ms, p99 " << j["p99_ms"] << " ms over " << runs << " runs\n";
      std::cout << "  arena " << a.stats.arena_bytes << " bytes (lower bound " << a.stats.lower_bound_bytes
                << "), weights " << a.weights_bytes << " bytes (budget " << j["budgets"]["weights_budget_bytes"]
                << "), code " << a.code_bytes << " bytes";
      if (j["budgets"]["code_budget_bytes"].get<int64_t>() > 0)
        std::cout << " (budget " << j["budgets"]["code_budget_bytes"] << ")";
      std::cout << "\n";
      if (j.contains("profile")) {
        std::cout << std::flush;
        print_profile(j["profile"]);
        fflush(stdout);
      }
    }
    return 0;
  } catch (const CompileError &e) {
    std::cerr << "tinyrt-perf: error: " << e.what() << "\n";
    return e.kind() == CompileError::Kind::Usage ? 2 : 1;
  }
}

// tinyrt-perf — compiles a model and measures it: latency on the host;
// executed guest instructions per inference under qemu for ARM targets
// (counted by the project's TCG plugin); arena, weights and code bytes.
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tinyrt_artifact.h"
#include "tool_common.h"

namespace fs = std::filesystem;
using namespace tinyrt;

namespace {

double field(const std::string &out, const std::string &key) {
  size_t p = out.find(key + "=");
  if (p == std::string::npos) fail_internal("runner output lacks " + key + ": " + out);
  return strtod(out.c_str() + p + key.size() + 1, nullptr);
}

// Guest instructions of one runner invocation with `runs` timed runs.
double count_instructions(const Target &t, const BuiltModel &m, int runs, const std::string &work) {
  std::string out = (fs::path(work) / ("icount" + std::to_string(runs) + ".txt")).string();
  std::string plugin = icount_plugin_path();
  if (!fs::exists(plugin)) fail_usage("QEMU plugin missing: " + plugin);
  ProcessResult r = run_runner(t, m, {"--runs", std::to_string(runs)},
                               {"-plugin", plugin + ",out=" + out});
  if (r.exit_code != 0) fail_internal("runner failed under qemu: " + r.output);
  std::ifstream f(out);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return field(s, "guest_instructions");
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App app{"tinyrt-perf: measure a compiled model"};
  std::string model, target = "host";
  int threads = 1, runs = 20, warmup = 3;
  bool json = false;
  std::vector<std::string> shapes;
  app.add_option("model", model, "ONNX model file")->required();
  app.add_option("--target", target, "host | x86-64-avx2 | x86-64-avx512 | armv7-neon | aarch64-neon")
      ->capture_default_str();
  app.add_option("--threads", threads, "threads of the runtime pool")->capture_default_str();
  app.add_option("--runs", runs, "timed runs")->capture_default_str();
  app.add_option("--warmup", warmup, "untimed runs first")->capture_default_str();
  app.add_option("--input-shape", shapes, "NAME=D0,D1,... static shape for a graph input");
  app.add_flag("--json", json, "print one JSON object");
  std::string tile;
  app.add_option("--gemm-tile", tile, "MR,NV[,UNROLL]: force one GEMM register tile (tile experiments)");
  CLI11_PARSE(app, argc, argv);
  try {
    CompileOptions co;
    co.target = target;
    co.name = "perf";
    co.gemm_tile = tile;
    for (auto &s : shapes) co.import.input_shapes.insert(parse_input_shape(s));
    std::string work = make_temp_dir("tinyrt-perf");
    BuiltModel m = build_model(model, co, work);
    const Artifact &a = m.artifact;
    nlohmann::json j;
    j["model"] = model;
    j["target"] = a.target.name;
    j["threads"] = threads;
    j["arena_bytes"] = a.stats.arena_bytes;
    j["arena_lower_bound_bytes"] = a.stats.lower_bound_bytes;
    j["weights_bytes"] = a.weights_bytes;
    j["code_bytes"] = a.code_bytes;
    j["compile_seconds"] = a.compile_seconds;
    if (a.target.emulator.empty()) {
      ProcessResult r = run_runner(a.target, m,
                                   {"--runs", std::to_string(runs), "--warmup", std::to_string(warmup),
                                    "--threads", std::to_string(threads)});
      if (r.exit_code != 0) fail_internal("runner failed: " + r.output);
      j["median_ms"] = field(r.output, "median_ms");
      j["min_ms"] = field(r.output, "min_ms");
      j["runs"] = runs;
    } else {
      // One run costs (count(1 + n) - count(1)) / n: start-up and loading cancel out.
      int n = std::max(1, std::min(runs, 3));
      double c1 = count_instructions(a.target, m, 1, work);
      double cn = count_instructions(a.target, m, 1 + n, work);
      j["guest_instructions"] = (int64_t)((cn - c1) / n);
      j["median_ms"] = nullptr;
      j["min_ms"] = nullptr;
    }
    fs::remove_all(work);
    if (json) {
      std::cout << j.dump() << "\n";
    } else {
      std::cout << "model " << model << " target " << a.target.name << " threads " << threads << "\n";
      if (j.contains("guest_instructions"))
        std::cout << "  guest instructions per inference: " << j["guest_instructions"] << "\n";
      else
        std::cout << "  latency: median " << j["median_ms"] << " ms, min " << j["min_ms"] << " ms over " << runs
                  << " runs\n";
      std::cout << "  arena " << a.stats.arena_bytes << " bytes (lower bound " << a.stats.lower_bound_bytes
                << "), weights " << a.weights_bytes << " bytes, code " << a.code_bytes << " bytes\n";
    }
    return 0;
  } catch (const CompileError &e) {
    std::cerr << "tinyrt-perf: error: " << e.what() << "\n";
    return e.kind() == CompileError::Kind::Usage ? 2 : 1;
  }
}

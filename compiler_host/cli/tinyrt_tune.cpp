// tinyrt-tune: measures, on this machine, the choices the compiler makes
// per layer geometry of one or more models and writes a tuning file
// (driver/tuning.h) that tinyrt-compile, tinyrt-onnx-test and tinyrt-perf
// take with --tuning FILE. The stages (tune.h), each measuring with what
// the ones before it chose: at more than one thread, the step size under
// which a model's steps run on one thread; each 3x3 convolution
// geometry's Winograd forms against its direct form; then each GEMM (float and int8)
// geometry's register tile, candidate by candidate, and at more than one
// thread each GEMM geometry's task split, until three quarters of
// --minutes (the tiles until half of it when splits follow). Then each model runs whole with the
// file and with the tables, alternated: one the file slows (by over 0.5 %
// timed, at all counted) gives its geometries back to the tables (and the
// threshold, if the file changed how its steps run), so that no measured
// model gets slower. --weights and --precision measure what compiles with
// those options run (half weights, half products); the file records
// them and a compile with other ones refuses it.
#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <CLI/CLI.hpp>

#include "codegen_options.h"
#include "driver/compiler.h"
#include "device_options.h"
#include "ir/error.h"
#include "target/target.h"
#include "tune.h"

namespace {

std::string self_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, (size_t)n);
  return p.substr(0, p.rfind('/'));
}

std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace

int main(int argc, char **argv) {
  using namespace tinyrt::tune;
  CLI::App app{
      "tinyrt-tune: measure Winograd forms, the serial-step threshold, GEMM register tiles and task splits on this "
      "machine and write a tuning file (--tuning FILE)"};
  std::vector<std::string> models;
  std::string target = "host", out;
  double minutes = 5, margin = -1;
  int runs = 20, rounds = 2;
  Perf p;
  app.add_option("models", models, "ONNX model files whose layers to tune")->required()->check(CLI::ExistingFile);
  tinyrt::add_target_option(app, target);
  app.add_option("--minutes", minutes, "time budget: no new measurement starts after it")
      ->check(CLI::Range(0.1, 1440.0))
      ->capture_default_str();
  app.add_option("-o,--output", out, "the tuning file to write")->required();
  app.add_option("--runs", runs, "timed runs per measurement on x86 (ARM counts one run)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--rounds", rounds, "measurements of each (model, variant) on x86, alternated; the least counts")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option(
         "--threads", p.threads,
         "threads of the runtime pool while measuring (more than one: the serial-step threshold and the task splits "
         "too)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--margin", margin,
                 "a tile replaces the tables' where it costs this fraction less (default 0.03 timed, 0.005 counted)");
  app.add_option("--winograd", p.winograd, "as tinyrt-compile (auto: the Winograd forms and their GEMMs are tuned too)")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  tinyrt::WeightStorage weights = tinyrt::WeightStorage::F32;
  tinyrt::Precision precision = tinyrt::Precision::F32;
  tinyrt::add_weights_option(app, weights);
  tinyrt::add_precision_option(app, precision);
  tinyrt::add_device_options(app, p.device, p.gap_us);
  app.add_flag("-v,--verbose", p.verbose, "print each tinyrt-perf command it runs");
  CLI11_PARSE(app, argc, argv);

  try {
    // Measured with the weights and products the compiles will use (the
    // file records them; a compile with others refuses it): the target as
    // such a compile sees it (--precision fp16: the half tiles).
    tinyrt::CompileOptions co;
    co.target = target;
    co.weights = weights;
    co.precision = precision;
    tinyrt::Target tg = tinyrt::compile_target(co);
    const std::string wname = tinyrt::weight_storage_name(weights), pname = tinyrt::precision_name(precision);
    p.codegen = {"--weights", wname, "--precision", pname};
    // ARM without a device: instructions under qemu.
    const bool counted = tg.name.rfind("x86", 0) != 0 && p.device.empty();
    p.perf = self_dir() + "/tinyrt-perf";
    if (access(p.perf.c_str(), X_OK) != 0)
      throw std::runtime_error("tinyrt-perf not found beside tinyrt-tune: " + p.perf);
    p.target = target;
    p.lanes = tg.f32_lanes();
    p.measure_key = counted ? "guest_instructions" : "median_ms";
    p.runs = counted ? 1 : runs;
    if (counted) rounds = 1;
    if (margin < 0) margin = counted ? 0.005 : 0.03;
    if (counted && p.gap_us > 0)
      throw tinyrt::CompileError(tinyrt::CompileError::Kind::Usage,
                                 "--gap-us pauses timed runs: ARM targets are counted under qemu without --device");
    if (counted && p.threads > 1)
      fprintf(stderr,
              "tinyrt-tune: instructions under qemu count one thread: the serial-step threshold is not measured\n");

    // Three quarters of the time measure; the rest (at least) checks each
    // model with the file against the tables.
    Clock clock;
    clock.limit = minutes * 60 * 0.75;
    const std::string cpu = cpu_name();
    json verified = json::object();
    WinogradResult wino;
    SerialResult serial;
    TileResult tiles;
    SplitResult splits;
    const std::vector<std::pair<int, int>> cands = tg.tile_candidates();
    tiles.candidates = cands.size();
    auto write = [&] {
      json j = {{"tinyrt_tuning", 1},
                {"target", tg.name},
                {"measured_on", counted             ? "qemu (" + tg.cpu + "), executed instructions"
                                : !p.device.empty() ? "device: " + p.device
                                                    : cpu},
                {"measure", p.measure_key},
                {"threads", p.threads},
                {"weights", wname},
                {"precision", pname},
                {"gap_us", p.gap_us},
                {"models", models},
                {"candidates_measured", (int)tiles.complete},
                {"candidates", (int)tiles.candidates},
                {"seconds", clock.elapsed()},
                {"verified", verified},
                {"tiles", tiles.tiles.array()},
                {"winograd", wino.forms.array()}};
      if (splits.measured) j["task_splits"] = splits.splits.array();
      if (serial.measured) j["serial_models"] = serial.models;
      if (serial.threshold >= 0) j["serial_step_ops"] = serial.threshold;
      std::ofstream f(out);
      if (!(f << j.dump(1) << "\n")) throw std::runtime_error("cannot write " + out);
    };
    // Each stage measures with the file so far (its choices written).
    serial = tune_serial(p, models, rounds, tg.serial_step_ops, clock);
    write();
    p.tuning = out;
    if (p.winograd == "auto") wino = tune_winograd(p, models, rounds, clock);
    write();
    // Task splits follow the tiles when timed at more than one thread: the
    // tiles stop starting measurements at half of --minutes.
    const bool tune_split = !counted && p.threads > 1;
    Clock tile_clock = clock;
    if (tune_split) tile_clock.limit = minutes * 60 * 0.5;
    tiles = tune_tiles(p, models, rounds, margin, tile_clock, cands);
    write();
    if (tune_split) {
      splits = tune_splits(p, models, rounds, margin, clock);
      write();
    }
    p.tuning.clear();
    // Each model with the file against the tables, alternated (x86: three
    // rounds, the least of each side): a model the file slows by more than
    // 0.5 % (timed; any, counted) gives back its geometries to the tables,
    // and the threshold when the file changes how its steps run.
    const int vrounds = counted ? 1 : 3;
    const double slack = counted ? 0.0 : 0.005;
    for (const std::string &m : models) {
      const bool flips = serial.flips(m);
      if (!tiles.tiles.touches(m) && !wino.forms.touches(m) && !splits.splits.touches(m) && !flips) continue;
      Perf with_file = p;
      with_file.tuning = out;
      double base = p.total(m), tuned = 1e300;
      const int vruns = p.runs_for(base);
      for (int r = 0; r < vrounds; ++r) {
        base = std::min(base, p.total(m, vruns));
        tuned = std::min(tuned, with_file.total(m, vruns));
      }
      const bool keep = tuned <= base * (1 + slack);
      verified[m] = {{"builtin", base}, {"tuned", tuned}, {"kept", keep}};
      fprintf(stderr, "tinyrt-tune: check %s: %.6g -> %.6g %s (%.3f)%s (%.0f s)\n", m.c_str(), base, tuned, p.unit(),
              tuned / base, keep ? "" : ": slower, its geometries keep the tables", clock.elapsed());
      if (!keep) {
        tiles.tiles.drop_model(m);
        wino.forms.drop_model(m);
        splits.splits.drop_model(m);
        if (flips) serial.threshold = -1;
        write();
      }
    }
    write();
    printf(
        "tinyrt-tune: %zu of %zu geometries tuned, %zu of %zu candidates measured on every model; %zu of %zu 3x3 "
        "geometries with measured Winograd forms; %s; serial-step threshold %s; in %.0f s; GEMM steps as measured "
        "%.4g -> %.4g %s (%.3f, before the check) over %zu models: %s\n",
        tiles.tiles.list.size(), tiles.geometries, tiles.complete, tiles.candidates, wino.forms.list.size(),
        wino.geometries,
        splits.measured ? (std::to_string(splits.splits.list.size()) + " of " + std::to_string(splits.geometries) +
                           " geometries with a measured task split (" + std::to_string(splits.complete) + " of " +
                           std::to_string(splits.candidates) + " splits measured)")
                              .c_str()
                        : "task splits not measured",
        serial.threshold >= 0 ? std::to_string(serial.threshold).c_str()
        : serial.measured     ? "as the tables"
                              : "not measured",
        clock.elapsed(), tiles.before, tiles.after, p.unit(), tiles.before > 0 ? tiles.after / tiles.before : 1.0,
        models.size(), out.c_str());
    if ((tiles.out_of_time || wino.out_of_time) && tiles.complete < tiles.candidates)
      printf("tinyrt-tune: the time ran out after %zu candidates; more --minutes measure the rest\n", tiles.complete);
    if (tune_split && splits.complete < splits.candidates)
      printf("tinyrt-tune: the time ran out after %zu of %zu task splits; more --minutes measure the rest\n",
             splits.complete, splits.candidates);
  } catch (const tinyrt::CompileError &e) {
    fprintf(stderr, "tinyrt-tune: error: %s\n", e.what());
    return 2;
  } catch (const std::exception &e) {
    fprintf(stderr, "tinyrt-tune: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

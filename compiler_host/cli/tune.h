// tune.h — tinyrt-tune's stages (tune.cpp), each measuring one kind of
// choice the compiler makes, on whole models run by tinyrt-perf, in the
// order tinyrt-tune runs them:
//   tune_serial    the mean step size under which a model's steps run on
//                  the calling thread alone (timed, more than one thread);
//   tune_winograd  each 3x3 convolution geometry's Winograd forms against
//                  its direct form (--winograd off|f2|f4, per step);
//   tune_tiles     each GEMM geometry's register tile, float and int8
//                  (--gemm-tile);
//   tune_splits    each GEMM geometry's task split (--task-split: order
//                  and number of tasks, or the step on one thread; timed,
//                  more than one thread).
// Measurements alternate (every model under one variant, then under the
// next, round after round) so that a drifting machine weighs on all alike,
// and each figure is the least of its rounds. Costs are tinyrt-perf's
// median milliseconds on x86 (natively) or executed guest instructions
// under qemu on ARM (deterministic: one round).
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace tinyrt::tune {

using nlohmann::json;

// How every measurement runs: tinyrt-perf's path and the options all share.
struct Perf {
  std::string perf, target, measure_key;  // measure_key: "median_ms" | "guest_instructions"
  int runs = 20, threads = 1, lanes = 8;  // lanes: the target's floats per vector
  std::string winograd = "auto";          // the tuner's --winograd (auto | off)
  // The tuner's --weights and --precision, given to every run (the file
  // records them: driver/tuning.h).
  std::vector<std::string> codegen;
  // The tuning file so far: each stage measures with what the stages
  // before it chose (a forced --gemm-tile replaces its tiles).
  std::string tuning;
  bool verbose = false;  // print each tinyrt-perf command
  std::string device;    // tinyrt-perf --device: timed on a device
  int gap_us = 0;        // tinyrt-perf --gap-us: a pause before each timed run
  bool counted() const { return measure_key == "guest_instructions"; }
  const char *unit() const { return counted() ? "instructions" : "ms"; }
  // tinyrt-perf's --json object for `model` with `extra` options (its
  // --winograd replaces the tuner's); n_runs 0: `runs`. Throws with the
  // command and its output when it fails.
  json run(const std::string &model, const std::vector<std::string> &extra, int n_runs = 0) const;
  // The whole model's cost.
  double total(const std::string &model, int n_runs = 0) const;
  // Runs for about 0.4 s a measurement of a model that takes `ms`
  // (medians of small models over 20 runs drift by several percent).
  int runs_for(double ms) const;
};

// The time budget: no new measurement starts after `limit` seconds.
struct Clock {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double limit = 0;
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
  bool over() const { return elapsed() > limit; }
};

// What a stage tuned, as the file lists it, and which models' layers each
// entry came from (the check gives a slowed model's entries back).
template <class Key>
struct Entries {
  std::map<Key, json> list;
  std::map<std::string, std::set<Key>> of_model;
  void drop_model(const std::string &m) {
    for (const Key &k : of_model[m]) list.erase(k);
  }
  bool touches(const std::string &m) const {
    auto it = of_model.find(m);
    if (it == of_model.end()) return false;
    for (const Key &k : it->second)
      if (list.count(k)) return true;
    return false;
  }
  json array() const {
    json a = json::array();
    for (const auto &kv : list) a.push_back(kv.second);
    return a;
  }
};

// oc, row, ic, linear, and the tile list's kind ("float", "int8",
// "int8-bytes", "int16", "int8-signed-bytes", "int16-bytes"): Target::gemm_tile's arguments.
using TileKey = std::tuple<int64_t, int64_t, int64_t, bool, std::string>;
using WinogradKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;  // ic, oc, out_h, out_w, batch

struct TileResult {
  Entries<TileKey> tiles;
  size_t geometries = 0, candidates = 0, complete = 0;
  double before = 0, after = 0;  // the GEMM steps' summed cost, tables and tuned
  bool out_of_time = false;
};
TileResult tune_tiles(const Perf &p, const std::vector<std::string> &models, int rounds, double margin,
                      const Clock &clock, const std::vector<std::pair<int, int>> &candidates);

struct SplitResult {
  Entries<TileKey> splits;
  bool measured = false;  // timed, more than one thread, at least one candidate on every model
  size_t geometries = 0, candidates = 0, complete = 0;
  double before = 0, after = 0;  // the GEMM steps' (and their next steps') summed cost, rule and tuned
  bool out_of_time = false;
};
SplitResult tune_splits(const Perf &p, const std::vector<std::string> &models, int rounds, double margin,
                        const Clock &clock);

struct WinogradResult {
  Entries<WinogradKey> forms;
  size_t geometries = 0;  // measured in every form
  bool out_of_time = false;
};
WinogradResult tune_winograd(const Perf &p, const std::vector<std::string> &models, int rounds, const Clock &clock);

struct SerialResult {
  bool measured = false;   // timed, more than one thread, at least one model either way
  int64_t threshold = -1;  // the tuned Target::serial_step_ops (-1: the tables' stands)
  int64_t builtin = 0;
  json models = json::object();  // per model: mean step ops, parallel and serial cost
  // Whether the tuned threshold runs model m's steps otherwise than the tables'.
  bool flips(const std::string &m) const;
};
SerialResult tune_serial(const Perf &p, const std::vector<std::string> &models, int rounds, int64_t builtin,
                         const Clock &clock);

}  // namespace tinyrt::tune

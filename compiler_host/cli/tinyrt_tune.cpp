// tinyrt-tune: measures, on this machine, the float GEMM register tiles of
// the layers of one or more models and writes a tuning file keyed by layer
// geometry (driver/tuning.h) that tinyrt-compile, tinyrt-onnx-test and
// tinyrt-perf take with --tuning FILE.
//
// Each candidate tile (Target::tile_candidates, the target's own first) is
// forced on a whole model (tinyrt-perf --gemm-tile --profile --json), and
// every float GEMM step's cost is kept under its geometry (the JSON's
// gemm.tile_class): the median milliseconds over --runs runs on x86,
// natively; executed guest instructions under qemu for the ARM targets
// (deterministic: one run). Measurements alternate — every model's
// built-in choice, then each candidate on every model, round after round —
// so that a drifting machine weighs on all alike, and each figure is the
// smallest of its rounds. A geometry takes the candidate with the least
// cost summed over the layers and models that have it, when that is at
// least --margin below the built-in choice's; the others keep the tables.
// The candidates run in order for three quarters of --minutes. Then each
// model runs whole with the file and with the tables, alternated: one the
// file slows (by over 0.5 % timed, at all counted) gives its geometries back
// to the tables, so that no measured model gets slower.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "target/target.h"
#include "util/process.h"

namespace {

using nlohmann::json;
using Key = std::tuple<int64_t, int64_t, int64_t, bool>;  // oc, row, ic, linear (Target::gemm_tile)
using Tile = std::pair<int, int>;                         // mr, nv; {0, 0}: the built-in choice

std::string key_text(const Key &k) {
  return "oc " + std::to_string(std::get<0>(k)) + ", row " + std::to_string(std::get<1>(k)) + ", ic " +
         std::to_string(std::get<2>(k)) + (std::get<3>(k) ? ", linear" : "");
}

std::string self_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, (size_t)n);
  return p.substr(0, p.rfind('/'));
}

// One model measured with one tile: per geometry, its float GEMM steps
// and their summed cost, and the tile each took. (Keyed by geometry, not
// by step: a forced tile may change the Winograd choices, and so which
// steps there are; only geometries with as many steps as the built-in
// build's compare.)
struct Cost {
  int steps = 0;
  double cost = 0;
  Tile tile{0, 0};
};
using Measurement = std::map<Key, Cost>;

// tinyrt-perf's --json object (its last line starting with '{'; progress
// lines may come before it).
json run_perf(const std::vector<std::string> &argv) {
  tinyrt::ProcessResult r = tinyrt::run_process(argv);
  size_t at = r.output.rfind("\n{");
  at = at == std::string::npos ? r.output.find('{') : at + 1;
  json j = r.exit_code == 0 && at != std::string::npos ? json::parse(r.output.substr(at), nullptr, false) : json();
  if (r.exit_code != 0 || !j.is_object())
    throw std::runtime_error(tinyrt::shell_quote(argv) + " failed (" + std::to_string(r.exit_code) + "):\n" + r.output);
  return j;
}

struct Tuner {
  std::string perf, target, measure_key;
  int runs = 20, threads = 1;
  std::string winograd = "auto";

  std::vector<std::string> args(const std::string &model, int n_runs) const {
    return {perf,
            model,
            "--target",
            target,
            "--json",
            "--runs",
            std::to_string(n_runs),
            "--threads",
            std::to_string(threads),
            "--winograd",
            winograd};
  }

  Measurement measure(const std::string &model, Tile tile) const {
    std::vector<std::string> argv = args(model, runs);
    argv.push_back("--profile");
    if (tile.first)
      argv.insert(argv.end(), {"--gemm-tile", std::to_string(tile.first) + "," + std::to_string(tile.second)});
    json j = run_perf(argv);
    if (!j.contains("profile")) throw std::runtime_error("tinyrt-perf printed no profile for " + model);
    Measurement m;
    for (const json &row : j["profile"]) {
      if (row.value("family", "") != "gemm" || !row.contains("gemm") || !row["gemm"].contains("tile_class")) continue;
      const json &c = row["gemm"]["tile_class"];
      Cost &k = m[Key{c["oc"], c["row"], c["ic"], c["linear"]}];
      k.steps++;
      k.cost += row[measure_key].get<double>();
      k.tile = Tile{row["tile"]["mr"], row["tile"]["nr"].get<int>() / target_lanes};
    }
    return m;
  }

  // The whole model's cost (median ms, or instructions) compiled with the
  // tuning file `tuning` ("" for the built-in tables).
  double total(const std::string &model, const std::string &tuning, int n_runs = 0) const {
    std::vector<std::string> argv = args(model, n_runs > 0 ? n_runs : runs);
    if (!tuning.empty()) argv.insert(argv.end(), {"--tuning", tuning});
    json j = run_perf(argv);
    if (!j.contains(measure_key) || !j[measure_key].is_number())
      throw std::runtime_error("tinyrt-perf printed no " + measure_key + " for " + model);
    return j[measure_key].get<double>();
  }
  int target_lanes = 8;
};

}  // namespace

int main(int argc, char **argv) {
  CLI::App app{"tinyrt-tune: measure GEMM register tiles on this machine and write a tuning file (--tuning FILE)"};
  std::vector<std::string> models;
  std::string target = "host", out;
  double minutes = 5, margin = -1;
  int runs = 20, rounds = 2;
  Tuner t;
  app.add_option("models", models, "ONNX model files whose layers to tune")->required()->check(CLI::ExistingFile);
  app.add_option("--target", target, "host | x86-64-avx2 | x86-64-avx512[-vnni] | armv7-neon | aarch64-neon[-dot]")
      ->capture_default_str();
  app.add_option("--minutes", minutes, "time budget: no new measurement starts after it")
      ->check(CLI::Range(0.1, 1440.0))
      ->capture_default_str();
  app.add_option("-o,--output", out, "the tuning file to write")->required();
  app.add_option("--runs", runs, "timed runs per measurement on x86 (ARM counts one run)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--rounds", rounds, "measurements of each (model, tile) on x86, alternated; the least counts")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--threads", t.threads, "threads of the runtime pool while measuring")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--margin", margin,
                 "a tile replaces the tables' where it costs this fraction less (default 0.03 timed, 0.005 counted)");
  app.add_option("--winograd", t.winograd, "as tinyrt-compile (the Winograd GEMMs are tuned too)")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    tinyrt::Target tg = tinyrt::resolve_target(target);
    const bool counted = tg.name.rfind("x86", 0) != 0;  // ARM: instructions under qemu
    t.perf = self_dir() + "/tinyrt-perf";
    if (access(t.perf.c_str(), X_OK) != 0)
      throw std::runtime_error("tinyrt-perf not found beside tinyrt-tune: " + t.perf);
    t.target = target;
    t.target_lanes = tg.f32_lanes();
    t.measure_key = counted ? "guest_instructions" : "median_ms";
    t.runs = counted ? 1 : runs;
    if (counted) rounds = 1;
    if (margin < 0) margin = counted ? 0.005 : 0.03;
    std::vector<Tile> cands;
    for (auto c : tg.tile_candidates()) cands.push_back(c);

    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    // Three quarters of the time measure candidates; the rest (at least)
    // checks each model with the file against the tables.
    const double limit = minutes * 60 * 0.75;
    // best[model][tile]: per geometry, the least cost over the rounds.
    std::map<std::string, std::map<Tile, Measurement>> best;
    std::set<Tile> complete;  // tiles measured on every model
    const size_t total = (cands.size() + 1) * models.size() * (size_t)rounds;
    size_t done = 0;
    bool out_of_time = false;
    for (int round = 0; round < rounds && !out_of_time; ++round) {
      std::vector<Tile> order = {Tile{0, 0}};
      order.insert(order.end(), cands.begin(), cands.end());
      for (Tile tile : order) {
        for (const std::string &m : models) {
          if (elapsed() > limit && tile.first) {
            out_of_time = true;
            break;
          }
          Measurement r = t.measure(m, tile);
          ++done;
          Measurement &b = best[m][tile];
          double sum = 0;
          for (const auto &kc : r) {
            sum += kc.second.cost;
            auto it = b.find(kc.first);
            if (it == b.end())
              b[kc.first] = kc.second;
            else if (it->second.steps == kc.second.steps)
              it->second.cost = std::min(it->second.cost, kc.second.cost);
          }
          fprintf(stderr, "tinyrt-tune: [%zu/%zu] %s tile %s: GEMM steps %.6g %s (%.0f of %.0f s)\n", done, total,
                  m.c_str(),
                  tile.first ? (std::to_string(tile.first) + "," + std::to_string(tile.second)).c_str() : "built-in",
                  sum, counted ? "instructions" : "ms", elapsed(), limit);
        }
        if (out_of_time) break;
        if (tile.first) complete.insert(tile);
      }
    }

    // Per geometry: the built-in tile's cost and each complete candidate's,
    // summed over the models whose steps of that geometry it measured.
    struct Sum {
      Tile builtin{0, 0};
      int steps = 0;
      double builtin_cost = 0;
      std::map<Tile, double> cost;
      std::set<Tile> partial;  // a model without as many steps of this geometry
    };
    std::map<Key, Sum> sums;
    for (auto &mb : best) {
      const Measurement &base = mb.second[Tile{0, 0}];
      for (const auto &kc : base) {
        Sum &s = sums[kc.first];
        s.builtin = kc.second.tile;
        s.steps += kc.second.steps;
        s.builtin_cost += kc.second.cost;
        for (Tile c : complete) {
          const Measurement &v = mb.second[c];
          auto it = v.find(kc.first);
          if (it == v.end() || it->second.steps != kc.second.steps)
            s.partial.insert(c);
          else
            s.cost[c] += it->second.cost;
        }
      }
    }
    std::map<Key, json> tiles;  // the geometries tuned, as the file lists them
    double before = 0, after = 0;
    for (const auto &ks : sums) {
      const Sum &s = ks.second;
      Tile pick{0, 0};
      double pick_cost = s.builtin_cost;
      for (const auto &c : s.cost)
        if (c.first != s.builtin && !s.partial.count(c.first) && c.second < pick_cost)
          pick = c.first, pick_cost = c.second;
      before += s.builtin_cost;
      if (!pick.first || pick_cost > (1 - margin) * s.builtin_cost) {
        after += s.builtin_cost;
        // The best other tile, for the log.
        Tile other{0, 0};
        double other_cost = 0;
        for (const auto &c : s.cost)
          if (c.first != s.builtin && !s.partial.count(c.first) && (!other.first || c.second < other_cost))
            other = c.first, other_cost = c.second;
        if (other.first && s.builtin_cost > 0)
          fprintf(stderr, "tinyrt-tune: %s: keeps %dx%d (the best other, %dx%d, %.3f of its cost over %d steps)\n",
                  key_text(ks.first).c_str(), s.builtin.first, s.builtin.second, other.first, other.second,
                  other_cost / s.builtin_cost, s.steps);
        continue;
      }
      after += pick_cost;
      const Key &k = ks.first;
      tiles[k] = json({{"kind", "float"},
                       {"oc", std::get<0>(k)},
                       {"row", std::get<1>(k)},
                       {"ic", std::get<2>(k)},
                       {"linear", std::get<3>(k)},
                       {"mr", pick.first},
                       {"nv", pick.second},
                       {"builtin", {s.builtin.first, s.builtin.second}},
                       {"steps", s.steps},
                       {"cost", pick_cost},
                       {"builtin_cost", s.builtin_cost}});
      fprintf(stderr, "tinyrt-tune: %s: %dx%d instead of %dx%d, %.3f of its cost over %d steps\n", key_text(k).c_str(),
              pick.first, pick.second, s.builtin.first, s.builtin.second, pick_cost / s.builtin_cost, s.steps);
    }
    std::string cpu = "unknown";
    {
      std::ifstream f("/proc/cpuinfo");
      std::string line;
      while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
          cpu = line.substr(line.find(':') + 2);
          break;
        }
    }
    json verified = json::object();
    auto write = [&] {
      json list = json::array();
      for (const auto &kt : tiles) list.push_back(kt.second);
      json j = {{"tinyrt_tuning", 1},
                {"target", tg.name},
                {"measured_on", counted ? "qemu (" + tg.cpu + "), executed instructions" : cpu},
                {"measure", t.measure_key},
                {"models", models},
                {"candidates_measured", (int)complete.size()},
                {"candidates", (int)cands.size()},
                {"seconds", elapsed()},
                {"verified", verified},
                {"tiles", list}};
      std::ofstream f(out);
      if (!(f << j.dump(1) << "\n")) throw std::runtime_error("cannot write " + out);
    };
    write();
    // Each model with the file against the tables, alternated (x86: three
    // rounds, the least of each side): a model the file slows by more than
    // 0.5 % (timed; any, counted) gives back its geometries to the tables.
    // Timed: runs enough for about 0.4 s a measurement (small models'
    // medians over 20 runs drift by several percent), a 0.5 % slack.
    const int vrounds = counted ? 1 : 3;
    const double slack = counted ? 0.0 : 0.005;
    for (const std::string &m : models) {
      bool touched = false;
      for (const auto &kc : best[m][Tile{0, 0}]) touched |= tiles.count(kc.first) > 0;
      if (!touched) continue;
      double base = t.total(m, ""), tuned = 1e300;
      const int vruns = counted ? 1 : (int)std::min(5000.0, std::max((double)t.runs, 400.0 / std::max(base, 1e-3)));
      for (int r = 0; r < vrounds; ++r) {
        base = std::min(base, t.total(m, "", vruns));
        tuned = std::min(tuned, t.total(m, out, vruns));
      }
      const bool keep = tuned <= base * (1 + slack);
      verified[m] = {{"builtin", base}, {"tuned", tuned}, {"kept", keep}};
      fprintf(stderr, "tinyrt-tune: check %s: %.6g -> %.6g %s (%.3f)%s (%.0f s)\n", m.c_str(), base, tuned,
              counted ? "instructions" : "ms", tuned / base, keep ? "" : ": slower, its geometries keep the tables",
              elapsed());
      if (!keep) {
        for (const auto &kc : best[m][Tile{0, 0}]) tiles.erase(kc.first);
        write();
      }
    }
    write();
    printf(
        "tinyrt-tune: %zu of %zu geometries tuned, %zu of %zu candidates measured on every model in %.0f s; GEMM "
        "steps as measured %.4g -> %.4g %s (%.3f, before the check) over %zu models: %s\n",
        tiles.size(), sums.size(), complete.size(), cands.size(), elapsed(), before, after,
        counted ? "instructions" : "ms", before > 0 ? after / before : 1.0, models.size(), out.c_str());
    if (out_of_time && complete.size() < cands.size())
      printf("tinyrt-tune: the time ran out after %zu candidates; more --minutes measure the rest\n", complete.size());
  } catch (const tinyrt::CompileError &e) {
    fprintf(stderr, "tinyrt-tune: error: %s\n", e.what());
    return 2;
  } catch (const std::exception &e) {
    fprintf(stderr, "tinyrt-tune: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

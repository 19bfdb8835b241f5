#include "tune.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <stdexcept>

#include "driver/tuning.h"
#include "util/process.h"

namespace tinyrt::tune {

json Perf::run(const std::string &model, const std::vector<std::string> &extra, int n_runs) const {
  std::vector<std::string> argv = {perf,
                                   model,
                                   "--target",
                                   target,
                                   "--json",
                                   "--runs",
                                   std::to_string(n_runs > 0 ? n_runs : runs),
                                   "--threads",
                                   std::to_string(threads)};
  if (std::find(extra.begin(), extra.end(), "--winograd") == extra.end())
    argv.insert(argv.end(), {"--winograd", winograd});
  argv.insert(argv.end(), codegen.begin(), codegen.end());
  if (!tuning.empty()) argv.insert(argv.end(), {"--tuning", tuning});
  if (!device.empty()) argv.insert(argv.end(), {"--device", device});
  if (gap_us > 0) argv.insert(argv.end(), {"--gap-us", std::to_string(gap_us)});
  argv.insert(argv.end(), extra.begin(), extra.end());
  if (verbose) fprintf(stderr, "tinyrt-tune: running %s\n", shell_quote(argv).c_str());
  ProcessResult r = run_process(argv);
  // The JSON is the last line starting with '{' (progress lines may come before it).
  size_t at = r.output.rfind("\n{");
  at = at == std::string::npos ? r.output.find('{') : at + 1;
  json j = r.exit_code == 0 && at != std::string::npos ? json::parse(r.output.substr(at), nullptr, false) : json();
  if (r.exit_code != 0 || !j.is_object())
    throw std::runtime_error(shell_quote(argv) + " failed (" + std::to_string(r.exit_code) + "):\n" + r.output);
  if (!j.contains(measure_key) || !j[measure_key].is_number())
    throw std::runtime_error("tinyrt-perf printed no " + measure_key + " for " + model);
  return j;
}

double Perf::total(const std::string &model, int n_runs) const {
  return run(model, {}, n_runs)[measure_key].get<double>();
}

int Perf::runs_for(double ms) const {
  return counted() ? 1 : (int)std::min(5000.0, std::max((double)runs, 400.0 / std::max(ms + gap_us * 1e-3, 1e-3)));
}

namespace {

// Keeps, key by key, the least cost of a measurement and those before it
// (entries that `same` says do not compare keep the first); returns the
// measurement's summed cost.
template <class Map, class Same>
double keep_least(Map &best, const Map &measured, Same same) {
  double sum = 0;
  for (const auto &kv : measured) {
    sum += kv.second.cost;
    auto it = best.find(kv.first);
    if (it == best.end())
      best[kv.first] = kv.second;
    else if (same(it->second, kv.second))
      it->second.cost = std::min(it->second.cost, kv.second.cost);
  }
  return sum;
}

// ---- GEMM variants: tiles and task splits ---------------------------------

std::string key_text(const TileKey &k) {
  const std::string &kind = std::get<4>(k);
  return (kind == "float" ? "" : kind + ": ") + "oc " + std::to_string(std::get<0>(k)) + ", row " +
         std::to_string(std::get<1>(k)) + ", ic " + std::to_string(std::get<2>(k)) + (std::get<3>(k) ? ", linear" : "");
}

// One model built with one variant forced on every GEMM (`option` VARIANT;
// "": the built-in choices): per geometry (and tile kind: float and int8
// GEMMs choose from their own lists), its GEMM steps and their summed cost
// (with_next: each with the step after it, which reads what the GEMM
// wrote from where its tasks left it), and the variant the steps took
// (`taken` of a profile row). Keyed by geometry, not by step: a forced
// variant may change the Winograd choices, and so which steps there are;
// only geometries with as many steps as the built-in build's compare.
struct Cost {
  int steps = 0;
  double cost = 0;
  std::string taken;
};
using Measurement = std::map<TileKey, Cost>;

struct Variants {
  const char *stage;   // "tiles", "splits": the progress lines' name
  std::string option;  // "--gemm-tile", "--task-split"
  std::vector<std::string> candidates;
  bool with_next = false;
  std::string (*taken)(const json &row, const Perf &p);
};

Measurement measure_gemms(const Perf &p, const std::string &model, const Variants &v, const std::string &variant) {
  std::vector<std::string> extra = {"--profile"};
  if (!variant.empty()) extra.insert(extra.end(), {v.option, variant});
  json j = p.run(model, extra);
  if (!j.contains("profile")) throw std::runtime_error("tinyrt-perf printed no profile for " + model);
  const json &rows = j["profile"];
  Measurement m;
  for (size_t i = 0; i < rows.size(); ++i) {
    const json &row = rows[i];
    const std::string family = row.value("family", "");
    if ((family != "gemm" && family != "qgemm") || !row.contains("gemm") || !row["gemm"].contains("tile_class"))
      continue;
    const json &c = row["gemm"]["tile_class"];
    Cost &k = m[TileKey{c["oc"], c["row"], c["ic"], c["linear"], c.value("kind", "float")}];
    k.steps++;
    k.cost += row[p.measure_key].get<double>();
    if (v.with_next && i + 1 < rows.size()) k.cost += rows[i + 1][p.measure_key].get<double>();
    k.taken = v.taken(row, p);
  }
  return m;
}

// Per geometry: the built-in build's cost and variant, and each variant's
// cost measured on every model, summed over the models whose steps of that
// geometry it measured.
struct Sum {
  std::string builtin;
  int steps = 0;
  double builtin_cost = 0;
  std::map<std::string, double> cost;
  std::set<std::string> partial;  // a model without as many steps of this geometry
  // The least-cost variant other than the built-in one ("" when none was
  // measured on every model) and its cost.
  std::pair<std::string, double> best() const {
    std::pair<std::string, double> b{"", 0};
    for (const auto &c : cost)
      if (c.first != builtin && !partial.count(c.first) && (b.first.empty() || c.second < b.second)) b = c;
    return b;
  }
};

// Each candidate forced on every model, alternated round after round with
// the built-in choices (again after every 8 candidates: their least cost
// is not left to one measurement at the start); every GEMM step's cost
// kept under its geometry, the least over the rounds. `of_model` gets the
// geometries each model has.
std::map<TileKey, Sum> measure_variants(const Perf &p, const std::vector<std::string> &models, int rounds,
                                        const Clock &clock, const Variants &v, bool *out_of_time, size_t *complete_n,
                                        std::map<std::string, std::set<TileKey>> *of_model) {
  const std::vector<std::string> &cands = v.candidates;
  // best[model][variant]: per geometry, the least cost over the rounds.
  std::map<std::string, std::map<std::string, Measurement>> best;
  std::set<std::string> complete;  // variants measured on every model
  const size_t total =
      (cands.size() + 1 + (cands.empty() ? 0 : (cands.size() - 1) / 8)) * models.size() * (size_t)rounds;
  size_t done = 0;
  *out_of_time = false;
  for (int round = 0; round < rounds && !*out_of_time; ++round) {
    std::vector<std::string> order = {""};
    for (size_t i = 0; i < cands.size(); ++i) {
      order.push_back(cands[i]);
      if (i % 8 == 7 && i + 1 < cands.size()) order.push_back("");
    }
    for (const std::string &variant : order) {
      for (const std::string &m : models) {
        if (clock.over() && !variant.empty()) {
          *out_of_time = true;
          break;
        }
        Measurement r = measure_gemms(p, m, v, variant);
        ++done;
        // (A geometry whose step count changed does not compare.)
        const double sum =
            keep_least(best[m][variant], r, [](const Cost &x, const Cost &y) { return x.steps == y.steps; });
        fprintf(stderr, "tinyrt-tune: %s [%zu/%zu] %s %s %s: GEMM steps %.6g %s (%.0f of %.0f s)\n", v.stage, done,
                total, m.c_str(), v.option.c_str() + 2, variant.empty() ? "built-in" : variant.c_str(), sum, p.unit(),
                clock.elapsed(), clock.limit);
      }
      if (*out_of_time) break;
      if (!variant.empty() && round == 0) complete.insert(variant);
    }
  }
  *complete_n = complete.size();
  std::map<TileKey, Sum> sums;
  for (auto &mb : best) {
    const Measurement &base = mb.second[""];
    for (const auto &kc : base) {
      (*of_model)[mb.first].insert(kc.first);
      Sum &s = sums[kc.first];
      s.builtin = kc.second.taken;
      s.steps += kc.second.steps;
      s.builtin_cost += kc.second.cost;
      for (const std::string &c : complete) {
        const Measurement &vm = mb.second[c];
        auto it = vm.find(kc.first);
        if (it == vm.end() || it->second.steps != kc.second.steps)
          s.partial.insert(c);
        else
          s.cost[c] += it->second.cost;
      }
    }
  }
  return sums;
}

// Per geometry the best other variant, taken (`take`) where it costs at
// least `margin` less than the built-in one, else kept (`keep`, given the
// best other for the log; not called when none was measured). `before` and
// `after` sum the built-in and the chosen costs.
using Pick = std::pair<std::string, double>;
void choose(const std::map<TileKey, Sum> &sums, double margin, double *before, double *after,
            const std::function<void(const TileKey &, const Sum &, const Pick &)> &keep,
            const std::function<void(const TileKey &, const Sum &, const Pick &)> &take) {
  for (const auto &ks : sums) {
    const Sum &s = ks.second;
    const Pick pick = s.best();
    *before += s.builtin_cost;
    if (!pick.first.empty() && pick.second <= (1 - margin) * s.builtin_cost) {
      *after += pick.second;
      take(ks.first, s, pick);
    } else {
      *after += s.builtin_cost;
      if (!pick.first.empty() && s.builtin_cost > 0) keep(ks.first, s, pick);
    }
  }
}

json geometry_json(const TileKey &k) {
  return {{"kind", std::get<4>(k)},
          {"oc", std::get<0>(k)},
          {"row", std::get<1>(k)},
          {"ic", std::get<2>(k)},
          {"linear", std::get<3>(k)}};
}

}  // namespace

// Each candidate tile is forced on every model (tinyrt-perf --gemm-tile
// --profile: float and int8 GEMMs alike) and every GEMM step's cost kept
// under its geometry and kind (the JSON's gemm.tile_class). A geometry takes the candidate with the
// least cost summed over the layers and models that have it, when that is
// at least `margin` below the built-in choice's.
TileResult tune_tiles(const Perf &p, const std::vector<std::string> &models, int rounds, double margin,
                      const Clock &clock, const std::vector<std::pair<int, int>> &candidates) {
  TileResult res;
  res.candidates = candidates.size();
  Variants v{"tiles", "--gemm-tile", {}, false, [](const json &row, const Perf &pf) {
               return std::to_string(row["tile"]["mr"].get<int>()) + "," +
                      std::to_string(row["tile"]["nr"].get<int>() / pf.lanes);
             }};
  for (auto [mr, nv] : candidates) v.candidates.push_back(std::to_string(mr) + "," + std::to_string(nv));
  const std::map<TileKey, Sum> sums =
      measure_variants(p, models, rounds, clock, v, &res.out_of_time, &res.complete, &res.tiles.of_model);
  res.geometries = sums.size();
  auto tile_of = [](const std::string &t) {
    int mr = 0, nv = 0;
    sscanf(t.c_str(), "%d,%d", &mr, &nv);
    return std::pair<int, int>{mr, nv};
  };
  choose(
      sums, margin, &res.before, &res.after,
      [&](const TileKey &k, const Sum &s, const Pick &pick) {
        const auto [bmr, bnv] = tile_of(s.builtin);
        const auto [omr, onv] = tile_of(pick.first);
        fprintf(stderr, "tinyrt-tune: %s: keeps %dx%d (the best other, %dx%d, %.3f of its cost over %d steps)\n",
                key_text(k).c_str(), bmr, bnv, omr, onv, pick.second / s.builtin_cost, s.steps);
      },
      [&](const TileKey &k, const Sum &s, const Pick &pick) {
        const auto [bmr, bnv] = tile_of(s.builtin);
        const auto [mr, nv] = tile_of(pick.first);
        json e = geometry_json(k);
        e.update({{"mr", mr},
                  {"nv", nv},
                  {"builtin", {bmr, bnv}},
                  {"steps", s.steps},
                  {"cost", pick.second},
                  {"builtin_cost", s.builtin_cost}});
        res.tiles.list[k] = e;
        fprintf(stderr, "tinyrt-tune: %s: %dx%d instead of %dx%d, %.3f of its cost over %d steps\n",
                key_text(k).c_str(), mr, nv, bmr, bnv, pick.second / s.builtin_cost, s.steps);
      });
  return res;
}

const std::vector<std::string> &split_candidates() {
  static const std::vector<std::string> c = {"pixels,16",   "pixels,64",    "pixels,256", "channels,16",
                                             "channels,64", "channels,256", "serial"};
  return c;
}

// Each candidate split is forced on every model (tinyrt-perf --task-split
// --profile) at the tuner's threads, and every GEMM step's cost, with the
// step after it, kept under its geometry: the order decides which core's
// cache holds what the GEMM wrote when the next step reads it. A geometry
// takes the least-cost split when it is at least `margin` below the rule's.
SplitResult tune_splits(const Perf &p, const std::vector<std::string> &models, int rounds, double margin,
                        const Clock &clock) {
  SplitResult res;
  if (p.counted() || p.threads < 2) return res;
  Variants v{"splits", "--task-split", split_candidates(), true,
             [](const json &row, const Perf &) { return row["gemm"].value("task_split", std::string("rule")); }};
  res.candidates = v.candidates.size();
  const std::map<TileKey, Sum> sums =
      measure_variants(p, models, rounds, clock, v, &res.out_of_time, &res.complete, &res.splits.of_model);
  res.measured = res.complete > 0;
  res.geometries = sums.size();
  choose(
      sums, margin, &res.before, &res.after,
      [&](const TileKey &k, const Sum &s, const Pick &pick) {
        fprintf(stderr,
                "tinyrt-tune: %s: keeps the rule's split (the best other, %s, %.3f of its cost over %d steps)\n",
                key_text(k).c_str(), pick.first.c_str(), pick.second / s.builtin_cost, s.steps);
      },
      [&](const TileKey &k, const Sum &s, const Pick &pick) {
        json e = geometry_json(k);
        e.update({{"split", pick.first}, {"steps", s.steps}, {"cost", pick.second}, {"builtin_cost", s.builtin_cost}});
        res.splits.list[k] = e;
        fprintf(stderr,
                "tinyrt-tune: %s: split %s instead of the rule's, %.3f of its cost (with the next steps) over %d "
                "steps\n",
                key_text(k).c_str(), pick.first.c_str(), pick.second / s.builtin_cost, s.steps);
      });
  return res;
}

// ---- Winograd forms ------------------------------------------------------

namespace {

// One model built with one --winograd mode: per 3x3 convolution (its
// first ONNX node), its geometry, the summed cost of its steps (direct: one;
// a form: input transform, product, output transform, per band or chunk)
// and whether it ran as Winograd.
struct ConvCost {
  WinogradKey key{};
  double cost = 0;
  bool winograd = false;
};
using ConvCosts = std::map<std::string, ConvCost>;

ConvCosts measure_convs(const Perf &p, const std::string &model, const std::string &mode) {
  json j = p.run(model, {"--profile", "--winograd", mode});
  if (!j.contains("profile")) throw std::runtime_error("tinyrt-perf printed no profile for " + model);
  // Steps of a convolution share its nodes; one of them (the direct step
  // or the input transform) carries its geometry.
  ConvCosts convs;
  std::map<std::string, double> cost_of_node;
  for (const json &row : j["profile"]) {
    if (!row.contains("nodes") || row["nodes"].empty()) continue;
    const std::string node = row["nodes"][0];
    cost_of_node[node] += row[p.measure_key].get<double>();
    if (row.contains("winograd_class")) {
      const json &c = row["winograd_class"];
      ConvCost &cc = convs[node];
      cc.key = WinogradKey{c["ic"], c["oc"], c["out_h"], c["out_w"], c["batch"]};
      cc.winograd = cc.winograd || row.value("family", "") == "winograd_in";
    }
  }
  for (auto &kv : convs) kv.second.cost = cost_of_node[kv.first];
  return convs;
}

// Direct, then the forms in Target::TunedWinograd's order.
constexpr int kModeCount = 5;
const char *const kModes[kModeCount] = {"off", "f2", "f4", "f2rt", "f4rt"};

}  // namespace

// Every model is built with --winograd off, f2, f4, f2rt and f4rt (each
// form forced on every eligible convolution, not budgeted; the rt forms
// transform the weights at run time in chunks of 16 output channels) and
// each convolution's steps are timed (--profile). Per geometry, the
// forms' cost over the direct form's, summed over the convolutions of that
// geometry in all models: the compiler takes these ratios instead of its
// estimate (passes/winograd.cpp), so that budgets still choose among the
// forms.
WinogradResult tune_winograd(const Perf &p, const std::vector<std::string> &models, int rounds, const Clock &clock) {
  WinogradResult res;
  // best[mode][model]: per convolution, the least cost over the rounds.
  std::map<std::string, ConvCosts> best[kModeCount];
  const size_t total = kModeCount * models.size() * (size_t)rounds;
  size_t done = 0;
  std::set<std::string> complete;  // models measured in every mode
  for (int round = 0; round < rounds && !res.out_of_time; ++round) {
    for (const std::string &m : models) {
      // A model without a 3x3 convolution is measured once.
      if (round > 0 && best[0][m].empty()) continue;
      for (int mode = 0; mode < kModeCount && !res.out_of_time; ++mode) {
        if (clock.over()) {
          res.out_of_time = true;
          break;
        }
        ConvCosts c = measure_convs(p, m, kModes[mode]);
        ++done;
        const double sum = keep_least(best[mode][m], c, [](const ConvCost &, const ConvCost &) { return true; });
        fprintf(stderr,
                "tinyrt-tune: winograd [%zu/%zu] %s --winograd %s: %zu 3x3 convolutions %.6g %s (%.0f of %.0f s)\n",
                done, total, m.c_str(), kModes[mode], c.size(), sum, p.unit(), clock.elapsed(), clock.limit);
        if (mode == 0 && c.empty()) break;
        if (mode == kModeCount - 1 && round == 0) complete.insert(m);
      }
    }
  }
  // Per geometry: the direct and forms' costs summed over the convolutions
  // that ran direct in the off build and as Winograd in the forms' builds
  // (a form some convolution of the geometry did not take, as an rt form
  // where it cannot apply, is left out).
  struct Sum {
    double cost[kModeCount] = {};
    bool missing[kModeCount] = {};
    int convs = 0;
  };
  std::map<WinogradKey, Sum> sums;
  for (const std::string &m : complete) {
    for (const auto &kv : best[0][m]) {
      const ConvCost &d = kv.second;
      if (d.winograd || d.cost <= 0) continue;
      Sum &s = sums[d.key];
      s.cost[0] += d.cost;
      s.convs++;
      for (int mode = 1; mode < kModeCount; ++mode) {
        auto f = best[mode][m].find(kv.first);
        if (f == best[mode][m].end() || !f->second.winograd)
          s.missing[mode] = true;
        else
          s.cost[mode] += f->second.cost;
      }
      res.forms.of_model[m].insert(d.key);
    }
  }
  for (const auto &ks : sums) {
    const auto &[ic, oc, h, w, batch] = ks.first;
    const Sum &s = ks.second;
    json e = {{"ic", ic},
              {"oc", oc},
              {"out_h", h},
              {"out_w", w},
              {"batch", batch},
              {"convs", s.convs},
              {"direct_cost", s.cost[0]}};
    std::string text;
    for (int mode = 1; mode < kModeCount; ++mode) {
      if (s.missing[mode]) continue;
      e[kModes[mode]] = s.cost[mode] / s.cost[0];
      char buf[64];
      snprintf(buf, sizeof buf, "%s%s %.3f", text.empty() ? "" : ", ", kModes[mode], s.cost[mode] / s.cost[0]);
      text += buf;
    }
    if (text.empty()) continue;  // no form measured
    res.forms.list[ks.first] = e;
    fprintf(stderr, "tinyrt-tune: 3x3 %lld->%lld at %lldx%lld: %s of direct over %d convolutions\n", (long long)ic,
            (long long)oc, (long long)h, (long long)w, text.c_str(), s.convs);
  }
  res.geometries = res.forms.list.size();
  return res;
}

// ---- The serial-step threshold -------------------------------------------

bool SerialResult::flips(const std::string &m) const {
  if (threshold < 0 || !models.contains(m)) return false;
  const double ops = models[m]["mean_step_ops"];
  return (ops < (double)threshold) != (ops < (double)builtin);
}

// Every model runs whole with its steps shared by the threads
// (--serial-step-ops 0) and on the calling thread alone (a threshold no
// model reaches); a model that stays shared (a recurrent one) does not
// count. The threshold is driver/tuning.h's choose_serial_threshold: the
// one that costs the models least, none more than 2 % slower than the
// tables run it.
SerialResult tune_serial(const Perf &p, const std::vector<std::string> &models, int rounds, int64_t builtin,
                         const Clock &clock) {
  SerialResult res;
  res.builtin = builtin;
  if (p.counted() || p.threads < 2) return res;
  struct Two {
    double ops = 0, cost[2] = {1e300, 1e300};  // shared, serial
    int runs = 0;
  };
  std::map<std::string, Two> two;
  const char *const kWays[2] = {"0", "1000000000000000"};
  const size_t total = 2 * models.size() * (size_t)rounds;
  size_t done = 0;
  for (int round = 0; round < rounds && !clock.over(); ++round) {
    for (const std::string &m : models) {
      // On one thread first: a model that shares its steps whatever the
      // threshold is dropped before its shared run.
      for (int way : {1, 0}) {
        if (clock.over() || (round > 0 && !two.count(m))) break;
        Two &t = two[m];
        // Runs for about 0.4 s a measurement, from a first untimed one.
        if (!t.runs) t.runs = p.runs_for(p.total(m));
        json j = p.run(m, {"--serial-step-ops", kWays[way]}, t.runs);
        ++done;
        if (way == 1 && !j.value("steps_serial", false)) {
          two.erase(m);
          break;
        }
        t.ops = j["mean_step_ops"];
        t.cost[way] = std::min(t.cost[way], j[p.measure_key].get<double>());
        fprintf(stderr, "tinyrt-tune: serial [%zu/%zu] %s %s: %.6g ms (%.3g operations a step; %.0f of %.0f s)\n", done,
                total, m.c_str(), way ? "on one thread" : "shared", j[p.measure_key].get<double>(), t.ops,
                clock.elapsed(), clock.limit);
      }
    }
  }
  std::vector<SerialPoint> pts;
  for (const auto &kv : two) {
    const Two &t = kv.second;
    if (t.cost[0] >= 1e300 || t.cost[1] >= 1e300) continue;
    pts.push_back({t.ops, t.cost[0], t.cost[1]});
    res.models[kv.first] = {{"mean_step_ops", t.ops}, {"shared", t.cost[0]}, {"serial", t.cost[1]}};
  }
  if (pts.empty()) return res;
  res.measured = true;
  double cost = 0, builtin_cost = 0;
  const int64_t th = choose_serial_threshold(pts, builtin, 0.02, &cost, &builtin_cost);
  if (th != builtin) res.threshold = th;
  fprintf(stderr,
          "tinyrt-tune: serial threshold %lld operations a step (tables: %lld): %zu models cost %.4g of their faster "
          "way in all (tables: %.4g)\n",
          (long long)th, (long long)builtin, pts.size(), cost / (double)pts.size(), builtin_cost / (double)pts.size());
  return res;
}

}  // namespace tinyrt::tune

#include "driver/tuning.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace tinyrt {

void apply_tuning(const std::string &text, const std::string &path, Target &t, WeightStorage weights,
                  Precision precision) {
  using nlohmann::json;
  auto bad = [&](const std::string &why) { fail_usage("--tuning " + path + ": " + why); };
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) bad("not a JSON object (a file tinyrt-tune writes)");
  if (!j.contains("tinyrt_tuning") || j["tinyrt_tuning"] != 1) bad("not a tinyrt tuning file (version 1)");
  if (!j.contains("target") || !j["target"].is_string()) bad("no \"target\"");
  const std::string target = j["target"];
  if (target != t.name) bad("tuned for " + target + ", not for " + t.name + " (tinyrt-tune --target " + t.name + ")");
  // What it was measured with (files of older tuners: float weights, float products).
  auto measured_with = [&](const char *key, const char *asked) {
    const std::string v = j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "fp32";
    if (j.contains(key) && !j[key].is_string()) bad(std::string("\"") + key + "\" is not \"fp32\" or \"fp16\"");
    if (v != "fp32" && v != "fp16") bad(std::string("\"") + key + "\" is \"" + v + "\", not \"fp32\" or \"fp16\"");
    if (v != asked)
      bad(std::string("measured with --") + key + " " + v + ", not for --" + key + " " + asked + " (tinyrt-tune --" +
          key + " " + asked + ")");
  };
  measured_with("weights", weight_storage_name(weights));
  measured_with("precision", precision_name(precision));
  if (!j.contains("tiles") || !j["tiles"].is_array()) bad("no \"tiles\" list");
  auto integer = [&](const json &e, const std::string &at, const char *k, int64_t lo, int64_t hi) -> int64_t {
    if (!e.is_object() || !e.contains(k) || !e[k].is_number_integer()) bad(at + ": no integer \"" + k + "\"");
    int64_t v = e[k];
    if (v < lo || v > hi)
      bad(at + ": \"" + k + "\" " + std::to_string(v) + " outside [" + std::to_string(lo) + ", " + std::to_string(hi) +
          "]");
    return v;
  };
  // A tile's or a split's layer geometry.
  auto geometry = [&](const json &e, const std::string &at) {
    Target::TileClass gm{};
    if (!e.is_object() || !e.contains("kind") || !e["kind"].is_string() ||
        !Target::tile_kind_of(e["kind"].get<std::string>(), &gm.kind))
      bad(at +
          ": \"kind\" must be \"float\", \"int8\", \"int8-bytes\", \"int16\", \"int8-signed-bytes\" or "
          "\"int16-bytes\"");
    if (!e.contains("linear") || !e["linear"].is_boolean()) bad(at + ": no boolean \"linear\"");
    gm.oc = integer(e, at, "oc", 1, INT32_MAX);
    gm.row = integer(e, at, "row", 1, INT32_MAX);
    gm.ic = integer(e, at, "ic", 1, INT32_MAX);
    gm.linear = e["linear"].get<bool>();
    return gm;
  };
  // fn(entry, "KEY[i]") for each entry of the list `key` (when present).
  auto each = [&](const char *key, const std::function<void(const json &, const std::string &)> &fn) {
    if (!j.contains(key)) return;
    if (!j[key].is_array()) bad(std::string("\"") + key + "\" is not a list");
    size_t n = 0;
    for (const json &e : j[key]) fn(e, std::string(key) + "[" + std::to_string(n++) + "]");
  };
  t.tuned_tiles.clear();
  each("tiles", [&](const json &e, const std::string &at) {
    Target::TunedTile tt{geometry(e, at), (int)integer(e, at, "mr", 1, 32), (int)integer(e, at, "nv", 1, 8)};
    if (!t.tile_fits(tt.mr, tt.nv))
      bad(at + ": tile " + std::to_string(tt.mr) + "x" + std::to_string(tt.nv) + " needs more than the " +
          std::to_string(t.vector_regs) + " vector registers of " + t.name);
    t.tuned_tiles.push_back(tt);
  });
  // Optional (files of older tuners, or measured at one thread, have none).
  t.tuned_splits.clear();
  each("task_splits", [&](const json &e, const std::string &at) {
    const Target::TileClass gm = geometry(e, at);
    TaskSplit split;
    if (!e.contains("split") || !e["split"].is_string() || !parse_task_split(e["split"].get<std::string>(), &split))
      bad(at + ": \"split\" is not ORDER[,TASKS] (pixels, channels, serial or rule; TASKS 1-4096)");
    t.tuned_splits.push_back({gm, split});
  });
  // Optional (files of older tuners have neither).
  t.tuned_winograd.clear();
  each("winograd", [&](const json &e, const std::string &at) {
    auto num = [&](const char *k) -> int64_t {
      if (!e.is_object() || !e.contains(k) || !e[k].is_number_integer() || e[k].get<int64_t>() < 1 ||
          e[k].get<int64_t>() > INT32_MAX)
        bad(at + ": \"" + k + "\" is not an integer in [1, " + std::to_string(INT32_MAX) + "]");
      return e[k];
    };
    Target::TunedWinograd w{num("ic"), num("oc"), num("out_h"), num("out_w"), num("batch"), {0, 0, 0, 0}};
    int k = 0;
    for (const char *f : {"f2", "f4", "f2rt", "f4rt"}) {
      if (e.contains(f)) {
        // The form's time over the direct convolution's: positive and
        // finite (a ratio of measured times or counts).
        if (!e[f].is_number() || !(e[f].get<double>() > 0) || !(e[f].get<double>() < 1e6))
          bad(at + ": \"" + f + "\" is not a ratio of times (a number > 0)");
        w.ratio[k] = e[f];
      }
      ++k;
    }
    t.tuned_winograd.push_back(w);
  });
  if (j.contains("serial_step_ops")) {
    const json &v = j["serial_step_ops"];
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      bad("\"serial_step_ops\" is not an integer >= 0 (arithmetic operations per step)");
    t.serial_step_ops = v;
  }
}

int64_t choose_serial_threshold(std::vector<SerialPoint> pts, int64_t builtin, double slack, double *cost_out,
                                double *builtin_cost_out) {
  std::sort(pts.begin(), pts.end(),
            [](const SerialPoint &a, const SerialPoint &b) { return a.mean_step_ops < b.mean_step_ops; });
  auto way = [](const SerialPoint &p, double th) { return p.mean_step_ops < th ? p.serial : p.shared; };
  // The summed relative cost, or infinity when a model is slower than the
  // tables run it by more than `slack`.
  auto cost = [&](double th) {
    double c = 0;
    for (const SerialPoint &p : pts) {
      if (way(p, th) > (1 + slack) * way(p, (double)builtin)) return (double)INFINITY;
      c += way(p, th) / std::min(p.serial, p.shared);
    }
    return c;
  };
  const double base = cost((double)builtin);
  double best_cost = base, best = (double)builtin;
  for (size_t i = 0; i <= pts.size(); ++i) {
    // Below every model (all shared), between models i-1 and i, above every one (all serial).
    const double lo = i ? pts[i - 1].mean_step_ops : 0, hi = i < pts.size() ? pts[i].mean_step_ops : 0;
    if (i && i < pts.size() && lo == hi) continue;
    const double th = i == 0            ? std::floor(hi / 2)
                      : i == pts.size() ? std::ceil(lo * 2)
                                        : std::sqrt(std::max(lo, 1.0) * hi);
    const double c = cost(th);
    if (c < best_cost - 1e-9) best_cost = c, best = th;
  }
  if (cost_out) *cost_out = best_cost;
  if (builtin_cost_out) *builtin_cost_out = base;
  return best == (double)builtin ? builtin : std::max<int64_t>(0, (int64_t)std::llround(best));
}

}  // namespace tinyrt

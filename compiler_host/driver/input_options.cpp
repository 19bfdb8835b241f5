#include "driver/input_options.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

#include "frontend/onnx_tensors.h"

namespace tinyrt {

// A dimension "D" or a range "MIN:MAX" (0 <= MIN <= MAX); false when malformed.
static bool parse_dim_or_range(const std::string &tok, int64_t *lo, int64_t *hi) {
  auto num = [](const std::string &t, int64_t *v) {
    if (t.empty() || t.size() > 18 || t.find_first_not_of("0123456789") != std::string::npos) return false;
    *v = std::stoll(t);
    return true;
  };
  size_t colon = tok.find(':');
  if (colon == std::string::npos) return num(tok, lo) && num(tok, hi);
  return num(tok.substr(0, colon), lo) && num(tok.substr(colon + 1), hi) && *lo <= *hi;
}

InputShapeArg parse_input_shape(const std::string &arg) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    fail_usage("--input-shape expects NAME=D0,D1,... (a dimension may be a range MIN:MAX), got '" + arg + "'");
  InputShapeArg r;
  r.name = arg.substr(0, eq);
  std::stringstream ss(arg.substr(eq + 1));
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    int64_t lo = 0, hi = 0;
    if (!parse_dim_or_range(tok, &lo, &hi))
      fail_usage("--input-shape " + arg + ": '" + tok + "' is not a dimension (D, or a range MIN:MAX with MIN <= MAX)");
    r.lo.push_back(lo);
    r.hi.push_back(hi);
  }
  return r;
}

std::pair<std::string, std::pair<int64_t, int64_t>> parse_dim_range(const std::string &arg) {
  size_t eq = arg.find('=');
  int64_t lo = 0, hi = 0;
  if (eq == std::string::npos || eq == 0 || arg.find(':', eq) == std::string::npos ||
      !parse_dim_or_range(arg.substr(eq + 1), &lo, &hi))
    fail_usage("--dim expects NAME=MIN:MAX (0 <= MIN <= MAX), got '" + arg + "'");
  return {arg.substr(0, eq), {lo, hi}};
}

void add_shape_options(ImportOptions &opt, const std::vector<std::string> &shapes,
                       const std::vector<std::string> &dims) {
  for (const std::string &s : shapes) {
    InputShapeArg a = parse_input_shape(s);
    if (opt.input_shapes.count(a.name)) fail_usage("--input-shape gives input '" + a.name + "' twice");
    opt.input_shapes[a.name] = a.hi;
    if (a.ranged()) opt.input_shape_mins[a.name] = a.lo;
  }
  for (const std::string &d : dims) {
    auto r = parse_dim_range(d);
    if (opt.dim_ranges.count(r.first)) fail_usage("--dim gives dimension '" + r.first + "' twice");
    opt.dim_ranges[r.first] = r.second;
  }
}

std::pair<std::string, Binding> parse_binding(const std::string &arg) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    fail_usage("--bind expects NAME=V0,V1,... or NAME=@file.pb, got '" + arg + "'");
  Binding b;
  std::string rest = arg.substr(eq + 1);
  if (!rest.empty() && rest[0] == '@') {
    b.tensor = read_tensor_file(rest.substr(1));
  } else {
    std::stringstream ss(rest);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
      char *end = nullptr;
      double v = strtod(tok.c_str(), &end);
      if (tok.empty() || *end) fail_usage("--bind " + arg + ": '" + tok + "' is not a number");
      b.values.push_back(v);
    }
  }
  return {arg.substr(0, eq), b};
}

CustomOpDecl parse_custom_op(const std::string &arg) {
  auto bad = [&](const std::string &why) -> CustomOpDecl {
    fail_usage("--custom-op '" + arg + "': " + why + " (expected DOMAIN::OP=C_SYMBOL or DOMAIN::OP=C_SYMBOL:same)");
  };
  size_t eq = arg.find('='), sep = arg.find("::");
  if (eq == std::string::npos || sep == std::string::npos || sep > eq) return bad("malformed");
  CustomOpDecl d;
  d.domain = arg.substr(0, sep);
  d.op = arg.substr(sep + 2, eq - sep - 2);
  d.symbol = arg.substr(eq + 1);
  size_t colon = d.symbol.find(':');
  if (colon != std::string::npos) {
    std::string rule = d.symbol.substr(colon + 1);
    if (rule != "same") return bad("unknown shape rule '" + rule + "'");
    d.same = true;
    d.symbol = d.symbol.substr(0, colon);
  }
  if (d.domain.empty() || d.domain == "ai.onnx") return bad("custom ops must be in a domain of their own, not ai.onnx");
  if (d.op.empty()) return bad("no op name");
  bool ident = !d.symbol.empty() && !isdigit((unsigned char)d.symbol[0]);
  for (char ch : d.symbol) ident = ident && (isalnum((unsigned char)ch) || ch == '_');
  if (!ident) return bad("'" + d.symbol + "' is not a C identifier");
  if (d.symbol.rfind("tinyrt_", 0) == 0) return bad("the prefix tinyrt_ is reserved");
  return d;
}

WinogradMode parse_winograd(const std::string &s) {
  for (WinogradMode m : {WinogradMode::Auto, WinogradMode::Off, WinogradMode::F2, WinogradMode::F4, WinogradMode::F2Rt,
                         WinogradMode::F4Rt})
    if (s == winograd_mode_name(m)) return m;
  fail_usage("--winograd '" + s + "': expected auto, off, f2, f4, f2rt or f4rt");
}

}  // namespace tinyrt

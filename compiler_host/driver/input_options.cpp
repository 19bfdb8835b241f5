#include "driver/input_options.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

#include "frontend/onnx_tensors.h"

namespace tinyrt {

std::pair<std::string, Shape> parse_input_shape(const std::string &arg) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) fail_usage("--input-shape expects NAME=D0,D1,..., got '" + arg + "'");
  Shape s;
  std::stringstream ss(arg.substr(eq + 1));
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    char *end = nullptr;
    long long d = strtoll(tok.c_str(), &end, 10);
    if (tok.empty() || *end || d < 0) fail_usage("--input-shape " + arg + ": '" + tok + "' is not a dimension");
    s.push_back(d);
  }
  return {arg.substr(0, eq), s};
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
  for (WinogradMode m : {WinogradMode::Auto, WinogradMode::Off, WinogradMode::F2, WinogradMode::F4})
    if (s == winograd_mode_name(m)) return m;
  fail_usage("--winograd '" + s + "': expected auto, off, f2 or f4");
}

}  // namespace tinyrt

#include "driver/input_options.h"

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
  if (eq == std::string::npos || eq == 0) fail_usage("--bind expects NAME=V0,V1,... or NAME=@file.pb, got '" + arg + "'");
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

}  // namespace tinyrt

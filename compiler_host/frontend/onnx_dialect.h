// onnx_dialect.h — ONNX's rules for the ops of an imported graph
// (ir/dialect.h), from the onnx library's operator schemas.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ir/dialect.h"

namespace tinyrt {

std::shared_ptr<const Dialect> onnx_dialect();

// Every ai.onnx operator the onnx library defines (not deprecated), with
// the opset of its latest version (tinyrt-compile --list-ops).
std::map<std::string, int> onnx_operator_versions();

}  // namespace tinyrt

// error.h — compile errors. Every rejection names what it rejects.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace tinyrt {

class CompileError : public std::runtime_error {
 public:
  enum class Kind {
    InvalidModel,  // the input is malformed (bad ONNX, inconsistent shapes)
    Unsupported,   // well-formed but outside what tinyrt implements
    Usage,         // bad options (unknown target, missing input shape)
    Internal,      // a bug in tinyrt
  };
  CompileError(Kind kind, const std::string &msg) : std::runtime_error(msg), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// An input that fixes shapes or axes (Reshape's shape, Slice's starts, ...)
// is not a compile-time constant. `value` names it, so a driver can bind it.
class ConstantRequired : public CompileError {
 public:
  ConstantRequired(const std::string &value, const std::string &msg, std::vector<std::string> inputs = {})
      : CompileError(Kind::Unsupported, msg), value_(value), inputs_(std::move(inputs)) {}
  const std::string &value() const { return value_; }
  // The graph inputs the value is computed from: binding them makes it
  // constant.
  const std::vector<std::string> &inputs() const { return inputs_; }

 private:
  std::string value_;
  std::vector<std::string> inputs_;
};

// A cap of ir/limits.h is exceeded (a --max-* flag). Never caught to
// change what is compiled (an If branch that exceeds one does not become a
// run-time error): the limits only refuse models, so a model that compiles
// gives the same artifact under any limits.
class CapExceeded : public CompileError {
 public:
  explicit CapExceeded(const std::string &msg) : CompileError(Kind::Unsupported, msg) {}
};

[[noreturn]] inline void fail_cap(const std::string &m) { throw CapExceeded(m); }

[[noreturn]] inline void fail_invalid(const std::string &m) { throw CompileError(CompileError::Kind::InvalidModel, m); }
[[noreturn]] inline void fail_unsupported(const std::string &m) {
  throw CompileError(CompileError::Kind::Unsupported, m);
}
[[noreturn]] inline void fail_usage(const std::string &m) { throw CompileError(CompileError::Kind::Usage, m); }
[[noreturn]] inline void fail_internal(const std::string &m) {
  throw CompileError(CompileError::Kind::Internal, "internal error: " + m);
}

#define TINYRT_CHECK(cond, msg)                                                                                   \
  do {                                                                                                            \
    if (!(cond))                                                                                                  \
      ::tinyrt::fail_internal(std::string(msg) + " (" #cond ") at " + __FILE__ + ":" + std::to_string(__LINE__)); \
  } while (0)

}  // namespace tinyrt

// custom_op_options.h — --custom-op (and, for the tools that link and run
// the model, --custom-op-source), shared by tinyrt-compile,
// tinyrt-onnx-test and tinyrt-perf. docs/ABI.md, "Custom ops".
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "driver/compiler.h"
#include "driver/input_options.h"

namespace tinyrt {

struct CustomOpArgs {
  std::vector<std::string> decls;    // DOMAIN::OP=C_SYMBOL[:same]
  std::vector<std::string> sources;  // C files implementing them
};

inline void add_custom_op_options(CLI::App &app, CustomOpArgs &a, bool with_sources) {
  app.add_option("--custom-op", a.decls,
                 "DOMAIN::OP=C_SYMBOL[:same]: nodes of that op call tinyrt_status C_SYMBOL(const "
                 "tinyrt_custom_call *); output shapes from the model's value_info, or ':same' (output 0 = "
                 "input 0's type and shape); repeatable");
  if (with_sources)
    app.add_option("--custom-op-source", a.sources,
                   "C file compiled with the target's C compiler and linked into the model's .so (custom op "
                   "implementations; repeatable)");
}

// Parses the declarations into `o` (throws CompileError(Usage)).
inline void apply_custom_op_options(const CustomOpArgs &a, CompileOptions &o) {
  for (const std::string &d : a.decls) {
    CustomOpDecl c = parse_custom_op(d);
    for (const CustomOpDecl &e : o.custom_ops)
      if (e.domain == c.domain && e.op == c.op)
        fail_usage("--custom-op " + c.domain + "::" + c.op + " is declared twice");
    o.custom_ops.push_back(c);
  }
  o.link_sources = a.sources;
}

}  // namespace tinyrt

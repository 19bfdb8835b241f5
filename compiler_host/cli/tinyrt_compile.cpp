// tinyrt-compile — ONNX model -> object, shared object, C header, JSON.
#include <fstream>
#include <iostream>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <map>
#include <set>

#include "driver/compiler.h"
#include "driver/input_options.h"
#include "frontend/onnx_dialect.h"
#include "ops/op_registry.h"
#include "cli/custom_op_options.h"
#include "cli/limit_options.h"
#include "cli/quantize_option.h"
#include "cli/codegen_options.h"
#include "cli/shape_options.h"
#include "cli/tool_common.h"

// Every ai.onnx operator of the onnx library's registry with its status in
// tinyrt, as markdown: docs/OPERATORS.md embeds this output and a test
// keeps the two identical.
static void list_ops() {
  std::map<std::string, int> latest = tinyrt::onnx_operator_versions();
  for (const tinyrt::OpDef *d : tinyrt::all_ops())
    if (d->domain.empty()) latest.emplace(d->name, 0);
  auto types = [](const std::vector<tinyrt::DType> &ts) {
    std::string r;
    for (auto t : ts) r += std::string(r.empty() ? "" : " ") + tinyrt::dtype_name(t);
    return r.empty() ? std::string("any") : r;
  };
  int supported = 0, scoped = 0, missing = 0;
  std::string rows;
  for (auto &kv : latest) {
    const tinyrt::OpDef *d = tinyrt::find_op("", kv.first);
    std::string row = "| " + kv.first + " | ";
    if (d) {
      ++supported;
      row += "supported | " + std::to_string(d->min_opset) + "+ | " + types(d->types) + " | ";
      for (size_t i = 0; i < d->attrs.size(); ++i) row += (i ? ", " : "") + d->attrs[i];
      row += " | ";
      for (size_t i = 0; i < d->const_inputs.size(); ++i) row += (i ? ", " : "") + std::to_string(d->const_inputs[i]);
      row += std::string(" | ") + (d->dims ? "yes" : "");
    } else if (const char *cls = tinyrt::out_of_scope_class(kv.first)) {
      ++scoped;
      row += std::string("out of scope: ") + cls + " | | | | |";
    } else {
      ++missing;
      row += "not implemented | | | | |";
    }
    rows += row + " |\n";
  }
  std::cout << supported << " supported, " << scoped << " out of scope, " << missing << " not implemented.\n\n"
            << "| op | status | opsets | input types | attributes | inputs that must be constant | run-time dims |\n"
            << "|---|---|---|---|---|---|---|\n"
            << rows;
  std::string other;
  for (const tinyrt::OpDef *d : tinyrt::all_ops())
    if (!d->domain.empty()) other += "| " + d->domain + " | " + d->name + " | " + types(d->types) + " |\n";
  if (!other.empty())
    std::cout << "\nOther domains (ONNX Runtime's contrib ops that quantized models use, and tinyrt's own, which its "
                 "passes write):\n\n"
              << "| domain | op | input types |\n|---|---|---|\n"
              << other;
}

// Every register tile the target's GEMM may use (the tile sweep forces each
// with --gemm-tile, tests/kernels/sweep_tiles.py).
static void list_tiles(const tinyrt::Target &t) {
  std::set<std::pair<int, int>> f(t.gemm_tiles.begin(), t.gemm_tiles.end());
  for (const auto &r : t.gemm_tile_table) f.insert({r.mr, r.nv});
  const auto &q = t.qgemm_tiles.empty() ? t.gemm_tiles : t.qgemm_tiles;
  std::set<std::pair<int, int>> qs(q.begin(), q.end());
  qs.insert(t.qgemm_byte_tiles.begin(), t.qgemm_byte_tiles.end());
  qs.insert(t.qgemm_i16_tiles.begin(), t.qgemm_i16_tiles.end());
  for (auto [mr, nv] : f) std::cout << "float " << mr << "," << nv << "\n";
  for (auto [mr, nv] : qs) std::cout << "int8 " << mr << "," << nv << "\n";
}

int main(int argc, char **argv) {
  tinyrt::install_llvm_error_handlers("tinyrt-compile");
  CLI::App app{"tinyrt-compile: compile an ONNX model into native code for tinyrt"};
  std::string model, outdir, target = "host", name, dump, tile, svg;
  std::vector<std::string> shapes, binds;
  bool verbose = false, ops = false;
  app.add_option("model", model, "ONNX model file");
  app.add_option("-o,--output", outdir, "output directory");
  app.add_flag("--list-ops", ops, "print the supported ONNX operators (markdown) and exit");
  tinyrt::add_target_option(app, target);
  app.add_option("--name", name, "C identifier of the model (default: file name)");
  std::vector<std::string> dim_ranges;
  tinyrt::add_input_shape_options(app, shapes, dim_ranges);
  app.add_option("--bind", binds, "NAME=V0,V1,... or NAME=@tensor.pb: freeze a graph input to a constant");
  app.add_option("--dump", dump, "write debug dumps (kernels, LLVM IR, assembly) to this directory");
  app.add_flag("-v,--verbose", verbose, "print each pass");
  app.add_option("--plan-svg", svg,
                 "draw the memory plan (buffers over time and arena offset, the lower bound and the arena budget "
                 "marked) to this SVG file");
  tinyrt::add_gemm_tile_option(app, tile);
  std::string task_split;
  tinyrt::add_task_split_option(app, task_split);
  bool tiles = false;
  app.add_flag("--list-tiles", tiles,
               "print the register tiles the target's GEMMs may use (float: its candidates and its measured table; "
               "int8: its candidates), one 'float|int8 MR,NV' a line, and exit");
  tinyrt::Limits limits;
  tinyrt::add_limit_options(app, limits);
  tinyrt::QuantizeArgs quantize;
  tinyrt::add_quantize_option(app, quantize);
  tinyrt::WinogradMode winograd = tinyrt::WinogradMode::Auto;
  int64_t winograd_bands = 0;
  tinyrt::add_winograd_option(app, winograd, winograd_bands);
  tinyrt::WeightStorage weights = tinyrt::WeightStorage::F32;
  tinyrt::add_weights_option(app, weights);
  tinyrt::Precision precision = tinyrt::Precision::F32;
  tinyrt::add_precision_option(app, precision);
  std::string tuning;
  tinyrt::add_tuning_option(app, tuning);
  bool check_addresses = false;
  tinyrt::add_check_addresses_option(app, check_addresses);
  int64_t serial_step_ops = -1;
  tinyrt::add_serial_step_option(app, serial_step_ops);
  bool require_proof = false;
  app.add_flag("--require-proof", require_proof,
               "refuse the model (exit 1) if the bounds proof cannot bound a memory access of the generated code, "
               "instead of testing that access at run time");
  std::string emit_qdq;
  app.add_option("--emit-qdq", emit_qdq,
                 "with --quantize: also write the quantized model as an ONNX file (QDQ, or ONNX Runtime's "
                 "DynamicQuantize* ops) that ONNX Runtime can run");
  tinyrt::CustomOpArgs custom;
  tinyrt::add_custom_op_options(app, custom, false);
  CLI11_PARSE(app, argc, argv);
  if (ops) {
    list_ops();
    return 0;
  }
  if (tiles) {
    try {
      list_tiles(tinyrt::resolve_target(target));
    } catch (const tinyrt::CompileError &e) {
      std::cerr << "tinyrt-compile: " << e.what() << "\n";
      return 2;
    }
    return 0;
  }
  if (model.empty() || outdir.empty()) {
    std::cerr << "tinyrt-compile: a model and -o OUTDIR are required\n" << app.help();
    return 2;
  }

  try {
    tinyrt::CompileOptions opt;
    opt.target = target;
    opt.name = name;
    opt.dump_dir = dump;
    opt.gemm_tile = tile;
    opt.task_split = task_split;
    opt.winograd = winograd;
    opt.winograd_bands = winograd_bands;
    opt.weights = weights;
    opt.precision = precision;
    opt.tuning = tuning;
    opt.check_addresses = check_addresses;
    opt.require_proof = require_proof;
    opt.serial_step_ops = serial_step_ops;
    tinyrt::check_quantize_args(quantize);
    opt.quantize = quantize.mode;
    opt.weight_bits = quantize.weight_bits;
    // Long compiles show where they are: one line rewritten in place on a
    // terminal, otherwise a line per report.
    bool tty = isatty(2);
    bool shown = false;
    opt.progress = [&](const std::string &what) {
      if (tty)
        std::cerr << "\rtinyrt-compile: " << what << "\033[K" << std::flush;
      else
        std::cerr << "tinyrt-compile: " << what << "\n";
      shown = true;
    };
    opt.log = verbose ? &std::cerr : nullptr;
    opt.import.limits = limits;
    tinyrt::apply_custom_op_options(custom, opt);
    tinyrt::add_shape_options(opt.import, shapes, dim_ranges);
    for (auto &b : binds) opt.import.bindings.insert(tinyrt::parse_binding(b));
    if (opt.quantize == tinyrt::Quantize::Static)
      opt.calibration = tinyrt::calibrate(model, opt, quantize.calibration, quantize.percentile, &std::cerr);
    if (!emit_qdq.empty()) {
      std::string bytes = tinyrt::quantized_onnx(model, opt);
      std::ofstream f(emit_qdq, std::ios::binary);
      if (!f.write(bytes.data(), (std::streamsize)bytes.size()))
        tinyrt::fail_usage("cannot write '" + emit_qdq + "' (does its directory exist?)");
      std::cerr << "wrote " << emit_qdq << "\n";
    }
    tinyrt::Artifact a = tinyrt::compile_model(model, opt);
    if (shown && tty) std::cerr << "\r\033[K" << std::flush;
    for (auto &w : a.warnings) std::cerr << "tinyrt-compile: warning: " << w << "\n";
    auto files = tinyrt::write_artifact(a, outdir, &std::cerr);
    std::cout << "compiled " << a.name << " for " << a.target.name << " in " << a.compile_seconds << " s: arena "
              << a.stats.arena_bytes << " bytes (lower bound " << a.stats.lower_bound_bytes << "), weights "
              << a.weights_bytes << " bytes, code " << a.code_bytes << " bytes; model hash "
              << tinyrt::hex64(a.model_hash) << "\n";
    std::cout << "bounds proof: " << a.accesses - a.accesses_unproved << " of " << a.accesses
              << " memory accesses proved inside their kernel's tensors";
    if (check_addresses)
      std::cout << "; --check-addresses: " << a.address_checks << " accesses tested, " << a.address_checks_left
                << " tests left after optimization (trapping outside the kernel's tensors)";
    else if (a.address_checks)
      std::cout << "; the other " << a.address_checks << " tested at run time (" << a.address_checks_left
                << " tests left after optimization, trapping outside the kernel's tensors)";
    std::cout << "\n";
    if (!svg.empty()) {
      std::ofstream f(svg, std::ios::binary);
      if (!(f << tinyrt::plan_svg(a)))
        throw tinyrt::CompileError(tinyrt::CompileError::Kind::Usage, "cannot write " + svg);
      files.push_back(svg);
    }
    for (auto &f : files) std::cout << "  " << f << "\n";
    return 0;
  } catch (const tinyrt::CompileError &e) {
    std::cerr << "tinyrt-compile: error: " << e.what() << "\n";
    return e.kind() == tinyrt::CompileError::Kind::Usage ? 2 : 1;
  } catch (const std::bad_alloc &) {
    std::cerr << "tinyrt-compile: error: out of memory: the model asks for more memory than this machine gives "
                 "(lower the --max-* limits to refuse such models earlier)\n";
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "tinyrt-compile: internal error: " << e.what() << "\n";
    return 3;
  }
}

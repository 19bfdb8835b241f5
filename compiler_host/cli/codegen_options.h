// codegen_options.h — the code generation options tinyrt-compile,
// tinyrt-onnx-test and tinyrt-perf share (and tinyrt-tune's `--target`):
// `--target` (target/target.cpp), `--winograd auto|off|f2|f4|f2rt|f4rt`
// (passes/winograd.cpp), `--gemm-tile` (target/target.h), `--check-addresses`
// (codegen/address_checks.h) and `--serial-step-ops`
// (codegen/module_emitter.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include "driver/compiler.h"
#include "driver/input_options.h"
#include "target/target.h"

namespace tinyrt {

// --target NAME, its help listing every target (target/target.cpp's table).
inline void add_target_option(CLI::App &app, std::string &target) {
  std::string names;
  for (const std::string &n : target_names()) names += (names.empty() ? "" : " | ") + n;
  app.add_option("--target", target, names + " (host: the best x86-64 one this CPU runs)")->capture_default_str();
}

inline void add_winograd_option(CLI::App &app, WinogradMode &mode, int64_t &bands) {
  app.add_option_function<std::string>(
         "--winograd", [&mode](const std::string &v) { mode = parse_winograd(v); },
         "auto: 3x3 stride-1 float convolutions as Winograd F(2,3) or F(4,3) where the cost model says it pays "
         "(fewer multiplies; transformed weights up to 4x larger, transform buffers in the arena) | off: never "
         "| f2, f4: every such convolution with that tile (tests, experiments) | f2rt, f4rt: the same with the "
         "weights transformed at run time, a chunk of output channels at a time (tests, experiments)")
      ->check(CLI::IsMember({"auto", "off", "f2", "f4", "f2rt", "f4rt"}))
      ->default_str("auto");
  app.add_option("--winograd-bands", bands,
                 "N: every Winograd convolution in N bands of tile rows (at most its tile rows), the transform "
                 "buffers one band's (tests, experiments; by default the arena budget decides)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
}

inline void add_weights_option(CLI::App &app, WeightStorage &w) {
  app.add_option_function<std::string>(
         "--weights", [&w](const std::string &v) { w = v == "fp16" ? WeightStorage::F16 : WeightStorage::F32; },
         "fp32: float weights stored as float | fp16: as IEEE half, half the bytes (GEMM, convolution, depthwise "
         "and recurrent weights; biases and other constants stay float), widened to float as the kernels load "
         "them: each weight rounded to 11 significant bits (relative error <= 2^-11, docs/PRECISION.md)")
      ->check(CLI::IsMember({"fp32", "fp16"}))
      ->default_str("fp32");
}

inline void add_precision_option(CLI::App &app, Precision &p) {
  app.add_option_function<std::string>(
         "--precision", [&p](const std::string &v) { p = v == "fp16" ? Precision::F16 : Precision::F32; },
         "fp32: float models compute in single precision | fp16 (targets with half arithmetic: aarch64-neon-fp16): "
         "float GEMMs and convolutions compute their products in half over half weights (GEMM and depthwise "
         "weights stored as half, as --weights fp16 does; recurrent weights too only with --weights fp16), 8 "
         "lanes a vector, summed into float every 32 products; the epilogue and the other kernels stay float "
         "(error bounds: docs/PRECISION.md)")
      ->check(CLI::IsMember({"fp32", "fp16"}))
      ->default_str("fp32");
}

inline void add_tuning_option(CLI::App &app, std::string &file) {
  app.add_option("--tuning", file,
                 "FILE: choices measured on this machine by tinyrt-tune (register tiles, Winograd forms, the "
                 "serial-step threshold), by layer geometry (layers it did not measure keep the built-in tables; what "
                 "it says is part of the model hash)");
}

inline void add_gemm_tile_option(CLI::App &app, std::string &tile) {
  app.add_option("--gemm-tile", tile,
                 "MR,NV[,UNROLL]: force one GEMM register tile (pixels x channel vectors), float and int8, for "
                 "tile experiments and the tile sweep (tinyrt-compile --list-tiles)");
}

inline void add_task_split_option(CLI::App &app, std::string &split) {
  app.add_option("--task-split", split,
                 "ORDER[,TASKS]: force how every GEMM's tasks are cut for the threads (ORDER pixels: pixel blocks "
                 "outermost; channels: output-channel tiles outermost; serial: the step on the calling thread alone; "
                 "rule: the built-in rule; TASKS: about that many tasks, 1-4096), for experiments and tinyrt-tune "
                 "(a tuning file's measured splits apply per layer geometry)");
}

inline void add_check_addresses_option(CLI::App &app, bool &on) {
  app.add_flag("--check-addresses", on,
               "test every load and store of the generated code against its kernel's tensors and trap outside "
               "them (tests of the emitters; LLVM removes the tests it proves, the JSON counts the rest)");
}

inline void add_serial_step_option(CLI::App &app, int64_t &ops) {
  app.add_option("--serial-step-ops", ops,
                 "a model whose steps do fewer arithmetic operations than this on average (NAME.json "
                 "fusion_groups[].ops) runs each step on the calling thread alone, all its tasks in one call: "
                 "handing so small steps to other threads costs more than it gains; 0: every step shared; "
                 "default: the target's (x86 750000, ARM 100000)")
      ->check(CLI::Range((int64_t)0, INT64_MAX));
}

}  // namespace tinyrt

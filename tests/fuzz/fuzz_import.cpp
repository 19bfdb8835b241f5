// fuzz_import — ONNX bytes through the importer and every pass of the
// pipeline up to memory planning (plan_model; no LLVM code generation),
// a quarter of them with --quantize dynamic.
//
// A documented refusal (CompileError other than Internal) is fine. A crash,
// a sanitizer report, an internal error or another exception, a time-out
// or runaway memory is a finding; so is a memory plan that breaks its own
// rules (checked below): a buffer outside the arena or misaligned, two
// buffers live at the same step that overlap, a value whose elements reach
// outside its buffer's arena range, an arena above the cap.
#include <algorithm>
#include <cstdint>
#include <string>

#include "driver/compiler.h"
#include "fuzz_common.h"

using namespace tinyrt;

namespace {

void check_plan(const Program &p, const Limits &lim) {
  const PlanStats &st = p.stats;
  const int64_t arena = st.arena_bytes;
  if (arena < 0 || arena > lim.max_arena_bytes)
    fuzz::finding("arena of " + std::to_string(arena) + " bytes passed the cap " + std::to_string(lim.max_arena_bytes));
  auto name = [&](int v) { return "'" + p.graph.v(v).name + "'"; };
  for (const PlannedBuffer &b : st.buffers) {
    if (b.offset < 0 || b.offset % 64 || b.bytes < 0 || b.offset > arena || b.bytes > arena - b.offset)
      fuzz::finding("buffer of " + name(b.value) + " at " + std::to_string(b.offset) + " + " +
                    std::to_string(b.bytes) + " lies outside the arena of " + std::to_string(arena) +
                    " bytes or is misaligned");
    if (b.first > b.last) fuzz::finding("buffer of " + name(b.value) + " is live from step " +
                                        std::to_string(b.first) + " to " + std::to_string(b.last));
  }
  // Buffers live at a common step must not overlap (quadratic: checked for
  // plans of up to 3000 buffers, which covers every model the fuzzer makes
  // within the time-out).
  if (st.buffers.size() <= 3000)
    for (size_t i = 0; i < st.buffers.size(); ++i)
      for (size_t j = i + 1; j < st.buffers.size(); ++j) {
        const PlannedBuffer &a = st.buffers[i], &b = st.buffers[j];
        if (a.first <= b.last && b.first <= a.last && a.offset < b.offset + b.bytes &&
            b.offset < a.offset + a.bytes && a.bytes > 0 && b.bytes > 0)
          fuzz::finding("buffers of " + name(a.value) + " and " + name(b.value) + " overlap while both are live");
      }
  // Every value the kernels read or write in the arena: its elements (by
  // its strides) stay inside the arena.
  for (size_t v = 0; v < p.storage.size() && v < p.graph.values.size(); ++v) {
    const Storage &s = p.storage[v];
    if (s.where != Storage::Where::Arena) continue;
    const Value &val = p.graph.values[v];
    if (val.numel() == 0) continue;
    if (s.strides.size() != val.shape.size())
      fuzz::finding("value " + name((int)v) + " has " + std::to_string(s.strides.size()) + " strides for rank " +
                    std::to_string(val.shape.size()));
    for (int64_t st : s.strides)
      if (st < 0) fuzz::finding("value " + name((int)v) + " has a negative stride");
    int64_t end = s.offset + p.span_bytes((int)v);
    if (s.offset < 0 || end > arena)
      fuzz::finding("value " + name((int)v) + " spans arena bytes " + std::to_string(s.offset) + " to " +
                    std::to_string(end) + ", beyond the arena of " + std::to_string(arena));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  resolve_target("host");  // initializes LLVM's host detection once
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  CompileOptions opt;
  opt.target = "host";
  opt.import.limits = fuzz::fuzz_limits();
  std::string bytes(reinterpret_cast<const char *>(data), size);
  // A quarter of the inputs (by a hash of their bytes, so that a finding
  // replays) also go through --quantize dynamic's rewrites.
  uint32_t h = 2166136261u;
  for (unsigned char ch : bytes) h = (h ^ ch) * 16777619u;
  if ((h & 3) == 0) opt.quantize = Quantize::Dynamic;
  Program p;
  if (fuzz::compiles([&] { p = plan_model(bytes, opt); })) check_plan(p, opt.import.limits);
  return 0;
}

// fuzz_common.h — what the compiler's fuzz targets share: the caps every
// fuzzed compile runs with, and the line a finding prints before it aborts
// (libFuzzer then saves the input as crash-*).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "ir/error.h"
#include "ir/limits.h"

namespace tinyrt::fuzz {

// Caps low enough that no input can legitimately take long or much memory
// (the targets run with -timeout=10 -rss_limit_mb=2048, see run_fuzz.sh):
// 2^20 elements per tensor, a 256 MiB arena, 20 000 expanded nodes, 64 MiB
// of folded constants, 2^24 element operations of folding, 64 MiB of
// weights.
inline Limits fuzz_limits() {
  Limits l;
  l.max_tensor_elements = int64_t(1) << 20;
  l.max_arena_bytes = int64_t(1) << 28;
  l.max_expanded_nodes = 20000;
  l.max_folded_bytes = int64_t(1) << 26;
  l.max_fold_ops = int64_t(1) << 24;
  l.max_weights_bytes = int64_t(1) << 26;
  return l;
}

[[noreturn]] inline void finding(const std::string &what) {
  fprintf(stderr, "\n==tinyrt fuzz finding== %s\n", what.c_str());
  fflush(stderr);
  abort();
}

// Runs `compile`. Returns true when it succeeds and false when it refuses
// the model with a documented error (CompileError other than Internal, as
// tinyrt-compile's exit status 1 or 2). An internal error or any other
// exception (tinyrt-compile's exit status 3) is a finding.
template <class F>
bool compiles(F &&compile) {
  try {
    compile();
    return true;
  } catch (const CompileError &e) {
    if (e.kind() == CompileError::Kind::Internal) finding(std::string("internal error: ") + e.what());
    // TINYRT_FUZZ_TRACE=1: the refusal (to write a corpus case's expected error).
    static const bool trace = getenv("TINYRT_FUZZ_TRACE") != nullptr;
    if (trace) fprintf(stderr, "refused: %s\n", e.what());
    return false;
  } catch (const std::bad_alloc &) {
    // Under the caps above no model may need that much memory.
    finding("std::bad_alloc under the fuzzing caps");
  } catch (const std::exception &e) {
    finding(std::string("exception other than CompileError (tinyrt-compile exit 3): ") + e.what());
  }
}

}  // namespace tinyrt::fuzz

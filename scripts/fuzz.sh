#!/bin/sh
# Long fuzz runs (the CI runs each target for 20-40 s): builds the sanitizer
# build (TINYRT_FUZZ=ON, clang-14) into ./build-fuzz (BUILD_DIR=dir: into
# dir), writes the seeds, then runs each target in turn for SECONDS (default
# 3600) or -runs=N executions, one core each, keeping its corpus in
# BUILD_DIR/fuzz-corpus/<target> so that the next run resumes. Findings
# (crash-*, timeout-*, oom-*, leak-*) land in BUILD_DIR/fuzz-corpus/<target>/;
# replay one with: BUILD_DIR/fuzz_<target> FILE (TINYRT_FUZZ_TRACE=1 explains).
#
#   scripts/fuzz.sh [SECONDS | -runs=N] [import runtime_api compile_run fold]
set -eu
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build-fuzz}
budget=${1:-3600}
[ $# -gt 0 ] && shift
targets=${*:-import runtime_api compile_run fold}
cmake -S . -B "$B" -G Ninja -DTINYRT_FUZZ=ON -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
for t in $targets; do cmake --build "$B" --target "fuzz_$t"; done
/usr/bin/python3 tests/fuzz/make_seeds.py "$B/tests/fuzz/seeds" /usr/share/libonnx-testdata/data/node
status=0
for t in $targets; do
  echo "=== fuzz_$t ($budget)"
  KEEP_CORPUS=1 tests/fuzz/run_fuzz.sh "$B/fuzz_$t" "$budget" "$B/fuzz-corpus/$t" "$B/tests/fuzz/seeds/$t" || status=1
done
exit $status

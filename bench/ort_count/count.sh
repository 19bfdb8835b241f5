#!/bin/sh
# count.sh — ONNX Runtime's executed guest instructions per inference on
# AArch64, under qemu-aarch64 -cpu cortex-a72 with tinyrt's counting plugin:
# the peer of tinyrt-perf --target aarch64-neon's guest_instructions.
#   bench/ort_count/count.sh MODEL...
# MODEL: an ONNX file, or a model name of the torchvision set or the zoo
# ($BENCH_MODELS/{torchvision,zoo}/NAME/model.onnx; not exported here).
# Prints "MODEL INSTRUCTIONS" per model: (count(1 + N runs) - count(1 run)) / N,
# so that loading, graph optimization and the first run's planning cancel
# out; "MODEL -" (and ORT's message on stderr) for a model ORT refuses.
# ORT as bench/ort_latency.js runs it: CPU provider, 1 intra-op and 1
# inter-op thread, all graph optimizations (bench/ort_count/ort_run.c).
#
# Under qemu-user, /proc/cpuinfo is the host's; ORT's cpuinfo library finds
# no ARM core in it and ORT crashes while loading. So qemu's -L prefix is a
# copy of the AArch64 sysroot (symbolic links) with a proc/cpuinfo of
# Cortex-A72 cores, which qemu opens in place of /proc/cpuinfo. The ISA
# features ORT uses (no dot product, no FP16 arithmetic on cortex-a72) come
# from AT_HWCAP, which qemu sets from -cpu.
#
# ORT 1.30's telemetry (POSIX 1DS, on by default) is turned off with
# ORT_DISABLE_TELEMETRY=1: its early runs flush "RuntimePerf" events to a
# database in ~/.cache, which adds 100-500 k instructions to runs 2-4
# (dense_autoencoder: 415 k per inference instead of 280 k) and makes the
# counts vary by tens of k from process to process. Off, the counts are the same on every run and
# equal ORT's steady state with it on (runs 5-31).
# Environment:
#   ORT_COUNT_DIR   cache: ort_run, the prefix (default build/ort_count)
#   ORT_COUNT_N     N above (default 3)
#   ORT_COUNT_TELEMETRY=1  leave ORT's telemetry on
#   ORT_LIB         libonnxruntime.so.1 for arm64 (default onnxruntime-node's,
#                   installed into bench/node_modules when missing)
#   BENCH_TINYRT    build tree holding libtinyrt_icount.so (default build)
#   BENCH_MODELS    where model names are looked up (default build/models)
#   AARCH64_SYSROOT (default /usr/aarch64-linux-gnu); CROSS_CC (default
#                   aarch64-linux-gnu-gcc); QEMU_AARCH64 (default qemu-aarch64)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${ORT_COUNT_DIR:-$root/build/ort_count}
n=${ORT_COUNT_N:-3}
tree=${BENCH_TINYRT:-$root/build}
models=${BENCH_MODELS:-$root/build/models}
sysroot=${AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}
cc=${CROSS_CC:-aarch64-linux-gnu-gcc}
qemu=${QEMU_AARCH64:-qemu-aarch64}
[ $# -gt 0 ] || { echo "usage: $0 MODEL..." >&2; exit 2; }
case $tree in /*) ;; *) tree=$root/$tree ;; esac
case $models in /*) ;; *) models=$root/$models ;; esac
plugin=$tree/libtinyrt_icount.so
[ -f "$plugin" ] || { echo "no $plugin (build the tinyrt_icount target)" >&2; exit 1; }

if [ -z "${ORT_LIB:-}" ]; then
  if [ ! -d "$root/bench/node_modules/onnxruntime-node" ]; then
    (cd "$root/bench" && npm install --no-save --ignore-scripts onnxruntime-node >/dev/null 2>&1)
  fi
  for f in "$root"/bench/node_modules/onnxruntime-node/bin/napi-v*/linux/arm64/libonnxruntime.so.1; do
    [ -f "$f" ] && ORT_LIB=$f && break
  done
  [ -n "${ORT_LIB:-}" ] || { echo "no arm64 libonnxruntime.so.1 in bench/node_modules/onnxruntime-node" >&2; exit 1; }
fi
ort_dir=$(cd "$(dirname "$ORT_LIB")" && pwd)

# The runner, rebuilt when its source is newer.
mkdir -p "$dir"
if [ ! -x "$dir/ort_run" ] || [ -n "$(find "$root/bench/ort_count/ort_run.c" -newer "$dir/ort_run")" ]; then
  "$cc" -std=c99 -O2 -Wall -o "$dir/ort_run.tmp" "$root/bench/ort_count/ort_run.c" "$ORT_LIB"
  mv "$dir/ort_run.tmp" "$dir/ort_run"
fi
# The prefix: the sysroot's entries, and one Cortex-A72 (MIDR 0x410fd083)
# per host CPU in proc/cpuinfo (cpuinfo counts the CPUs in /sys).
prefix=$dir/sysroot
mkdir -p "$prefix/proc"
for e in "$sysroot"/*; do
  [ -e "$prefix/$(basename "$e")" ] || ln -s "$e" "$prefix/$(basename "$e")"
done
cpus=$(getconf _NPROCESSORS_CONF 2>/dev/null || echo 1)
i=0
while [ "$i" -lt "$cpus" ]; do
  printf 'processor\t: %d\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd aes pmull sha1 sha2 crc32 cpuid\n' "$i"
  printf 'CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n'
  i=$((i + 1))
done >"$prefix/proc/cpuinfo"

if [ "${ORT_COUNT_TELEMETRY:-0}" = 1 ]; then telemetry=ORT_COUNT_TELEMETRY=1; else telemetry=ORT_DISABLE_TELEMETRY=1; fi

# count MODEL RUNS: the executed instructions of one ort_run, or fail.
count() {
  out=$dir/count.$$
  rm -f "$out"
  if ! "$qemu" -cpu cortex-a72 -L "$prefix" -E LD_LIBRARY_PATH="$ort_dir" -E "$telemetry" \
       -plugin "$plugin,out=$out" \
       "$dir/ort_run" "$1" "$2" >&2; then
    rm -f "$out"
    return 1
  fi
  sed -n 's/^guest_instructions=//p' "$out"
  rm -f "$out"
}

status=0
for m in "$@"; do
  if [ -f "$m" ]; then p=$m
  elif [ -f "$models/torchvision/$m/model.onnx" ]; then p=$models/torchvision/$m/model.onnx
  elif [ -f "$models/zoo/$m/model.onnx" ]; then p=$models/zoo/$m/model.onnx
  else echo "$m: no such file or model in $models" >&2; echo "$m -"; status=1; continue
  fi
  if a=$(count "$p" 1) && b=$(count "$p" $((1 + n))) && [ -n "$a" ] && [ -n "$b" ]; then
    echo "$m $(((b - a) / n))"
  else
    echo "$m -"
    status=1
  fi
done
exit $status

#!/bin/sh
# Runs one libFuzzer target over its seeds for a bounded time or number of
# executions. Exit status 0: nothing found; otherwise libFuzzer's report is
# on stderr and the input that triggered it is in WORKDIR (crash-*,
# timeout-*, oom-*, leak-*; reproduce with: FUZZER FILE), and printed in
# base64 after the report, so that a finding of a CI run can be reproduced
# from its log (base64 -d > FILE).
#
#   tests/fuzz/run_fuzz.sh FUZZER SECONDS|-runs=N WORKDIR SEEDDIR [libFuzzer options]
#
# New inputs go to WORKDIR/corpus, which is emptied first unless
# KEEP_CORPUS=1 (scripts/fuzz.sh keeps it, so that long runs resume);
# SEEDDIR is only read. Caps: 10 s per input (30 s for fuzz_compile_run,
# which runs LLVM), 2 GiB of RSS. libFuzzer's line for each new input
# (NEW, REDUCE) is left out of the output unless VERBOSE=1 (its progress,
# pulse, stays); the whole log is WORKDIR/log.
set -eu
fuzzer=$1 budget=$2 work=$3 seeds=$4
shift 4
case $budget in
  -runs=*) limit=$budget ;;
  *) limit=-max_total_time=$budget ;;
esac
if [ "${KEEP_CORPUS:-0}" != 1 ]; then rm -rf "$work/corpus"; fi
mkdir -p "$work/corpus"
set -- -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" "$@"
case $(basename "$fuzzer") in
  fuzz_import) set -- -timeout=10 -max_len=65536 "$@" ;;
  fuzz_compile_run) set -- -timeout=30 -max_len=512 "$@" ;;
  *) set -- -timeout=10 "$@" ;;
esac
if [ -f "$seeds.dict" ]; then set -- -dict="$seeds.dict" "$@"; fi
echo "run_fuzz: $fuzzer $limit $* $work/corpus $seeds" >&2
rm -f "$work/status"
touch "$work/status.start"
{ "$fuzzer" "$limit" "$@" "$work/corpus" "$seeds" 2>&1 || echo $? > "$work/status"; } | tee "$work/log" |
  if [ "${VERBOSE:-0}" = 1 ]; then cat >&2; else grep --line-buffered -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE) ' >&2 || true; fi
status=$(cat "$work/status" 2>/dev/null || echo 0)
for f in $(find "$work" -maxdepth 1 -type f -newer "$work/status.start" | grep -E '/(crash|timeout|oom|leak|slow-unit)-' || true); do
  echo "run_fuzz: $f ($(wc -c < "$f") bytes), base64:" >&2
  base64 -w 0 "$f" >&2
  echo >&2
done
exit $status

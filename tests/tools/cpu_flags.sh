#!/bin/sh
# cpu_flags.sh FLAG... -- COMMAND [ARG...]: runs COMMAND where this CPU's
# /proc/cpuinfo flags hold every FLAG (!FLAG: where it lacks it); exits 77
# (ctest's SKIP_RETURN_CODE) where they do not, naming the flag. For the
# x86 targets whose code only some CPUs run (x86-64-avx2-vnni's AVX-VNNI,
# x86-64-avx512-vnni-256's AVX-512 VNNI).
set -eu
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  want=${1#!}
  case " ${flags#*:} " in
    *" $want "*) have=1 ;;
    *) have=0 ;;
  esac
  if [ "$1" = "!$want" ] && [ $have = 1 ]; then echo "skipped: this CPU has $want" && exit 77; fi
  if [ "$1" = "$want" ] && [ $have = 0 ]; then echo "skipped: this CPU lacks $want" && exit 77; fi
  shift
done
[ $# -gt 1 ] || { echo "usage: cpu_flags.sh FLAG... -- COMMAND [ARG...]" >&2; exit 2; }
shift
exec "$@"

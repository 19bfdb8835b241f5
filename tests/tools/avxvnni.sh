#!/bin/sh
# avxvnni.sh PRELOAD -- COMMAND [ARG...]: runs COMMAND where this CPU
# executes AVX-VNNI (vpdpbusd's VEX form: x86-64-avx2-vnni's code). Where
# /proc/cpuinfo lists avx_vnni, as it is. Where it does not, but the core
# executes the instruction and the kernel offers CPUID faulting (Sapphire
# and Emerald Rapids under KVM CPU models that hide the flag), with PRELOAD
# (bench/avx2_only.c with AVX2_ONLY_AVXVNNI=1: cpuid then reports AVX2 and
# AVX-VNNI without AVX-512, as an Alder Lake-N does; its constructor exits
# 2 where the core lacks the instruction or the faulting). Else exits 77
# (ctest's SKIP_RETURN_CODE), naming the flag.
set -eu
preload=$1
shift
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: avxvnni.sh PRELOAD -- COMMAND [ARG...]" >&2; exit 2; }
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
case " ${flags#*:} " in
  *" avx_vnni "*) exec "$@" ;;
esac
if [ -f "$preload" ] && AVX2_ONLY_AVXVNNI=1 LD_PRELOAD="$preload" /bin/true 2>/dev/null; then
  echo "avx_vnni: not in /proc/cpuinfo, but this core executes it: cpuid made to report it ($preload)"
  export AVX2_ONLY_AVXVNNI=1 LD_PRELOAD="$preload"
  exec "$@"
fi
echo "skipped: this CPU lacks avx_vnni"
exit 77

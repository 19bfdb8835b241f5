#!/bin/sh
# The runtime's size per target and port (bench/RESULTS.md, "Runtime
# size"): compiles runtime/*.c plus one port's ports/<port>/*.c with each
# target's compiler, as the build does (Release: -O3 -DNDEBUG -fPIC) and for
# size (-Os), and prints `size`'s text (code + read-only data) and data of
# the objects together. The last row is the ARMv7-A bare-metal build of
# the firmware example (arm-none-eabi-gcc + picolibc, -Os, Thumb-2), which
# ctest runtime/size-armv7-baremetal holds to its budget.
#
#   bench/runtime_size.sh [SOURCE_DIR]
set -eu
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common="-std=gnu99 -ffunction-sections -fdata-sections -I$src/abi -I$src/ports"

# measure LABEL PORT "CC FLAGS" SIZE: prints "text data"
measure() {
  rm -f "$tmp"/*.o
  for f in "$src"/runtime/*.c "$src"/ports/"$2"/*.c; do
    $3 $common -I"$src/ports/$2" -c "$f" -o "$tmp/$(basename "$f" .c).o"
  done
  $4 -t "$tmp"/*.o | awk '/\(TOTALS\)/ { print $1, $2 }'
}

row() { # label port cc size
  o3=$(measure "$1" "$2" "$3 -O3 -DNDEBUG -fPIC" "$4")
  os=$(measure "$1" "$2" "$3 -Os" "$4")
  printf '| %s | %s | %s | %s | %s |\n' "$1" "$2" "${o3% *}" "${os% *}" "${os#* }"
}

armv7="arm-linux-gnueabihf-gcc -march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard"
echo "| target | port | text, -O3 -fPIC (Release build) | text, -Os | data, -Os |"
echo "|---|---|---|---|---|"
row "x86-64 (gcc)" linux gcc size
row "x86-64 (gcc)" baremetal gcc size
row "armv7 Thumb-2 (arm-linux-gnueabihf-gcc)" linux "$armv7" arm-linux-gnueabihf-size
row "armv7 Thumb-2 (arm-linux-gnueabihf-gcc)" baremetal "$armv7" arm-linux-gnueabihf-size
row "aarch64 (aarch64-linux-gnu-gcc -mcpu=cortex-a72)" linux "aarch64-linux-gnu-gcc -mcpu=cortex-a72" aarch64-linux-gnu-size
row "aarch64 (aarch64-linux-gnu-gcc -mcpu=cortex-a72)" baremetal "aarch64-linux-gnu-gcc -mcpu=cortex-a72" aarch64-linux-gnu-size
if command -v arm-none-eabi-gcc >/dev/null 2>&1; then
  bm=$(measure fw baremetal "arm-none-eabi-gcc -march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mthumb --specs=picolibc.specs -Os" arm-none-eabi-size)
  printf '| %s | %s | %s | %s | %s |\n' "armv7-A Thumb-2 firmware (arm-none-eabi-gcc + picolibc)" baremetal "" "${bm% *}" "${bm#* }"
fi

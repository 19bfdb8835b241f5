#!/bin/sh
# ctest examples/consumer: install a tinyrt build into a temporary prefix,
# then build examples/consumer against it with CMake (find_package +
# tinyrt_add_model) and with make + pkg-config, natively and for each cross
# target given, and run each program (ARM under qemu-user).
#
#   test.sh BUILD_DIR SOURCE_DIR [armv7-neon] [aarch64-neon]
set -eu
build=$1 src=$2
shift 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tinyrt-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
start=$(date +%s)

step() { echo "== $*"; }
quiet() { # run a command, show its output only when it fails
  if ! "$@" >"$tmp/log" 2>&1; then cat "$tmp/log"; echo "FAILED: $*"; exit 1; fi
}

step "cmake --install $build --prefix $prefix"
quiet cmake --install "$build" --prefix "$prefix"
# A copy of the demo model, so that touching it leaves the build alone.
cp -r "$build/examples/models" "$tmp/demo"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"

for target in host "$@"; do
  case $target in
    host) toolchain= run= cc=cc ;;
    armv7-neon) toolchain=arm-linux-gnueabihf cc=arm-linux-gnueabihf-gcc
                run="qemu-arm -L /usr/arm-linux-gnueabihf -cpu cortex-a15" ;;
    aarch64-neon) toolchain=aarch64-linux-gnu cc=aarch64-linux-gnu-gcc
                  run="qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu cortex-a72" ;;
    *) echo "unknown target $target"; exit 2 ;;
  esac
  pkg=tinyrt
  [ "$target" = host ] || pkg=tinyrt-$target
  b=$tmp/cmake-$target
  set -- -DCMAKE_PREFIX_PATH="$prefix" -DDEMO_DIR="$tmp/demo"
  [ -z "$toolchain" ] || set -- "$@" -DCMAKE_TOOLCHAIN_FILE="$prefix/share/tinyrt/toolchains/$toolchain.cmake"

  step "$target: CMake, find_package(tinyrt) + tinyrt_add_model"
  quiet cmake -S "$src/examples/consumer" -B "$b" -G Ninja "$@"
  grep "tinyrt 0" "$tmp/log" || true
  quiet cmake --build "$b"
  $run "$b/consumer"

  if [ "$target" = host ]; then
    step "$target: rebuilds when the model or the options change, and only then"
    quiet cmake --build "$b"
    grep -q "no work to do" "$tmp/log" || { cat "$tmp/log"; echo "FAILED: an up-to-date build did work"; exit 1; }
    touch "$tmp/demo/demo/model.onnx"
    quiet cmake --build "$b"
    grep -q "tinyrt-compile demo" "$tmp/log" || { cat "$tmp/log"; echo "FAILED: no recompile after touching the model"; exit 1; }
    quiet cmake "$b" -DDEMO_OPTIONS="--max-arena-bytes;1000000"
    quiet cmake --build "$b"
    grep -q "tinyrt-compile demo" "$tmp/log" || { cat "$tmp/log"; echo "FAILED: no recompile after changing OPTIONS"; exit 1; }
    $run "$b/consumer" >/dev/null
  fi

  step "$target: make + pkg-config ($pkg): $(pkg-config --cflags --libs $pkg)"
  mkdir "$tmp/make-$target"
  (cd "$tmp/make-$target" && quiet make -f "$src/examples/consumer/Makefile" DEMO_DIR="$tmp/demo" PKG=$pkg CC=$cc)
  $run "$tmp/make-$target/consumer"
done
echo "examples/consumer: all passed in $(( $(date +%s) - start )) s"

#!/bin/sh
# Installs what tinyrt needs on Debian 12 (skips when everything is there).
set -eu
PACKAGES="build-essential cmake ninja-build llvm-dev libonnx-dev libprotobuf-dev protobuf-compiler
  libcli11-dev nlohmann-json3-dev libgtest-dev googletest libbenchmark-dev pkgconf
  gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
  gcc-arm-none-eabi picolibc-arm-none-eabi qemu-system-arm
  qemu-user libonnx-testdata python3-onnx python3-numpy python3-torch python3-torchvision
  python3-sklearn clang-14 libclang-rt-14-dev clang-format-14"
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "setup: all packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup: installing$missing"
# The package lists: updated unless they are under an hour old (.ci/run
# has just updated them).
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -60 2>/dev/null | head -n 1)" ]; then
  $SUDO apt-get update
fi
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing

#!/bin/sh
# Digest of every generated artifact for the model zoo and the torchvision
# models on each code generation target: a refactor that must not change
# code generation shows the same digests before and after.
#   scripts/object_digests.sh [BUILD_DIR] > digests.txt
# Needs the zoo and torchvision exports (ctest -R 'zoo/export|torchvision/export').
set -eu
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for model in "$build"/models/zoo/*/model.onnx "$build"/models/torchvision/*/model.onnx; do
  name=$(basename "$(dirname "$model")")
  for target in x86-64-avx2 x86-64-avx512-vnni armv7-neon aarch64-neon aarch64-neon-dot; do
    out="$work/$name-$target"
    "$build/tinyrt-compile" "$model" -o "$out" --name m --target "$target" >/dev/null
    for f in "$out"/m.o "$out"/m.h "$out"/m.json; do
      # The JSON's timings are the one part allowed to differ.
      if [ "${f##*.}" = json ]; then
        /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("compile_seconds",None); d.pop("pass_seconds",None); print(json.dumps(d,sort_keys=True))' "$f" | sha256sum | sed "s#-#$name/$target/m.json#"
      else
        sha256sum "$f" | sed "s#$out#$name/$target#"
      fi
    done
  done
done

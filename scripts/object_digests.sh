#!/bin/sh
# Digest of every generated artifact for the model zoo and the torchvision
# models on each code generation target: a refactor that must not change
# code generation shows the same digests before and after.
#   scripts/object_digests.sh [BUILD_DIR] > digests.txt
# With CODE_ONLY=1 each object's .text alone (llvm-objcopy-14), and the
# JSON's arena, weights and code bytes and step count: a change of the
# descriptor (an ABI field appended) that must not change the code.
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
    if [ "${CODE_ONLY:-0}" = 1 ]; then
      llvm-objcopy-14 -O binary --only-section=.text "$out/m.o" "$out/text.bin"
      sha256sum "$out/text.bin" | sed "s#$out/text.bin#$name/$target/text#"
      /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["arena_bytes"], d["weights_bytes"], d["code_bytes"], len(d["fusion_groups"]), sys.argv[2])' \
        "$out/m.json" "$name/$target/sizes"
      continue
    fi
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

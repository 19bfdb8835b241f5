#!/bin/sh
# Executed guest instructions per inference on the ARM targets, counted
# under qemu (cortex-a15 / cortex-a72) by tinyrt's TCG plugin: a repeatable
# cost figure where emulated wall time means nothing.
#   bench/arm_instructions.sh [MODEL...]
# MODEL: the six torchvision models and the edge zoo (tests/models/
# export_zoo.py) by default; any name of either export script. Missing
# models are exported into $BENCH_MODELS/{torchvision,zoo}.
# Environment:
#   BENCH_TINYRT  build tree whose tinyrt-perf is measured (default build),
#                 so that two trees can be compared on the same models
#   BENCH_MODELS  where the exported models live (default build/models)
set -eu
cd "$(dirname "$0")/.."
TINYRT=${BENCH_TINYRT:-build}
MODEL_ROOT=${BENCH_MODELS:-build/models}
TV_MODELS="resnet18 mobilenet_v2 squeezenet1_1 mobilenet_v3_small shufflenet_v2_x0_5 googlenet"
ZOO_MODELS=$(/usr/bin/python3 -c 'import ast, sys
t = ast.parse(open("tests/models/export_zoo.py").read())
z = next(n.value for n in t.body if isinstance(n, ast.Assign) and n.targets[0].id == "ZOO")
print(" ".join(k.value for k in z.keys))')
MODELS=${*:-"$TV_MODELS $ZOO_MODELS"}
[ -x "$TINYRT/tinyrt-perf" ] || { echo "no $TINYRT/tinyrt-perf (BENCH_TINYRT)" >&2; exit 1; }
# torchvision's six by name, everything else from the zoo.
is_tv() { case " $TV_MODELS " in *" $1 "*) return 0 ;; esac; return 1; }
model_path() { if is_tv "$1"; then echo "$MODEL_ROOT/torchvision/$1/model.onnx"; else echo "$MODEL_ROOT/zoo/$1/model.onnx"; fi; }
tv=""; zoo=""
for m in $MODELS; do if is_tv "$m"; then tv="$tv $m"; else zoo="$zoo $m"; fi; done
[ -z "$tv" ] || /usr/bin/python3 tests/models/export_torchvision.py "$MODEL_ROOT/torchvision" $tv >/dev/null
[ -z "$zoo" ] || PYTHONWARNINGS=ignore /usr/bin/python3 tests/models/export_zoo.py "$MODEL_ROOT/zoo" $zoo >/dev/null
echo "| model | armv7-neon instructions | aarch64-neon instructions | armv7 / aarch64 | code bytes (a64) |"
echo "|---|---|---|---|---|"
for m in $MODELS; do
  p=$(model_path "$m")
  a=$("$TINYRT/tinyrt-perf" "$p" --target armv7-neon --json)
  b=$("$TINYRT/tinyrt-perf" "$p" --target aarch64-neon --json)
  ai=$(echo "$a" | sed 's/.*"guest_instructions":\([0-9]*\).*/\1/')
  bi=$(echo "$b" | sed 's/.*"guest_instructions":\([0-9]*\).*/\1/')
  cb=$(echo "$b" | sed 's/.*"code_bytes":\([0-9]*\).*/\1/')
  echo "| $m | $ai | $bi | $(awk "BEGIN { printf \"%.2f\", $ai / $bi }") | $cb |"
done
echo
echo "tinyrt=$TINYRT"

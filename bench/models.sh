# models.sh — sourced by the benchmark scripts (from the project root, with
# the script's model arguments as "$@"): which tree is measured, which
# models, where each one's ONNX file is; exports the missing ones.
#   BENCH_TINYRT  build tree whose tinyrt-perf is measured (default build)
#   BENCH_MODELS  where the exported models live (default build/models)
#   BENCH_FLAGS   extra tinyrt-perf options (compile options such as
#                 "--winograd off"), so that two configurations can be compared
# Sets TINYRT, FLAGS, MODELS (the arguments, or the six torchvision models and the
# edge zoo; v_* names are bench/export_variants.py's; an argument ending in
# .onnx is that file, e.g. a QDQ model build/models/torchvision/resnet18/qdq.onnx)
# and model_path NAME.
TINYRT=${BENCH_TINYRT:-build}
FLAGS=${BENCH_FLAGS:-}
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
# Variants (bench/export_variants.py) are named v_*; not in the default set.
is_variant() { case "$1" in v_*) return 0 ;; esac; return 1; }
model_path() {
  case "$1" in *.onnx) echo "$1"; return ;; esac  # a path as it is
  if is_tv "$1"; then echo "$MODEL_ROOT/torchvision/$1/model.onnx"
  elif is_variant "$1"; then echo "$MODEL_ROOT/variants/$1/model.onnx"
  else echo "$MODEL_ROOT/zoo/$1/model.onnx"; fi
}
tv=""; zoo=""; var=""
for m in $MODELS; do
  case "$m" in *.onnx) continue ;; esac
  if is_tv "$m"; then tv="$tv $m"; elif is_variant "$m"; then var="$var $m"; else zoo="$zoo $m"; fi
done
[ -z "$tv" ] || /usr/bin/python3 tests/models/export_torchvision.py "$MODEL_ROOT/torchvision" $tv >/dev/null
[ -z "$zoo" ] || PYTHONWARNINGS=ignore /usr/bin/python3 tests/models/export_zoo.py "$MODEL_ROOT/zoo" $zoo >/dev/null
[ -z "$var" ] || PYTHONWARNINGS=ignore /usr/bin/python3 bench/export_variants.py "$MODEL_ROOT/variants" $var >/dev/null 2>&1

# The geomean of ratios over the models: geo_add NUM DEN per model, then
# geo_mean FORMAT prints it (nothing when no model was added); geo_count
# counts them.
geo_logsum=0; geo_count=0
geo_add() { geo_logsum=$(awk "BEGIN { print $geo_logsum + log($1 / $2) }"); geo_count=$((geo_count + 1)); }
geo_mean() { [ "$geo_count" = 0 ] || awk "BEGIN { printf \"$1\", exp($geo_logsum / $geo_count) }"; }

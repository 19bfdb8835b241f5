#!/bin/sh
# Regenerates the op table in docs/OPERATORS.md from the compiler itself
# (tinyrt-compile --list-ops). tests/docs checks that it is up to date.
set -eu
cd "$(dirname "$0")/.."
doc=docs/OPERATORS.md
table=$(build/tinyrt-compile --list-ops)
awk -v table="$table" '
  /<!-- BEGIN GENERATED/ { print; print table; skip = 1; next }
  /<!-- END GENERATED/ { skip = 0 }
  !skip { print }' "$doc" > "$doc.tmp"
mv "$doc.tmp" "$doc"

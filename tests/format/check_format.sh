#!/bin/sh
# Every C and C++ file of the project follows .clang-format (clang-format-14
# reports the first lines that differ). To format: clang-format-14 -i FILES.
set -eu
cd "$(dirname "$0")/../.."
files=$(git ls-files '*.c' '*.h' '*.cpp')
clang-format-14 --dry-run --Werror $files
echo "format: $(echo "$files" | wc -l) files follow .clang-format"

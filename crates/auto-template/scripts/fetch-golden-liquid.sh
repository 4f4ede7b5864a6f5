#!/bin/sh
# Puts the public golden-liquid suite at tests/golden/golden_liquid.json (ignored by git), where
# tests/golden.rs finds it, and its benchmark fixture 002 under tests/golden/benchmark/. The
# suite is MIT licensed and not part of this repository.
# Usage: scripts/fetch-golden-liquid.sh            downloads it
#        scripts/fetch-golden-liquid.sh GIT_DIR    copies it from a clone of jg-rp/golden-liquid
set -eu
cd "$(dirname "$0")/.."
mkdir -p tests/golden/benchmark
fixture=benchmark_fixtures/002
if [ $# -ge 1 ]; then
  git -C "$1" show HEAD:golden_liquid.json >tests/golden/golden_liquid.json
  git -C "$1" show HEAD:$fixture/templates/index.liquid >tests/golden/benchmark/index.liquid
  git -C "$1" show HEAD:$fixture/data.json >tests/golden/benchmark/data.json
  git -C "$1" show HEAD:$fixture/expected_result.txt >tests/golden/benchmark/expected_result.txt
else
  base=https://raw.githubusercontent.com/jg-rp/golden-liquid/main
  curl -fsSL "$base/golden_liquid.json" -o tests/golden/golden_liquid.json
  curl -fsSL "$base/$fixture/templates/index.liquid" -o tests/golden/benchmark/index.liquid
  curl -fsSL "$base/$fixture/data.json" -o tests/golden/benchmark/data.json
  curl -fsSL "$base/$fixture/expected_result.txt" -o tests/golden/benchmark/expected_result.txt
fi
echo "tests/golden/golden_liquid.json"
echo "tests/golden/benchmark/"

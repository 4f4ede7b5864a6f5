#!/bin/sh
# Downloads the public golden-liquid suite to tests/golden/golden_liquid.json (ignored by git),
# where tests/golden.rs finds it. The suite is MIT licensed and not part of this repository.
set -eu
cd "$(dirname "$0")/.."
mkdir -p tests/golden
curl -fsSL https://raw.githubusercontent.com/jg-rp/golden-liquid/main/golden_liquid.json \
  -o tests/golden/golden_liquid.json
echo "tests/golden/golden_liquid.json"
mkdir -p tests/golden/benchmark
base=https://raw.githubusercontent.com/jg-rp/golden-liquid/main/benchmark_fixtures/002
curl -fsSL "$base/templates/index.liquid" -o tests/golden/benchmark/index.liquid
curl -fsSL "$base/data.json" -o tests/golden/benchmark/data.json
curl -fsSL "$base/expected_result.txt" -o tests/golden/benchmark/expected_result.txt
echo "tests/golden/benchmark/"

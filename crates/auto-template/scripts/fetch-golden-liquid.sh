#!/bin/sh
# Downloads the public golden-liquid suite to tests/golden/golden_liquid.json (ignored by git),
# where tests/golden.rs finds it. The suite is MIT licensed and not part of this repository.
set -eu
cd "$(dirname "$0")/.."
mkdir -p tests/golden
curl -fsSL https://raw.githubusercontent.com/jg-rp/golden-liquid/main/golden_liquid.json \
  -o tests/golden/golden_liquid.json
echo "tests/golden/golden_liquid.json"

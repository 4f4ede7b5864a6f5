#!/bin/sh
# Times this engine (benches/render.rs) and LiquidJS (bench/liquidjs/bench.js) on the same
# templates, one after the other on the same machine, and prints LiquidJS's time over ours.
# Usage: bench/compare.sh [ROUNDS]  (default 3 rounds; each figure is the median of the rounds)
# Needs node, `npm install liquidjs` in bench/liquidjs, and cargo.
set -eu
cd "$(dirname "$0")/.."
rounds="${1:-3}"
target="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | sed 's/.*"target_directory":"\([^"]*\)".*/\1/')}"
out=$(mktemp -d)
i=1
while [ "$i" -le "$rounds" ]; do
  (cd bench/liquidjs && node bench.js) >"$out/js.$i"
  # CRITERION_ARGS, such as "--measurement-time 2 --warm-up-time 1", shortens a round.
  # shellcheck disable=SC2086
  cargo bench -q -p auto-template --bench render -- --noplot ${CRITERION_ARGS:-} >/dev/null 2>&1
  for b in prompt/parse prompt/render golden-002/parse golden-002/render; do
    est="$target/criterion/$(echo "$b" | tr / _)/new/estimates.json"
    [ -f "$est" ] || continue
    # criterion's median point estimate, in ns
    ns=$(sed 's/.*"median":{"confidence_interval":{[^}]*},"point_estimate":\([0-9.e+-]*\).*/\1/' "$est")
    echo "$b $ns" >>"$out/rs.$i"
  done
  i=$((i + 1))
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf '%-20s %12s %12s %8s\n' bench "ours µs" "LiquidJS µs" ratio
for b in prompt/parse prompt/render golden-002/parse golden-002/render; do
  rs=$(cat "$out"/rs.* | awk -v b="$b" '$1==b {print $2/1000}' | median)
  js=$(cat "$out"/js.* | awk -v b="$b" '$1==b {print $2}' | median)
  [ -n "$rs" ] && [ -n "$js" ] || continue
  printf '%-20s %12.2f %12.1f %7.1fx\n' "$b" "$rs" "$js" "$(echo "$js $rs" | awk '{print $1/$2}')"
done
rm -r "$out"

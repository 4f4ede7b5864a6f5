#!/usr/bin/env bash
# The Studio's tests: the unit tests (node --test), then the browser test against a fresh
# `auto serve` whose model provider is the provider emulator aimock (scripts/aimock), so the
# review-and-approve workflow's reasoning function really calls a model API (and a reasoning
# function calls the MCP reference server "everything", scripts/mcp-everything, or
# AUTO_MCP_EVERYTHING, over stdio, for a run's tool calls), and then the
# browser test of a server with keys (tests/auth.mjs, which starts its own `auto serve`).
#
#   studio/tests/run.sh [--auto PATH] [--shots DIR]
#
# AUTO_REPO is the repository (default: the folder above studio/). AUTO_BIN (or --auto) names
# the server binary; by default target/release/auto, then target/debug/auto of the repository.
# AUTO_AIMOCK names aimock's executable; by default the repository's scripts/aimock installs it.
# Chromium is Debian's /usr/bin/chromium (apt-get install -y chromium), or CHROMIUM.
# When the server does not serve this build of the Studio at /studio/, tests/serve.mjs serves
# studio/dist in front of it (STUDIO_PROXY=1 forces that).
set -euo pipefail
studio="$(cd "$(dirname "$0")/.." && pwd)"
repo="${AUTO_REPO:-$(cd "$studio/.." && pwd)}"
auto="${AUTO_BIN:-}"
shots=""
while [ $# -gt 0 ]; do
    case "$1" in
        --auto) auto="$2"; shift 2 ;;
        --shots) shots="$2"; shift 2 ;;
        *) echo "usage: $0 [--auto PATH] [--shots DIR]" >&2; exit 2 ;;
    esac
done
if [ -z "$auto" ]; then
    for candidate in "$repo/target/release/auto" "$repo/target/debug/auto"; do
        if [ -x "$candidate" ]; then auto="$candidate"; break; fi
    done
fi
[ -x "$auto" ] || { echo "studio/tests/run.sh: no auto binary: build it, or pass --auto PATH" >&2; exit 1; }
# The server starts from the work folder, so a relative path (target/debug/auto) is made absolute.
auto="$(cd "$(dirname "$auto")" && pwd)/$(basename "$auto")"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || { echo "studio/tests/run.sh: no Chromium at ${CHROMIUM:-/usr/bin/chromium}: apt-get install -y chromium" >&2; exit 1; }
[ -d "$studio/node_modules" ] || (cd "$studio" && npm ci --no-audit --no-fund --loglevel=error)
[ -f "$studio/dist/index.html" ] || (cd "$studio" && npm run build)

echo "== unit tests"
(cd "$studio" && node --test tests/*.test.mjs)

aimock="${AUTO_AIMOCK:-$("$repo/scripts/aimock")}"
work="$(mktemp -d)"
shots="${shots:-$work/shots}"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
wait_for() { # url, what
    for _ in $(seq 1 150); do
        if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
        sleep 0.2
    done
    echo "studio/tests/run.sh: $2 did not answer at $1" >&2
    return 1
}

# aimock asks the echo function's model call for the echo tool, answers it once the tool's
# result came back, and answers every other model call with the same review.
cat >"$work/fixtures.json" <<'JSON'
{"fixtures":[
{"match":{"toolResultContains":"Echo: hello"},"response":{"content":"The tool echoed: hello."}},
{"match":{"userMessage":"through the echo tool"},"response":{"toolCalls":[{"name":"everything__echo","arguments":"{\"message\":\"hello\"}"}]}},
{"match":{},"response":{"content":"The audience, offer, budget and target are all stated. Recommend: Ready."}}
]}
JSON
echo "{\"llm\":{\"fixtures\":\"$work/fixtures.json\",\"logLevel\":\"warn\"}}" >"$work/aimock.json"
"$aimock" --config "$work/aimock.json" --port 0 --host 127.0.0.1 >"$work/aimock.log" 2>&1 &
pids+=($!)
aimock_url=""
for _ in $(seq 1 100); do
    aimock_url="$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$work/aimock.log" | head -1)"
    [ -n "$aimock_url" ] && break
    sleep 0.2
done
[ -n "$aimock_url" ] || { echo "aimock did not start: $(cat "$work/aimock.log")" >&2; exit 1; }

port="$(free_port)"
echo "aimock-test-key" >"$work/provider-key"
cat >"$work/auto.toml" <<TOML
listen = "127.0.0.1:$port"
database = "sqlite://$work/auto.db"

[providers.anthropic]
base_url = "${aimock_url%/}"
api_key = { file = "$work/provider-key" }
TOML
# The MCP reference server "everything" over stdio, for a reasoning run's tool calls.
everything="${AUTO_MCP_EVERYTHING:-$("$repo/scripts/mcp-everything")}"
cat >>"$work/auto.toml" <<TOML

[[tool_servers]]
name = "everything"
command = ["$everything", "stdio"]
orgs = ["studio-test"]
TOML
(cd "$work" && exec "$auto" serve --config "$work/auto.toml" >"$work/auto.log" 2>&1) &
pids+=($!)
wait_for "http://127.0.0.1:$port/healthz" "auto serve" || { cat "$work/auto.log" >&2; exit 1; }

base="http://127.0.0.1:$port"
index="$(curl -s "$base/studio/" || true)"
expected="$(cat "$studio/dist/index.html")"
if [ "${STUDIO_PROXY:-0}" = "1" ] || [ "$index" != "$expected" ]; then
    proxy_port="$(free_port)"
    echo "note: $auto does not serve this build of the Studio: tests/serve.mjs serves studio/dist in front of it"
    node "$studio/tests/serve.mjs" --upstream "$base" --port "$proxy_port" >"$work/serve.log" 2>&1 &
    pids+=($!)
    base="http://127.0.0.1:$proxy_port"
    wait_for "$base/studio/" "tests/serve.mjs"
fi

echo "== browser test against $base"
status=0
node "$studio/tests/browser.mjs" --base "$base" --shots "$shots" --tools everything || status=$?

# The same Studio against a server with keys: an admin, a runner and a viewer of acme.
echo "== browser test with keys (tests/auth.mjs)"
node "$studio/tests/auth.mjs" --auto "$auto" --shots "$shots" || status=$?
exit "$status"

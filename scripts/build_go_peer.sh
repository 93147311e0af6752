#!/usr/bin/env bash
# Builds the Go peer of bench/reconcile.py (bench/peers/go-darkroom/: the seed's Darkroom operator on
# controller-runtime, a benchmark peer, not product code) from the Go module proxy into
# bench/peers/go-darkroom/bin/go-darkroom. bench/peers/go-darkroom/ is its own Go module: its go.mod names
# controller-runtime's release and its go.sum pins every module's hash, so the build is the same everywhere.
#
# Steps, each named when it fails with the command to retry: find Go, download and verify the modules, build
# (under `nice -n 15`: the machine's cores are shared with the tests). The Go build cache makes a warm build take
# seconds; the first (cold) one a minute or two. Up to date when the binary is newer than go.mod, go.sum, every
# .go file and this script.
# Prints the binary's path on stdout (callers run it from there).
# A fresh checkout takes the binary built before from the same inputs, when there is one (scripts/go_binary_cache.sh).
# Exit codes: 0 built/up to date, 3 no Go toolchain (the caller decides whether that is fatal), 1 failed.
set -uo pipefail

. "$(dirname "$0")/go_binary_cache.sh"
cd "$(dirname "$0")/../bench/peers/go-darkroom"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0
BIN=bin/go-darkroom
LOG=bin/build.log
mkdir -p bin

if ! command -v go >/dev/null 2>&1; then
    echo "build_go_peer: no Go toolchain on PATH (bench/peers/go-darkroom/ needs Go >= 1.26)" >&2
    exit 3
fi

if [ -x "$BIN" ] && [ -z "$(find go.mod go.sum ./*.go ../../../scripts/build_go_peer.sh -newer "$BIN" -print -quit)" ]; then
    echo "$PWD/$BIN"
    exit 0
fi

KEY=$(go_cache_key go.mod go.sum ./*.go)
if go_cache_restore go-darkroom "$KEY" "$BIN"; then
    echo "$PWD/$BIN"
    exit 0
fi

fail() {
    echo "build_go_peer: step '$1' failed; the last lines of its output (bench/peers/go-darkroom/$LOG):" >&2
    tail -n 25 "$LOG" | sed 's/^/    /' >&2
    echo "build_go_peer: retry with: (cd bench/peers/go-darkroom && $2)" >&2
    echo "build_go_peer: a module the proxy does not serve shows as '404 Not Found' or 'unknown revision' above;" >&2
    echo "               a network failure as 'dial tcp' or 'i/o timeout' (retrying usually helps)." >&2
    exit 1
}

started=$(date +%s)
CR_VERSION=$(sed -n 's|^[[:space:]]*sigs.k8s.io/controller-runtime \(v[^ ]*\).*|\1|p' go.mod)
echo "build_go_peer: $(go version | cut -d' ' -f3) building the Go peer on controller-runtime $CR_VERSION (cold: a minute or two; warm: seconds)" >&2
go mod download >"$LOG" 2>&1 || fail "download modules" "GOTOOLCHAIN=local go mod download"
go mod verify >>"$LOG" 2>&1 || fail "verify modules" "GOTOOLCHAIN=local go mod verify"
nice -n 15 go build -trimpath -ldflags "-s -w" -o "$BIN.tmp" . >>"$LOG" 2>&1 ||
    fail "compile" "GOTOOLCHAIN=local go build -o $BIN ."
mv "$BIN.tmp" "$BIN"
go_cache_keep go-darkroom "$KEY" "$BIN"
echo "build_go_peer: built bench/peers/go-darkroom/$BIN in $(( $(date +%s) - started )) s" >&2
echo "$PWD/$BIN"

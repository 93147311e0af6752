#!/usr/bin/env bash
# Builds ORY Hydra (the OpenID Connect provider the identity tests log users in with) from the Go module
# proxy into realcluster/bin/hydra. Called by the test suite before it starts one (tests/identityprovider.py).
#
# Steps, each named when it fails with the command to retry: find Go and a C compiler (SQLite is cgo), download
# the modules (Go module proxy), build. realcluster/oidc/ is its own Go module (Hydra's dependencies stay out of
# realcluster's). The Go build cache makes a warm build take seconds; the first (cold) one takes minutes.
# Up to date when the binary is newer than every source file.
# A fresh checkout takes the binary built before from the same inputs, when there is one (scripts/go_binary_cache.sh).
# Exit codes: 0 built/up to date, 3 no Go toolchain or no C compiler (the caller decides whether that is fatal), 1 failed.
set -uo pipefail

. "$(dirname "$0")/go_binary_cache.sh"
cd "$(dirname "$0")/../realcluster/oidc"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=1
BIN=../bin/hydra
LOG=../bin/hydra-build.log
mkdir -p ../bin

if ! command -v go >/dev/null 2>&1; then
    echo "build_hydra: no Go toolchain on PATH (realcluster/oidc/ needs Go >= 1.26; see docs/development/realcluster.md)" >&2
    exit 3
fi
if ! command -v "${CC:-gcc}" >/dev/null 2>&1; then
    echo "build_hydra: no C compiler (${CC:-gcc}) on PATH: Hydra's SQLite store is cgo" >&2
    exit 3
fi

if [ -x "$BIN" ] && [ -z "$(find . -newer "$BIN" \( -name '*.go' -o -name go.mod -o -name go.sum \) -print -quit)" ]; then
    exit 0
fi

KEY=$(go_cache_key $(find . \( -name '*.go' -o -name go.mod -o -name go.sum \)))
if go_cache_restore hydra "$KEY" "$BIN"; then
    exit 0
fi

fail() {
    echo "build_hydra: step '$1' failed; the last lines of its output (realcluster/bin/hydra-build.log):" >&2
    tail -n 25 "$LOG" | sed 's/^/    /' >&2
    echo "build_hydra: retry with: (cd realcluster/oidc && $2)" >&2
    echo "build_hydra: a module the proxy does not serve shows as '404 Not Found', 'not available' or 'unknown revision' above;" >&2
    echo "             a network failure as 'dial tcp' or 'i/o timeout' (retrying usually helps)." >&2
    exit 1
}

started=$(date +%s)
HYDRA_VERSION=$(sed -n 's|^[[:space:]]*github.com/ory/hydra/v2 \(v[^ ]*\).*|\1|p' go.mod)
echo "build_hydra: $(go version | cut -d' ' -f3) building ORY Hydra $HYDRA_VERSION with SQLite (cold: a few minutes; warm: under a minute)" >&2
go mod download >"$LOG" 2>&1 || fail "download modules" "GOTOOLCHAIN=local go mod download"
go mod verify >>"$LOG" 2>&1 || fail "verify modules" "GOTOOLCHAIN=local go mod verify"
LDFLAGS="-s -w -X github.com/ory/hydra/v2/driver/config.Version=$HYDRA_VERSION"
go build -tags sqlite -trimpath -ldflags "$LDFLAGS" -o "$BIN.tmp" github.com/ory/hydra/v2 >>"$LOG" 2>&1 ||
    fail "compile" "GOTOOLCHAIN=local go build -tags sqlite -o ../bin/hydra github.com/ory/hydra/v2"
mv "$BIN.tmp" "$BIN"
go_cache_keep hydra "$KEY" "$BIN"
echo "build_hydra: built realcluster/bin/hydra in $(( $(date +%s) - started )) s" >&2

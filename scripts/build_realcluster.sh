#!/usr/bin/env bash
# Builds realcluster/ (the real Kubernetes control plane the tests use as referee) into
# realcluster/bin/realcluster. Called by `make realcluster` and by the test suite before it starts one.
#
# Steps, each named when it fails with the command to retry: find Go, download the modules (Go module
# proxy), build. The Go build cache makes a warm build take seconds; the first (cold) one compiles
# Kubernetes and takes minutes. Up to date when the binary is newer than every source file.
# A fresh checkout takes the binary built before from the same inputs, when there is one (scripts/go_binary_cache.sh).
# Exit codes: 0 built/up to date, 3 no Go toolchain (the caller decides whether that is fatal), 1 failed.
set -uo pipefail

. "$(dirname "$0")/go_binary_cache.sh"
cd "$(dirname "$0")/../realcluster"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
KUBE_VERSION=v1.37.2
BIN=bin/realcluster
LOG=bin/build.log
mkdir -p bin

if ! command -v go >/dev/null 2>&1; then
    echo "build_realcluster: no Go toolchain on PATH (realcluster/ needs Go >= 1.26; see docs/development/realcluster.md)" >&2
    exit 3
fi

if [ -x "$BIN" ] && [ -z "$(find . -newer "$BIN" \( -name '*.go' -o -name go.mod -o -name go.sum \) -not -path './bin/*' -not -path './oidc/*' -print -quit)" ]; then
    exit 0
fi

KEY=$(go_cache_key $(find . \( -name '*.go' -o -name go.mod -o -name go.sum \) -not -path './bin/*' -not -path './oidc/*'))
if go_cache_restore realcluster "$KEY" "$BIN"; then
    exit 0
fi

fail() {
    echo "build_realcluster: step '$1' failed; the last lines of its output ($LOG):" >&2
    tail -n 25 "$LOG" | sed 's/^/    /' >&2
    echo "build_realcluster: retry with: (cd realcluster && $2)" >&2
    echo "build_realcluster: a module the proxy does not serve shows as '404 Not Found' or 'unknown revision' above;" >&2
    echo "                   a network failure as 'dial tcp' or 'i/o timeout' (retrying usually helps)." >&2
    exit 1
}

started=$(date +%s)
echo "build_realcluster: $(go version | cut -d' ' -f3) building kube-apiserver, kube-controller-manager, kube-scheduler $KUBE_VERSION + etcd (cold: several minutes; warm: seconds)" >&2
go mod download >"$LOG" 2>&1 || fail "download modules" "GOTOOLCHAIN=local go mod download"
go mod verify >>"$LOG" 2>&1 || fail "verify modules" "GOTOOLCHAIN=local go mod verify"
LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
go build -trimpath -ldflags "$LDFLAGS" -o "$BIN.tmp" . >>"$LOG" 2>&1 || fail "compile" "GOTOOLCHAIN=local go build -o $BIN ."
mv "$BIN.tmp" "$BIN"
go_cache_keep realcluster "$KEY" "$BIN"
echo "build_realcluster: built $BIN in $(( $(date +%s) - started )) s" >&2

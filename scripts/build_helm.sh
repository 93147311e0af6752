#!/usr/bin/env bash
# Builds Helm (the chart tool `make chart`, `make release` and tests/deploy/test_chart.py drive) from the Go module
# proxy into tools/helm/bin/helm. tools/helm/ is its own Go module: its go.mod names the Helm release as a `tool`
# and its go.sum pins every module's hash, so the build is the same everywhere and nothing is installed by hand.
#
# Steps, each named when it fails with the command to retry: find Go, download and verify the modules, build
# (under `nice -n 15`: the machine's cores are shared with the tests). The Go build cache makes a warm build take
# seconds; the first (cold) one a few minutes. Up to date when the binary is newer than go.mod, go.sum and this script.
# Prints the binary's path on stdout (callers run it from there).
# A fresh checkout takes the binary built before from the same inputs, when there is one (scripts/go_binary_cache.sh).
# Exit codes: 0 built/up to date, 3 no Go toolchain (the caller decides whether that is fatal), 1 failed.
set -uo pipefail

. "$(dirname "$0")/go_binary_cache.sh"
cd "$(dirname "$0")/../tools/helm"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0
BIN=bin/helm
LOG=bin/build.log
mkdir -p bin

if ! command -v go >/dev/null 2>&1; then
    echo "build_helm: no Go toolchain on PATH (tools/helm/ needs Go >= 1.26)" >&2
    exit 3
fi

if [ -x "$BIN" ] && [ -z "$(find go.mod go.sum ../../scripts/build_helm.sh -newer "$BIN" -print -quit)" ]; then
    echo "$PWD/$BIN"
    exit 0
fi

KEY=$(go_cache_key go.mod go.sum)
if go_cache_restore helm "$KEY" "$BIN"; then
    echo "$PWD/$BIN"
    exit 0
fi

fail() {
    echo "build_helm: step '$1' failed; the last lines of its output (tools/helm/$LOG):" >&2
    tail -n 25 "$LOG" | sed 's/^/    /' >&2
    echo "build_helm: retry with: (cd tools/helm && $2)" >&2
    echo "build_helm: a module the proxy does not serve shows as '404 Not Found' or 'unknown revision' above;" >&2
    echo "            a network failure as 'dial tcp' or 'i/o timeout' (retrying usually helps)." >&2
    exit 1
}

started=$(date +%s)
HELM_VERSION=$(sed -n 's|^[[:space:]]*helm.sh/helm/v3 \(v[^ ]*\).*|\1|p' go.mod)
echo "build_helm: $(go version | cut -d' ' -f3) building Helm $HELM_VERSION (cold: a few minutes; warm: seconds)" >&2
go mod download >"$LOG" 2>&1 || fail "download modules" "GOTOOLCHAIN=local go mod download"
go mod verify >>"$LOG" 2>&1 || fail "verify modules" "GOTOOLCHAIN=local go mod verify"
# As Helm's own Makefile: the Kubernetes version `helm template` and `helm lint` assume is its client-go's (v0.N -> 1.N),
# not the v1.20 compiled in otherwise (which the chart's kubeVersion refuses).
KUBE_MINOR=$(go list -f '{{.Version}}' -m k8s.io/client-go 2>>"$LOG" | cut -d. -f2)
[ -n "$KUBE_MINOR" ] || fail "read client-go's version" "GOTOOLCHAIN=local go list -m k8s.io/client-go"
LDFLAGS="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
    LDFLAGS="$LDFLAGS -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$KUBE_MINOR"
done
nice -n 15 go build -trimpath -ldflags "$LDFLAGS" -o "$BIN.tmp" helm.sh/helm/v3/cmd/helm >>"$LOG" 2>&1 ||
    fail "compile" "GOTOOLCHAIN=local go build -o $BIN helm.sh/helm/v3/cmd/helm"
mv "$BIN.tmp" "$BIN"
go_cache_keep helm "$KEY" "$BIN"
echo "build_helm: built tools/helm/$BIN in $(( $(date +%s) - started )) s" >&2
echo "$PWD/$BIN"

#!/usr/bin/env bash
# `make deploy` / `make undeploy`: install or remove Darkroom Control Panel on the current kubectl
# context with kubectl's built-in kustomize. See deploy/README.md ("Deploy to a cluster").
#
#   scripts/deploy.sh deploy   [OVERLAY]   OVERLAY: dev (default), production, or a kustomization directory
#   scripts/deploy.sh undeploy [OVERLAY]
#
# deploy: creates the namespace and, only if it does not exist yet, the Secret darkroom-api with a
# random secret-key (signs session cookies and CSRF tokens) and, when DARKROOM_API_OIDC_CLIENT_SECRET is set in
# the environment, the OIDC client's secret as oidc-client-secret (fed to kubectl on stdin, never on a command
# line), then server-side applies the overlay. undeploy: deletes every object of the overlay labelled
# app.kubernetes.io/part-of=darkroom-control-panel — everything but the CRDs, so the Darkrooms and
# Tasks in the cluster survive. KUBECTL overrides the kubectl command (e.g. "kubectl --context x").
set -euo pipefail

usage() { echo "usage: $0 deploy|undeploy [dev|production|DIR]" >&2; exit 2; }
action=${1:-}
overlay=${2:-dev}
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -d "$overlay" ]; then dir=$overlay; else dir="$root/deploy/overlays/$overlay"; fi
[ -d "$dir" ] || { echo "deploy.sh: no overlay '$overlay' (dev, production or a kustomization directory)" >&2; exit 2; }
read -r -a kubectl <<< "${KUBECTL:-kubectl}"
namespace=darkroom-system
part_of=app.kubernetes.io/part-of=darkroom-control-panel

random_hex() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }

case "$action" in
deploy)
    "${kubectl[@]}" get namespace "$namespace" >/dev/null 2>&1 || "${kubectl[@]}" create namespace "$namespace"
    if ! "${kubectl[@]}" -n "$namespace" get secret darkroom-api >/dev/null 2>&1; then
        client_secret=""
        if [ -n "${DARKROOM_API_OIDC_CLIENT_SECRET:-}" ]; then
            # base64 in `data`: no quoting of whatever characters the provider put in the secret
            client_secret="  oidc-client-secret: $(printf '%s' "$DARKROOM_API_OIDC_CLIENT_SECRET" | base64 | tr -d '\n')"
        fi
        "${kubectl[@]}" create -f - >/dev/null <<SECRET
apiVersion: v1
kind: Secret
metadata:
  name: darkroom-api
  namespace: $namespace
  labels:
    app.kubernetes.io/part-of: darkroom-control-panel
type: Opaque
data:
  secret-key: $(random_hex | base64 | tr -d '\n')
$client_secret
SECRET
        echo "deploy.sh: created Secret $namespace/darkroom-api (secret-key${client_secret:+, oidc-client-secret})"
    fi
    "${kubectl[@]}" apply --server-side --field-manager=darkroom-deploy -k "$dir"
    ;;
undeploy)
    "${kubectl[@]}" delete -k "$dir" -l "$part_of" --ignore-not-found
    ;;
*)
    usage
    ;;
esac

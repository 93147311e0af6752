#!/usr/bin/env bash
# `make deploy` / `make undeploy`: install or remove Darkroom Control Panel on the current kubectl
# context with kubectl's built-in kustomize. See docs/operations/deploy.md ("Deploy to a cluster").
#
#   scripts/deploy.sh deploy   [OVERLAY]   OVERLAY: dev (default), production, or a kustomization directory
#   scripts/deploy.sh undeploy [OVERLAY]
#
# deploy: creates the namespace and, only if it does not exist yet, the Secret darkroom-api with a
# random secret-key (signs session cookies and CSRF tokens) and, when DARKROOM_API_OIDC_CLIENT_SECRET is set in
# the environment, the OIDC client's secret as oidc-client-secret (fed to kubectl on stdin, never on a command
# line), then server-side applies the overlay (which also makes the namespace darkroom-sessions) and removes what an
# earlier release kept in darkroom-system for the sessions (their Role and binding, their Secrets). undeploy: deletes
# every object of the overlay labelled app.kubernetes.io/part-of=darkroom-control-panel — everything but the CRDs,
# so the Darkrooms and Tasks in the cluster survive — in this order: all but the sessions namespace (the API and its
# rights to write sessions go first); then every login session (its Secret holds a person's token, which must not
# outlive the panel), by the sessions' labels; then the namespace darkroom-sessions, if nothing but sessions was in
# it — should it hold any other Secret, someone put it there: the namespace stays with it, and undeploy says so.
# KUBECTL overrides the kubectl command (e.g. "kubectl --context x").
set -euo pipefail

usage() { echo "usage: $0 deploy|undeploy [dev|production|DIR]" >&2; exit 2; }
action=${1:-}
overlay=${2:-dev}
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -d "$overlay" ]; then dir=$overlay; else dir="$root/deploy/overlays/$overlay"; fi
[ -d "$dir" ] || { echo "deploy.sh: no overlay '$overlay' (dev, production or a kustomization directory)" >&2; exit 2; }
read -r -a kubectl <<< "${KUBECTL:-kubectl}"
namespace=darkroom-system
sessions_namespace=darkroom-sessions
part_of=app.kubernetes.io/part-of=darkroom-control-panel
sessions_namespace_label=app.kubernetes.io/component=api-sessions  # the Namespace darkroom-sessions carries it, and nothing else
session_labels=app.kubernetes.io/managed-by=darkroom-control-panel,app.kubernetes.io/component=api-session  # each session's Secret

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
    # An earlier release kept the login sessions in darkroom-system, with the sessions Role there; apply does not prune:
    # take that Role (the API's rights on the Secrets of darkroom-system) and those sessions (people's tokens) away.
    "${kubectl[@]}" -n "$namespace" delete rolebinding,role darkroom-api-sessions --ignore-not-found
    "${kubectl[@]}" -n "$namespace" delete secrets -l "$session_labels" --ignore-not-found
    ;;
undeploy)
    # -l picks among the overlay's objects by the labels they carry in the manifests
    "${kubectl[@]}" delete -k "$dir" -l "$part_of,app.kubernetes.io/component!=api-sessions" --ignore-not-found
    ended=$("${kubectl[@]}" -n "$sessions_namespace" delete secrets -l "$session_labels" --ignore-not-found -o name | grep -c . || true)
    echo "deploy.sh: ended $ended login session(s) in $sessions_namespace"
    others=$("${kubectl[@]}" -n "$sessions_namespace" get secrets -o name --ignore-not-found)
    if [ -n "$others" ]; then
        echo "deploy.sh: kept namespace $sessions_namespace: it holds Secrets that are not login sessions:" >&2
        printf '  %s\n' $others >&2
    else
        "${kubectl[@]}" delete -k "$dir" -l "$part_of,$sessions_namespace_label" --ignore-not-found
    fi
    ;;
*)
    usage
    ;;
esac

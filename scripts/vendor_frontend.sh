#!/usr/bin/env bash
# Re-fetches vendored JavaScript from the npm registry. Two groups:
#   dashboard (default, `make vendor`): into frontend/static/vendor/, committed (the product serves them);
#   docs (`scripts/vendor_frontend.sh docs`, run by `make docs` when the file is missing): Mermaid for the docs
#     site's diagrams into docs/assets/vendor/ (gitignored: 5 MB that only the site needs). Material for MkDocs
#     loads mermaid from unpkg.com unless a `mermaid` global exists; mkdocs.yml's extra_javascript provides it.
# Versions AND sha512 integrities are pinned here: the tarball must match both the
# pinned integrity and the one the registry's metadata publishes for that version, or nothing is
# written. Only the minified dist files (plus the licences) are kept; no CDN at runtime.
# To upgrade: change VERSION and INTEGRITY below (`npm view htmx.org@<v> dist.integrity`) and re-run.
# Needs curl, tar, python3 (no npm).
set -euo pipefail

REGISTRY="${NPM_REGISTRY:-https://registry.npmjs.org}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GROUP="${1:-dashboard}"

# package  version  sha512 integrity (SRI form)  file in the tarball  name in vendor/
case "$GROUP" in
  dashboard)
    DEST="$ROOT/frontend/static/vendor"
    PACKAGES=(
      "htmx.org 2.0.11 sha512-Thx/WtpeOQqSrqBCw/A1cwGJGg4UrVa3+sW0GmrM3p4gJgO89ecH4qtbnyzDDWFvBTqjnIMCgELTNt636dtamA== package/dist/htmx.min.js htmx.min.js"
      "htmx-ext-sse 2.2.4 sha512-LJmxVhykyflBWgh5PvbRidcyuqMHlgfajmmzumvKctv9puvsufeH6OaejSMZTNTnEI8O2wXXn4ZZtBdpEMqmEQ== package/dist/sse.min.js htmx-ext-sse.min.js"
    )
    ;;
  docs)
    DEST="$ROOT/docs/assets/vendor"
    # The major version Material for MkDocs' own loader asks for (mermaid@11).
    PACKAGES=(
      "mermaid 11.17.2 sha512-V6K3C8EBdEsPFZXSKMJe6ppQOENxuHARr9GvHX4hh47lAbhMRD9qf4oEK7LoaRQxULMa80/qt5gHO73aCleBBg== package/dist/mermaid.min.js mermaid.min.js"
    )
    ;;
  *)
    echo "vendor_frontend: unknown group $GROUP (dashboard or docs)" >&2
    exit 2
    ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$DEST"

sri() {  # the SRI sha512 of a file
  python3 -c 'import base64,hashlib,sys; print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1],"rb").read()).digest()).decode())' "$1"
}

for entry in "${PACKAGES[@]}"; do
  read -r name version pinned member target <<<"$entry"
  published="$(curl -fsSL "$REGISTRY/$name/$version" | python3 -c 'import json,sys; d=json.load(sys.stdin)["dist"]; print(d["integrity"], d["tarball"])')"
  read -r integrity tarball <<<"$published"
  if [ "$integrity" != "$pinned" ]; then
    echo "vendor_frontend: $name@$version: the registry publishes $integrity, pinned $pinned: refusing" >&2
    exit 1
  fi
  curl -fsSL -o "$work/$name.tgz" "$tarball"
  got="$(sri "$work/$name.tgz")"
  if [ "$got" != "$pinned" ]; then
    echo "vendor_frontend: $name@$version: tarball hash $got does not match $pinned: refusing" >&2
    exit 1
  fi
  mkdir -p "$work/$name"
  tar -xzf "$work/$name.tgz" -C "$work/$name" "$member" package/LICENSE
  cp "$work/$name/$member" "$DEST/$target"
  cp "$work/$name/package/LICENSE" "$DEST/$target.LICENSE"
  echo "vendor_frontend: $name@$version -> ${DEST#"$ROOT"/}/$target ($integrity)"
done

[ "$GROUP" = dashboard ] || exit 0
{
  echo "# Vendored by scripts/vendor_frontend.sh from $REGISTRY; integrity = the npm tarball's sha512."
  for entry in "${PACKAGES[@]}"; do
    read -r name version pinned member target <<<"$entry"
    echo "$name@$version $member -> $target $pinned"
  done
} >"$DEST/VERSIONS"

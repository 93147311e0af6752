#!/usr/bin/env bash
# Installs the system tools the test suite drives when they are missing: docker-compose (Debian's
# package; tests/deploy/test_compose.py runs `docker-compose config -q`) and chromium's headless shell (Debian's
# package chromium-headless-shell at /usr/bin/chromium-headless-shell; tests/browser drive it with Playwright).
# Called by `make test`.
# Idempotent and instant when everything is present; needs root (or sudo) only to install.
set -euo pipefail

missing=()
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
[ -x /usr/bin/chromium-headless-shell ] || missing+=(chromium-headless-shell)
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_test_tools: missing ${missing[*]} and no apt-get here: install it with your package manager" >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install_test_tools: missing ${missing[*]}: run as root or install sudo (apt-get install ${missing[*]})" >&2
        exit 1
    fi
    sudo=(sudo)
fi
echo "install_test_tools: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >/dev/null
# No recommends: docker-compose recommends a whole Docker engine, which the tests do not need.
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

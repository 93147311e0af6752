# Sourced by the scripts/build_*.sh scripts: the Go binaries they build, kept outside the checkout by what made them.
#
# A fresh clone (CI makes one for every run) has no binaries, and a warm Go build still costs: `go mod verify` hashes
# every module and the linker writes the binary again (realcluster ~28 s, Hydra ~9 s, Helm ~8 s on 2 cores). So each
# script keys its binary by everything that makes it — the Go toolchain's version and target, the build environment,
# the build script itself (versions, flags) and the contents of its module's sources, go.mod and go.sum — and copies a
# binary it built under that key before to its place. Any change of those is another key: a build, as before.
#
#   go_cache_key FILE...          prints the key: a sha256 over the above and FILE... (paths relative to the module)
#   go_cache_restore NAME KEY BIN puts the binary kept for NAME under KEY at BIN; fails (status 1) when there is none
#   go_cache_keep NAME KEY BIN    keeps BIN for NAME under KEY (the newest 3 keys of each NAME stay)
#
# Where: $DARKROOM_GO_BIN_CACHE, else $XDG_CACHE_HOME/darkroom-control-panel/go-bin (~/.cache/...). The cache is a
# speed-up only: when it cannot be read or written, the script builds as it would without it.

GO_BIN_CACHE=${DARKROOM_GO_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/darkroom-control-panel/go-bin}
GO_BUILD_SCRIPT="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"  # sourced before the script changes directory

go_cache_key() {
    {
        go version
        go env GOOS GOARCH CGO_ENABLED GOFLAGS GOAMD64 CC
        sha256sum <"$GO_BUILD_SCRIPT"
        printf '%s\0' "$@" | LC_ALL=C sort -z | xargs -0 -r sha256sum
    } | sha256sum | cut -c1-32
}

go_cache_restore() {
    local kept="$GO_BIN_CACHE/$1-$2"
    [ -x "$kept" ] && cp "$kept" "$3.tmp" 2>/dev/null && mv "$3.tmp" "$3"
}

go_cache_keep() {
    mkdir -p "$GO_BIN_CACHE" 2>/dev/null || return 0
    cp "$3" "$GO_BIN_CACHE/.$1-$2.tmp" 2>/dev/null && mv "$GO_BIN_CACHE/.$1-$2.tmp" "$GO_BIN_CACHE/$1-$2" || return 0
    # shellcheck disable=SC2012  # names are ours: NAME-<hex key>
    ls -1t "$GO_BIN_CACHE" | grep "^$1-[0-9a-f]*$" | tail -n +4 | sed "s|^|$GO_BIN_CACHE/|" | xargs -r rm -f
}

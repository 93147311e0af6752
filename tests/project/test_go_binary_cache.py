"""scripts/go_binary_cache.sh: a Go binary kept by what made it, so a fresh checkout copies it instead of building again.

A build script in a temporary tree sources the helper, as scripts/build_*.sh do, with a cache directory of the test's
own (``DARKROOM_GO_BIN_CACHE``) and a made-up binary: kept under its key, it comes back for the same inputs in another
checkout; a change of a source's contents, or of the build script, is another key (a build); three keys per name stay.
Needs Go on PATH (the key holds ``go version`` and ``go env``): CI has it, as every build script needs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.clusters import ROOT

# A stand-in for scripts/build_*.sh: sources the helper, keys main.go, then restores or "builds" (writes the binary).
BUILD = """#!/usr/bin/env bash
set -uo pipefail
. "$(dirname "$0")/go_binary_cache.sh"
cd "$(dirname "$0")/../module"
mkdir -p bin
KEY=$(go_cache_key main.go go.mod)
if go_cache_restore thing "$KEY" bin/thing; then
    echo restored
    exit 0
fi
printf '#!/bin/sh\\necho %s\\n' "$(cat main.go)" > bin/thing.tmp && chmod +x bin/thing.tmp && mv bin/thing.tmp bin/thing
go_cache_keep thing "$KEY" bin/thing
echo built
"""


def checkout(where: Path, source: str, build: str = BUILD) -> Path:
    (where / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "go_binary_cache.sh", where / "scripts" / "go_binary_cache.sh")
    script = where / "scripts" / "build_thing.sh"
    script.write_text(build)
    script.chmod(0o755)
    (where / "module").mkdir()
    (where / "module" / "main.go").write_text(source)
    (where / "module" / "go.mod").write_text("module thing\n\ngo 1.26\n")
    return script


def run(script: Path, cache: Path) -> str:
    env = {**os.environ, "DARKROOM_GO_BIN_CACHE": str(cache)}
    result = subprocess.run([str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture(autouse=True)
def needs_go() -> None:
    if shutil.which("go") is None:
        pytest.skip("no Go toolchain: the key holds `go version` (every build script needs Go as well)")


def test_a_fresh_checkout_gets_the_binary_built_before_from_the_same_inputs(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert run(checkout(tmp_path / "a", "one"), cache) == "built"
    second = checkout(tmp_path / "b", "one")
    assert run(second, cache) == "restored"
    binary = tmp_path / "b" / "module" / "bin" / "thing"
    assert subprocess.run([str(binary)], capture_output=True, text=True).stdout == "one\n"
    assert not list((tmp_path / "b" / "module" / "bin").glob("*.tmp"))


def test_changed_sources_or_a_changed_build_script_are_built(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert run(checkout(tmp_path / "a", "one"), cache) == "built"
    assert run(checkout(tmp_path / "b", "two"), cache) == "built"  # the source's contents
    assert run(checkout(tmp_path / "c", "one", BUILD + "# another flag\n"), cache) == "built"  # the script (versions, flags)
    assert run(checkout(tmp_path / "d", "two"), cache) == "restored"


def test_three_keys_per_name_stay(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for i, source in enumerate(("one", "two", "three", "four")):
        assert run(checkout(tmp_path / str(i), source), cache) == "built"
    assert len(list(cache.glob("thing-*"))) == 3
    assert run(checkout(tmp_path / "again", "four"), cache) == "restored"


def test_an_unwritable_cache_only_costs_the_build(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert run(checkout(tmp_path / "a", "one"), blocked / "cache") == "built"
    assert run(checkout(tmp_path / "b", "one"), blocked / "cache") == "built"

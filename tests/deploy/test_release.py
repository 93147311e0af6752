"""``make release VERSION=x.y.z`` (scripts/release.py): reproducible release files, and the releases it refuses.

Each test works in a clean checkout of its own: the files of this working tree (tracked and new, as git lists them),
committed into a fresh repository at a fixed time. Behaviours covered:

- two checkouts in different directories, released at different moments, give byte-identical dist/ files (install.yaml,
  the chart package, the SBOM, SHA256SUMS);
- install.yaml holds the CRDs, the reconciler and the API exactly as kustomize renders deploy/base for that version,
  every container on the image pinned by the digest given; the package is a chart of that version whose default image
  is that one (``helm template`` of the .tgz); the SBOM lists exactly the packages of requirements/runtime.txt at their
  versions, its main component the image, with the commit's time and no serial number;
- refused, in one line on stderr, with nothing written: no VERSION, a malformed one, one whose tag v<version> exists, a
  malformed IMAGE_DIGEST, a tree with an untracked file, a tree with a changed file; the Makefile passes VERSION,
  RELEASE_IMAGE and IMAGE_DIGEST through.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from .manifests import ROOT, ident, script

DIGEST = "sha256:" + "cd" * 32
COMMIT_TIME = "2026-01-02T03:04:05+00:00"
EPOCH = 1767323045
GIT_ENV = {
    "GIT_AUTHOR_NAME": "release test",
    "GIT_AUTHOR_EMAIL": "release@example.invalid",
    "GIT_COMMITTER_NAME": "release test",
    "GIT_COMMITTER_EMAIL": "release@example.invalid",
    "GIT_AUTHOR_DATE": COMMIT_TIME,
    "GIT_COMMITTER_DATE": COMMIT_TIME,
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def checkout(where: Path) -> Path:
    """A clean checkout of this working tree at ``where``: its files (tracked and new, not ignored), one commit."""
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            target = where / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git(where, "init", "-q", "-b", "main")
    git(where, "add", "-A")
    git(where, "commit", "-q", "--no-verify", "-m", "release test")
    return where


def release(repo: Path, helm: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HELM": helm}
    return subprocess.run(
        [sys.executable, str(repo / "scripts" / "release.py"), *args], capture_output=True, text=True, timeout=300, env=env, cwd=repo
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return checkout(tmp_path_factory.mktemp("checkout"))


def test_a_release_is_the_same_bytes_from_two_checkouts(helm: str, tmp_path: Path) -> None:
    first, second = checkout(tmp_path / "one"), checkout(tmp_path / "two" / "deeper")
    for repo in (first, second):
        made = release(repo, helm, "--version", "1.2.3", "--image-digest", DIGEST)
        assert made.returncode == 0, made.stderr
    names = sorted(p.name for p in (first / "dist").iterdir())
    assert names == ["SHA256SUMS", "darkroom-control-panel-1.2.3.tgz", "install.yaml", "sbom.cdx.json"]
    assert sorted(p.name for p in (second / "dist").iterdir()) == names
    for name in names:
        assert (first / "dist" / name).read_bytes() == (second / "dist" / name).read_bytes(), f"dist/{name} differs"
    sums = {name: digest for digest, name in (line.split("  ") for line in (first / "dist" / "SHA256SUMS").read_text().splitlines())}
    assert sums == {n: hashlib.sha256((first / "dist" / n).read_bytes()).hexdigest() for n in names if n != "SHA256SUMS"}
    assert git(first, "status", "--porcelain") == "", "a release leaves the tree clean (dist/ is ignored)"


@pytest.fixture(scope="module")
def released(helm: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = checkout(tmp_path_factory.mktemp("released"))
    made = release(repo, helm, "--version", "2.0.0-rc.1", "--image-repository", "registry.example.org/darkroom", "--image-digest", DIGEST)
    assert made.returncode == 0, made.stderr
    return repo / "dist"


def test_install_yaml_is_the_base_on_the_pinned_image(released: Path) -> None:
    chart = script("chart")
    objects = [d for d in yaml.safe_load_all((released / "install.yaml").read_text()) if d]
    expected = chart.render(
        chart.with_values({"image.repository": "registry.example.org/darkroom", "image.tag": "2.0.0-rc.1", "image.digest": DIGEST})
    )
    assert sorted(map(ident, objects)) == sorted(map(ident, expected))
    assert {ident(o): o for o in objects} == {ident(o): o for o in expected}
    kinds = {o["kind"] for o in objects}
    assert {"CustomResourceDefinition", "Deployment", "Namespace"} <= kinds
    images = {c["image"] for o in objects if o["kind"] == "Deployment" for c in o["spec"]["template"]["spec"]["containers"]}
    assert images == {f"registry.example.org/darkroom:2.0.0-rc.1@{DIGEST}"}


def test_the_package_is_the_chart_of_that_version_on_that_image(released: Path, helm: str) -> None:
    package = released / "darkroom-control-panel-2.0.0-rc.1.tgz"
    with tarfile.open(package) as archive:
        members = archive.getmembers()
        assert members and {(m.mtime, m.uid, m.gid, m.mode) for m in members} == {(EPOCH, 0, 0, 0o644)}
        meta = yaml.safe_load(archive.extractfile("darkroom-control-panel/Chart.yaml").read())  # type: ignore[union-attr]
    assert (meta["version"], meta["appVersion"]) == ("2.0.0-rc.1", "2.0.0-rc.1")
    rendered = subprocess.run([helm, "template", "darkroom", str(package)], capture_output=True, text=True, timeout=120)
    assert rendered.returncode == 0, rendered.stderr
    images = set(re.findall(r"image: (\S+)", rendered.stdout))
    assert images == {json.dumps(f"registry.example.org/darkroom:2.0.0-rc.1@{DIGEST}")}


def test_the_sbom_lists_the_images_python_packages(released: Path) -> None:
    document: dict[str, Any] = json.loads((released / "sbom.cdx.json").read_text())
    assert (document["bomFormat"], document["specVersion"]) == ("CycloneDX", "1.6")
    assert "serialNumber" not in document
    assert document["metadata"]["timestamp"] == COMMIT_TIME
    component = document["metadata"]["component"]
    assert (component["type"], component["name"], component["version"]) == ("container", "registry.example.org/darkroom", "2.0.0-rc.1")
    assert DIGEST.replace(":", "%3A") in component["purl"]
    pins = dict(re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", (ROOT / "requirements" / "runtime.txt").read_text(), re.MULTILINE))
    listed = {c["name"]: c["version"] for c in document["components"]}
    assert {k.lower(): v for k, v in listed.items()} == {k.lower(): v for k, v in pins.items()}
    assert all(c["purl"] == f"pkg:pypi/{c['name']}@{c['version']}" for c in document["components"])


# --- refusals ---------------------------------------------------------------------------------------------------------


def refused(repo: Path, helm: str, *args: str) -> str:
    result = release(repo, helm, *args)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("release: refused: "), result.stderr
    assert not (repo / "dist").exists(), "nothing is written"
    return lines[0]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "VERSION is missing"),
        (["--version", "v1.2.3"], "VERSION=v1.2.3 is not a version (without the v: VERSION=1.2.3)"),
        (["--version", "1.2"], "VERSION=1.2 is not a version"),
        (["--version", "01.2.3"], "VERSION=01.2.3 is not a version"),
        (["--version", "1.2.3.4"], "VERSION=1.2.3.4 is not a version"),
        (["--version", "1.2.3", "--image-digest", "sha256:abc"], "IMAGE_DIGEST=sha256:abc is not a digest"),
    ],
    ids=["missing", "leading-v", "two-parts", "leading-zero", "four-parts", "digest"],
)
def test_a_missing_or_malformed_version_is_refused(repo: Path, helm: str, args: list[str], says: str) -> None:
    assert says in refused(repo, helm, *args)


def test_a_version_whose_tag_exists_is_refused(repo: Path, helm: str) -> None:
    git(repo, "tag", "v3.1.0")
    try:
        assert refused(repo, helm, "--version", "3.1.0") == "release: refused: version 3.1.0 exists (tag v3.1.0): pick the next version"
    finally:
        git(repo, "tag", "-d", "v3.1.0")


def test_a_dirty_tree_is_refused(repo: Path, helm: str) -> None:
    stray = repo / "stray.txt"
    stray.write_text("not committed\n")
    try:
        assert "the working tree is not clean (1 changed or untracked, e.g. stray.txt)" in refused(repo, helm, "--version", "3.2.0")
    finally:
        stray.unlink()
    makefile = repo / "Makefile"
    original = makefile.read_text()
    makefile.write_text(original + "\n# changed\n")
    try:
        assert "e.g. Makefile" in refused(repo, helm, "--version", "3.2.0")
    finally:
        makefile.write_text(original)


def test_make_release_passes_its_variables() -> None:
    result = subprocess.run(
        ["make", "-n", "release", "VERSION=1.2.3", "RELEASE_IMAGE=r.example/x", f"IMAGE_DIGEST={DIGEST}"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert f'scripts/release.py --version "1.2.3" --image-repository "r.example/x" --image-digest "{DIGEST}"' in result.stdout

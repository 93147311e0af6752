"""``make release VERSION=x.y.z``: the release files of one version, in dist/, the same bytes from the same commit.

Writes (and nothing else: dist/ is emptied first)

- ``dist/install.yaml``: the CRDs, the reconciler and the API as deploy/base renders them (``kubectl kustomize``,
  through :func:`chart.overlay`), the image ``<repository>:<version>``, pinned ``@<digest>`` when one is given;
- ``dist/darkroom-control-panel-<version>.tgz``: the Helm chart (scripts/chart.py) with that version as its version
  and appVersion and that image as its default, packaged by ``helm package``;
- ``dist/sbom.cdx.json``: the image's Python packages (requirements/runtime.txt, exactly what deploy/Dockerfile
  installs) as a CycloneDX JSON document, by ``cyclonedx-py requirements``, its main component the image;
- ``dist/SHA256SUMS``: the three files' digests (``sha256sum -c SHA256SUMS``).

Reproducible: every timestamp is the commit's (``git log -1 --format=%ct``, as SOURCE_DATE_EPOCH), the SBOM has no
serial number or timestamp (``--output-reproducible``), the chart archive's entries carry the commit's time, root's
ids and mode 0644 (``helm package`` writes the time of the run: the archive is rewritten, entries in helm's order).

Refuses, in one line on stderr (exit 1), before writing anything: a missing VERSION, one that is not ``x.y.z``
(semantic versioning, an optional ``-prerelease``; no leading ``v``), a version that exists — the git tag
``v<version>`` is there (a release is tagged once published: docs/operations/install.md) —, an IMAGE_DIGEST that is not
``sha256:<64 hex>``, and a working tree with changes or untracked files (what is released is a commit).

Helm: ``$HELM`` if set, else scripts/build_helm.sh builds it (once).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import chart  # scripts/chart.py, beside this file

ROOT = chart.ROOT
DIST = ROOT / "dist"
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?$"
)
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
SBOM = "sbom.cdx.json"
INSTALL = "install.yaml"


class Refused(Exception):
    """Why this release is not made (one line)."""


def git(*args: str) -> str:
    result = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise Refused(f"git {' '.join(args)} failed: {result.stderr.strip() or result.returncode}")
    return result.stdout


def check(version: str, digest: str) -> None:
    """Raise :class:`Refused` for what must not be released (see the module's docstring)."""
    if not version:
        raise Refused("VERSION is missing: make release VERSION=x.y.z")
    if not SEMVER.match(version):
        hint = f" (without the v: VERSION={version[1:]})" if version[:1] in "vV" and SEMVER.match(version[1:]) else " (x.y.z, e.g. 1.4.0)"
        raise Refused(f"VERSION={version} is not a version{hint}")
    if digest and not DIGEST.match(digest):
        raise Refused(f"IMAGE_DIGEST={digest} is not a digest (sha256: and 64 lowercase hex digits)")
    changed = git("status", "--porcelain", "--untracked-files=all").splitlines()
    if changed:
        raise Refused(f"the working tree is not clean ({len(changed)} changed or untracked, e.g. {changed[0][3:]}): commit first")
    if git("tag", "--list", f"v{version}").strip():
        raise Refused(f"version {version} exists (tag v{version}): pick the next version")


def release_values(version: str, repository: str, digest: str) -> chart.Values:
    values = chart.defaults()
    chart.put(values, "image.repository", repository)
    chart.put(values, "image.tag", version)
    chart.put(values, "image.digest", digest)
    return values


def install_yaml(values: chart.Values, version: str) -> str:
    objects = chart.render(values)
    header = (
        f"# Darkroom Control Panel {version}: CRDs, reconciler, REST API + dashboard (deploy/base).\n"
        "# kubectl apply --server-side -f install.yaml; then the Secret darkroom-system/darkroom-api (docs/operations/install.md).\n"
    )
    return header + yaml.safe_dump_all(objects, sort_keys=False, width=120)


def helm() -> str:
    if os.environ.get("HELM"):
        return os.environ["HELM"]
    built = subprocess.run([str(ROOT / "scripts" / "build_helm.sh")], capture_output=True, text=True)
    if built.returncode != 0:
        raise SystemExit(f"release: cannot build helm (scripts/build_helm.sh):\n{built.stderr}")
    return built.stdout.strip().splitlines()[-1]


def chart_package(values: chart.Values, version: str, epoch: int, tmp: Path) -> tuple[str, bytes]:
    """(file name, bytes) of the chart packaged by ``helm package``, its entries rewritten with the commit's time."""
    source = tmp / chart.CHART_NAME
    chart.write(source, version=version, values=values)
    out = tmp / "packaged"
    result = subprocess.run([helm(), "package", str(source), "--destination", str(out)], capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise SystemExit(f"release: helm package failed:\n{result.stderr}")
    (packaged,) = out.iterdir()
    return packaged.name, normalized(packaged.read_bytes(), epoch)


def normalized(archive: bytes, epoch: int) -> bytes:
    """The gzipped tar ``archive`` with every entry's time ``epoch``, owner root, mode 0644, and a gzip header without
    a time or file name."""
    buffer = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as source,
        tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as target,
    ):
        for member in source.getmembers():
            data = source.extractfile(member) if member.isfile() else None
            member.mtime, member.uid, member.gid, member.uname, member.gname, member.mode = epoch, 0, 0, "", "", 0o644
            member.pax_headers = {}
            target.addfile(member, data)
    compressed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=compressed, mtime=0, compresslevel=9) as zipped:
        zipped.write(buffer.getvalue())
    return compressed.getvalue()


def sbom(version: str, repository: str, digest: str, epoch: int) -> str:
    """The CycloneDX JSON document of requirements/runtime.txt, its main component the image."""
    tool = Path(sys.executable).parent / "cyclonedx-py"
    if not tool.exists():
        raise SystemExit("release: cyclonedx-py is not installed (cyclonedx-bom, in the dev toolchain: make venv)")
    result = subprocess.run(
        # --no-validate: its schema check waits on the network (half a minute here) and a release must not depend
        # on it; tests/deploy/test_release.py checks the document instead.
        [
            str(tool),
            "requirements",
            "--output-reproducible",
            "--no-validate",
            "--output-format",
            "JSON",
            "--spec-version",
            "1.6",
            "--output-file",
            "-",
            str(ROOT / "requirements" / "runtime.txt"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "SOURCE_DATE_EPOCH": str(epoch)},
    )
    if result.returncode != 0:
        raise SystemExit(f"release: cyclonedx-py failed:\n{result.stderr}")
    document: dict[str, Any] = json.loads(result.stdout)
    purl = f"pkg:oci/{repository.rsplit('/', 1)[-1]}?repository_url={repository}&tag={version}"
    if digest:
        purl = f"pkg:oci/{repository.rsplit('/', 1)[-1]}@{digest.replace(':', '%3A')}?repository_url={repository}&tag={version}"
    document.setdefault("metadata", {})["component"] = {
        "type": "container",
        "bom-ref": f"{repository}:{version}",
        "name": repository,
        "version": version,
        "description": "Darkroom Control Panel image (deploy/Dockerfile): its Python packages are requirements/runtime.txt",
        "purl": purl,
    }
    return json.dumps(document, indent=2, sort_keys=False) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="the release files of one version, in dist/ (make release VERSION=x.y.z)")
    parser.add_argument("--version", default="")
    parser.add_argument("--image-repository", default=chart.image().name, help="the image's repository (default: %(default)s)")
    parser.add_argument("--image-digest", default="", help="sha256:... of the pushed image: pins it")
    args = parser.parse_args(argv)
    try:
        check(args.version, args.image_digest)
    except Refused as refused:
        print(f"release: refused: {refused}", file=sys.stderr)
        return 1
    version, repository, digest = args.version, args.image_repository, args.image_digest
    epoch = int(git("log", "-1", "--format=%ct", "HEAD").strip())
    values = release_values(version, repository, digest)
    with tempfile.TemporaryDirectory(prefix="release-") as tmp:
        package_name, package = chart_package(values, version, epoch, Path(tmp))
    files = {
        INSTALL: install_yaml(values, version).encode(),
        package_name: package,
        SBOM: sbom(version, repository, digest, epoch).encode(),
    }
    if DIST.exists():
        shutil.rmtree(DIST)
    DIST.mkdir()
    for name, data in files.items():
        (DIST / name).write_bytes(data)
    sums = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(files.items()))
    (DIST / "SHA256SUMS").write_text(sums)
    print(f"release: {version} in dist/: {', '.join(sorted(files))}, SHA256SUMS", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

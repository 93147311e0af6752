"""Where the product's files are: the dashboard's templates and static files, and the CRD YAML files.

The one module that knows. Everything else asks it, so the product runs the same from a source checkout (``make api``,
the tests, an editable install) and from an installed wheel (``pip install .``, the image), where nothing lies next to
a source tree.

Layout, chosen to move nothing: the folders stay where kustomize (``deploy/base`` lists ``../../crds``),
``kubectl apply -f crds/`` and the docs name them, and each is a package of package data (an ``__init__.py`` with a
docstring and no code): ``frontend`` (``templates/``, ``static/``) and ``crds`` (``*.yaml``; not ``samples/``).
pyproject.toml's ``[tool.setuptools.package-data]`` puts their files into the wheel. They are found with
:mod:`importlib.resources`, by package name: from a checkout the packages are the folders themselves (the root is on
the path, or the editable install maps them), from a wheel they sit in site-packages beside ``backend``.

Flask and Jinja serve files from directories, so the packages must be directories on disk (a wheel installed by pip
is); a zipped install fails at the first call with a clear error rather than serving nothing. A leaf: the standard
library only.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

FRONTEND = "frontend"
CRDS = "crds"


class NotOnDisk(RuntimeError):
    """A package of package data is not a directory on disk (e.g. installed zipped)."""


def _directory(package: str) -> Path:
    found = resources.files(package)
    if not isinstance(found, Path) or not found.is_dir():
        raise NotOnDisk(f"the package {package!r} is not a directory on disk ({found!r}): install the product unzipped")
    return found


def templates() -> Path:
    """The dashboard's Jinja templates (``frontend/templates``)."""
    return _directory(FRONTEND) / "templates"


def static() -> Path:
    """The dashboard's static files (``frontend/static``: CSS, JS, icons, the vendored htmx)."""
    return _directory(FRONTEND) / "static"


def crd_directory() -> Path:
    """The folder of the CRD YAML files (``crds/``)."""
    return _directory(CRDS)


def crd_files() -> list[Path]:
    """Every CRD YAML file, sorted by name."""
    return sorted(crd_directory().glob("*.yaml"))


def crd_file(name: str) -> Path:
    """One CRD YAML file by its file name (``tasks.example.example.com.yaml``)."""
    path = crd_directory() / name
    if not path.is_file():
        raise FileNotFoundError(f"no CRD file {name} in {crd_directory()}")
    return path

"""``pip install .`` is the whole product: the wheel built from this checkout, installed alone, runs every entry point.

The wheels (the product's and its leaves' project, lib/shared) are built offline (``pip wheel --no-deps
--no-build-isolation``: the setuptools of the locks, nothing fetched) from a copy of the sources, and installed with
``--no-index --no-deps`` into a fresh venv that sees none of the checkout: no system site-packages, no editable
install, run with ``python -I`` from a directory outside the checkout. The third-party dependencies come from the test
venv's site-packages, named by a ``.pth`` file (its own ``.pth`` files — the editable installs of the checkout — are
not read from there). In that venv:

- every first-party package imported comes from the venv's site-packages, and :mod:`productfiles` finds the templates,
  the static files and the CRDs there;
- the CRD installer (``python -m cluster.crdinstall``) applies the CRDs the wheel ships to a devcluster;
- the Flask app is created in the local mode on that cluster: ``GET /`` renders the dashboard's Darkrooms page (a
  template), static files (the dashboard's CSS, the vendored htmx) are served with their content types, the CRD
  schemas are read (:mod:`backend.core.crds`), and gunicorn's configuration imports as the image names it
  (``-c python:backend.server.gunicorn_conf``);
- ``python -m darkroom_operator --help`` and ``python -m aggregator --help`` run.
"""

from __future__ import annotations

import shutil

import pytest

from tests.clusters import DevclusterProcess

from . import wheels
from .manifests import ROOT

# What the wheels are built from, copied (the checkout is left as it is: no build/ or egg-info written, nor read).
SOURCES = ("pyproject.toml", "README.md", "backend", "aggregator", "frontend", "crds", "operator", "lib")


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> wheels.Venv:
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    return wheels.install(wheels.build(source, tmp / "wheels"), tmp)


PROBE = """
import os, sys
from backend.app import create_app
from backend.settings import ApiSettings
from backend.core import crds
import backend.server.gunicorn_conf as gunicorn_conf
import darkroom_operator.darkrooms, darkroom_operator.tasks, aggregator.openapi
import productfiles

site = sys.argv[1]
for name in sys.argv[2].split(","):
    module = __import__(name)
    assert (module.__file__ or "").startswith(site + "/"), f"{name} from {module.__file__}, not the installed wheel"
for path in (productfiles.templates(), productfiles.static(), productfiles.crd_directory()):
    assert path.is_dir() and str(path).startswith(site + "/"), path
assert [p.name for p in productfiles.crd_files()] == sys.argv[3].split(","), productfiles.crd_files()
assert crds.crd_schema("Darkroom")["properties"]["spec"]["type"] == "object"
assert aggregator.openapi.document()

app = create_app(ApiSettings.from_environ(os.environ))
client = app.test_client()
page = client.get("/", headers={"Accept": "text/html"})
print("page", page.status_code, page.mimetype, b"<html" in page.data, b"Darkrooms" in page.data)
for path in ("/static/dashboard.css", "/static/vendor/htmx.min.js"):
    with client.get(path) as response:
        print("static", path, response.status_code, response.mimetype, len(response.data))
print("gunicorn", gunicorn_conf.bind)
sys.stdout.flush()
os._exit(0)  # the app's informers run until the process ends
"""


def test_the_installed_wheel_serves_the_dashboard_with_its_own_files(venv: wheels.Venv, devcluster: DevclusterProcess) -> None:
    crd_names = sorted(p.name for p in (ROOT / "crds").glob("*.yaml"))
    installer = venv.run("-m", "cluster.crdinstall", "--kubeconfig", str(devcluster.kubeconfig), "--timeout-s", "30")
    assert installer.stdout.startswith("install_crds: established"), installer.stdout
    env = {"KUBECONFIG": str(devcluster.kubeconfig), "DARKROOM_API_AUTHENTICATION": "local", "PORT": "5000"}
    result = venv.run("-c", PROBE, str(venv.site_packages), ",".join(wheels.FIRST_PARTY), ",".join(crd_names), env=env)
    lines = result.stdout.splitlines()
    assert "page 200 text/html True True" in lines, result.stdout + result.stderr
    assert lines[1].split()[:4] == ["static", "/static/dashboard.css", "200", "text/css"], lines
    assert lines[1].split()[4] == str((ROOT / "frontend" / "static" / "dashboard.css").stat().st_size)
    assert lines[2].split()[:4] == ["static", "/static/vendor/htmx.min.js", "200", "text/javascript"], lines
    assert lines[3] == "gunicorn 127.0.0.1:5000", lines


def test_the_installed_wheel_runs_the_reconciler_and_the_aggregator(venv: wheels.Venv) -> None:
    wheels.assert_entry_points_run(venv)

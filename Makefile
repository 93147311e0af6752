# Darkroom Control Panel — the two commands a fresh machine needs are `make api` and `make test`.
# Every target bootstraps .venv/ itself from the hashed locks in requirements/ (compiled by `make lock` from the
# pyproject.toml files), re-installing only when a pyproject.toml or a lock changes. Three kinds of venv:
#   `make api` (and cluster, operator): the product's runtime + the embedded devcluster (requirements/devcluster.txt);
#   `make test` (and lint, typecheck, unit): that + the toolchain (requirements/dev.txt);
#   `make bench`: that + what the benchmarks need beside it (requirements/bench.txt: kopf, py-spy).
# A dev venv serves `make api` as it is; a runtime-only venv gets the toolchain added by the first `make test`.
# Three projects of ours, each installed editable from this checkout and never looked up on an index: the product
# (pyproject.toml), the leaves it shares with devcluster (lib/shared) and devcluster (devcluster/, the `[devcluster]`
# extra of the product).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
LOCKS := requirements/build.txt requirements/runtime.txt requirements/devcluster.txt requirements/dev.txt requirements/bench.txt
PROJECTS := pyproject.toml lib/shared/pyproject.toml devcluster/pyproject.toml
# Their distribution names: resolved from their paths ([tool.uv.sources]) and never written into a lock.
LOCAL_PACKAGES := darkroom-shared-leaves devcluster
FINGERPRINT := $(shell cat $(PROJECTS) $(LOCKS) 2>/dev/null | sha1sum | cut -c1-12)
API_STAMP := $(VENV)/.installed-api-$(FINGERPRINT)
DEV_STAMP := $(VENV)/.installed-dev-$(FINGERPRINT)
BENCH_STAMP := $(VENV)/.installed-bench-$(FINGERPRINT)
# --no-deps: a lock is the whole closure, hashed (pip refuses anything else); no resolver, no surprise versions.
PIP_INSTALL := $(PY) -m pip install -q --disable-pip-version-check --no-deps --require-hashes
PIP_EDITABLE := PYTHONWARNINGS=ignore::UserWarning $(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation
# The toolchain's locks (dev.txt, bench.txt) pin uv, which installs them: ~10 s for the 130 packages of dev.txt, byte-compiled
# as pip does, against ~60 s with pip (CI installs a fresh venv on every run). pip installs uv first, from its own hashed
# entry in that lock (copied to UV_PIN). `make api`'s lock has no uv: pip installs it, and nothing more comes.
UV_PIN := $(VENV)/uv-requirement.txt
UV_INSTALL := $(VENV)/bin/uv pip install --python $(PY) --quiet --no-deps --require-hashes --compile-bytecode
UV_EDITABLE := $(VENV)/bin/uv pip install --python $(PY) --quiet --no-deps --no-build-isolation
PORT ?= 5000
DEVCLUSTER_PORT ?= 6443
REALCLUSTER_PORT ?= 7443
PYTEST_ARGS ?=
# Test lanes (tests/lanes.py puts every test in one, by what it needs: the fixtures it uses, or its folder where that is a
# lane of its own): unit (no servers), cluster (the product's suites on
# devcluster and the real control plane), identity (the real OIDC provider), browser (chromium), deploy (manifests, RBAC
# on the real control plane), fuzz (schemathesis), devcluster (its conformance and fidelity against the real control plane).
# `make test` runs every lane in one pytest on TEST_WORKERS pytest-xdist workers: a module on one cluster kind (the
# identity lane and the fidelity corpus whole) is one work unit, the longest first; each worker starts its own session
# servers. 3 workers on this 2-core
# machine: the tests mostly wait on servers and timers, so more workers than cores help (docs/development/testing.md).
TEST_WORKERS ?= 3
XDIST = -n $(TEST_WORKERS) --dist loadscope
LANES := unit cluster identity browser deploy fuzz devcluster
# Where unit tests are: tests/ mirrors the product, unit and cluster-backed modules side by side (-m unit picks them), but
# for the outside-in folders that are lanes of their own; and devcluster's internals.
UNIT_PATHS := $(sort $(filter-out %/browser/ %/deploy/ %/e2e/ %/__pycache__/,$(wildcard tests/*/))) devcluster/tests/internals
OPERATOR_ARGS ?=
IMAGE ?= darkroom-control-panel:0.1.0
OVERLAY ?= dev
UV_ARGS ?=
UV_COMPILE = $(VENV)/bin/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes --custom-compile-command "make lock" \
	$(addprefix --no-emit-package ,$(LOCAL_PACKAGES)) $(UV_ARGS)
# Where the packages of ours live, by import name (lint-imports finds them through this).
SOURCE_ROOTS := .:operator:lib:lib/shared:devcluster/src

.PHONY: chart release venv venv-api venv-bench api docs test test-tools test-fast $(addprefix test-,$(LANES)) test-devcluster lint typecheck unit cluster realcluster realcluster-build operator bench clean docker-build deploy undeploy vendor lock

# $(call install,LOCK,WHAT,INSTALLER): a venv if missing, then the lock, then our own projects (editable, from this checkout:
# --no-deps, so no name of ours is ever looked up on an index; built with the pinned setuptools of
# requirements/build.txt, no build isolation: nothing unpinned is fetched). INSTALLER: PIP, or UV for a lock that pins uv
# (bootstrapped by pip from its hashed entry).
define install
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing $(2): $$(grep -c '^[A-Za-z]' $(1)) pinned packages from $(1) into $(VENV)/ (once; again only when a lock changes) ..."
	@SECONDS=0; $(if $(filter UV,$(3)),awk '/^uv==/ {p = 1} p {print; if (!/\\$$/) exit}' $(1) > $(UV_PIN) && $(PIP_INSTALL) -r $(UV_PIN) && )$($(3)_INSTALL) -r requirements/build.txt -r $(1) \
		&& $($(3)_EDITABLE) -e lib/shared -e devcluster -e . \
		&& echo "Installed in $${SECONDS} s ($$(du -sh $(VENV) | cut -f1) in $(VENV)/)."
endef

$(API_STAMP):
	$(call install,requirements/devcluster.txt,the product's runtime and the embedded devcluster (no test tools),PIP)
	@rm -f $(VENV)/.installed-api-* && touch $@

$(DEV_STAMP):
	$(call install,requirements/dev.txt,the product with devcluster and the test toolchain,UV)
	@rm -f $(VENV)/.installed-* && touch $@ $(API_STAMP)

# bench.txt is dev.txt plus the benchmarks' own packages: a bench venv serves `make test` and `make api` as it is.
$(BENCH_STAMP):
	$(call install,requirements/bench.txt,the product with devcluster and the test toolchain plus the benchmarks' kopf and py-spy,UV)
	@rm -f $(VENV)/.installed-* && touch $@ $(DEV_STAMP) $(API_STAMP)

venv-api: $(API_STAMP)
venv: $(DEV_STAMP)
venv-bench: $(BENCH_STAMP)

## api: run the product (embedded devcluster unless KUBECONFIG/--kubeconfig says otherwise; PORT, DEVCLUSTER_PORT)
api: venv-api
	@PORT=$(PORT) DEVCLUSTER_PORT=$(DEVCLUSTER_PORT) $(PY) scripts/run_api.py

## lock: recompile requirements/*.txt from the pyproject.toml files (UV_ARGS=--upgrade to move to the newest versions).
## dev.txt first; the others are constrained by it, so one package has one version in every lock. Our own projects
## come from their paths ([tool.uv.sources]) and are left out (--no-emit-package): the locks hold third-party packages only.
lock: venv
	@$(PY) -c 'import sys, tomllib; print("\n".join(sorted({r for f in sys.argv[1:] for r in tomllib.load(open(f, "rb"))["build-system"]["requires"]})))' \
		$(PROJECTS) | $(UV_COMPILE) - -o requirements/build.txt
	@$(UV_COMPILE) pyproject.toml --extra dev -o requirements/dev.txt
	@$(UV_COMPILE) pyproject.toml --extra devcluster -c requirements/dev.txt -o requirements/devcluster.txt
	@$(UV_COMPILE) pyproject.toml -c requirements/dev.txt -o requirements/runtime.txt
	@$(UV_COMPILE) pyproject.toml --extra dev --extra bench -c requirements/dev.txt -o requirements/bench.txt

## test: lint, type-check, build the docs site, get the test tools ready, then every lane of the whole suite (tests/ and
## devcluster/tests, pyproject's testpaths) at once on TEST_WORKERS workers (TEST_WORKERS=0: serially, in one process).
## `make -j4 test` (.ci/run) does the four steps before pytest side by side.
test: venv lint typecheck docs test-tools
	@$(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

# test-tools: what the lanes need besides the venv: chromium and docker-compose (scripts/install_test_tools.sh), and the
# builds of the real control plane, the identity provider and Helm made current here, beside lint and mypy under -j, instead
# of one after the other at pytest's start. pytest's session asks each build script again (up to date in a moment) and is
# the one that reports a build that fails (with the step and the retry) or a machine without Go (exit 3): so a failure
# here stops nothing.
test-tools: venv
	@scripts/install_test_tools.sh
	@for build in build_realcluster build_hydra build_helm; do scripts/$$build.sh >/dev/null || true; done

## test-fast: the unit lane (no servers, no builds: --cluster=dev) on 2 workers, in under a minute; no lint or mypy
test-fast: venv
	@$(PY) -m pytest $(UNIT_PATHS) -m unit --cluster=dev -n 2 --dist loadscope $(PYTEST_ARGS)

## test-<lane>: one lane (test-unit, test-cluster, test-identity, test-browser, test-deploy, test-fuzz, test-devcluster)
$(addprefix test-,$(filter-out unit devcluster,$(LANES))): venv
	@$(if $(filter test-browser,$@),scripts/install_test_tools.sh)
	@$(PY) -m pytest -m $(@:test-%=%) $(XDIST) $(PYTEST_ARGS)

test-unit: venv
	@$(PY) -m pytest $(UNIT_PATHS) -m unit $(XDIST) $(PYTEST_ARGS)

## test-devcluster: devcluster's own tests (devcluster/tests): its unit tests (internals/, in the unit lane) and the
## devcluster lane (conformance/, fidelity/), on TEST_WORKERS workers
test-devcluster: venv
	@$(PY) -m pytest devcluster/tests $(XDIST) $(PYTEST_ARGS)

## docs: the docs site (mkdocs.yml, docs/) into site/: the generated pages (API reference, configuration) written anew by
## scripts/docs_pages.py (under CI=true only checked: a stale committed page fails), then `mkdocs build --strict`
## (a broken link or anchor fails). Seconds; nothing fetched.
docs: venv
	@test -f docs/assets/vendor/mermaid.min.js || scripts/vendor_frontend.sh docs
	@$(PY) scripts/docs_pages.py $(if $(filter true,$(CI)),--check)
	@NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

## lint: ruff, and the import contracts of pyproject.toml [tool.importlinter] (who may import whom)
lint: venv
	@$(PY) -m ruff check .
	@$(PY) -m ruff format --check .
	@PYTHONPATH=$(SOURCE_ROOTS) $(VENV)/bin/lint-imports --no-cache --config pyproject.toml

# mypy --strict (pyproject [tool.mypy]): product code, devcluster and the tests, then the benchmarks on their own
# (bench/ and devcluster/bench: their scripts import each other as top-level modules, `from common import ...`).
typecheck: venv
	@$(PY) -m mypy
	@$(PY) -m mypy bench devcluster/bench

## unit: the unit lane, serially (-m unit over tests/ but browser, deploy and e2e, and devcluster/tests/internals)
unit: venv
	@$(PY) -m pytest $(UNIT_PATHS) -m unit $(PYTEST_ARGS)

## realcluster: the real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
## a simulated node) in the foreground; data and kubeconfig in .realcluster/. Needs Go (test infrastructure only).
realcluster: realcluster-build
	@REALCLUSTER_PORT=$(REALCLUSTER_PORT) realcluster/bin/realcluster up --data-dir .realcluster

realcluster-build:
	@scripts/build_realcluster.sh

## operator: the reconciler alone against the current kubeconfig (KUBECONFIG or ~/.kube/config)
operator: venv-api
	@$(PY) -m darkroom_operator $(OPERATOR_ARGS)

## cluster: devcluster alone in the foreground
cluster: venv-api
	@$(PY) -m devcluster serve --host 127.0.0.1 --port $(DEVCLUSTER_PORT) --data-dir .devcluster --kubeconfig .devcluster/kubeconfig

## bench: get the benchmarks ready (requirements/bench.txt into .venv: kopf and py-spy; the Go peer and realcluster
## built when missing) and list them, each with its command and how long it takes (bench/menu.py); nothing long runs
## unless asked: RUN=<name> runs one (`make bench RUN=reconcile ARGS="--count 100 --runs 1"`), under nice -n 15.
## Never part of the test suite.
RUN ?=
ARGS ?=
bench: venv-bench
	@scripts/build_go_peer.sh >/dev/null || echo "make bench: the Go peer did not build (bench/reconcile.py leaves it out with a note)"
	@scripts/build_realcluster.sh >/dev/null || echo "make bench: realcluster did not build (the benchmarks run on devcluster only)"
	@$(PY) bench/menu.py --run "$(RUN)" -- $(ARGS)

## docker-build: build the image (API + dashboard and reconciler) from deploy/Dockerfile
docker-build:
	docker build -f deploy/Dockerfile -t $(IMAGE) .

## deploy: install on the current kubectl context (OVERLAY=dev|production; KUBECTL="kubectl --context X")
deploy:
	@scripts/deploy.sh deploy $(OVERLAY)

## undeploy: remove what deploy installed, keeping the CRDs (and so every Darkroom and Task)
undeploy:
	@scripts/deploy.sh undeploy $(OVERLAY)

## chart: regenerate the Helm chart deploy/chart/ from deploy/ (kustomize stays the one source; scripts/chart.py)
chart: venv
	@$(PY) scripts/chart.py

## release: dist/install.yaml, the chart package and the image's SBOM of VERSION=x.y.z from a clean, committed tree
## (docs/operations/install.md "Release"); RELEASE_IMAGE names the image's repository, IMAGE_DIGEST (sha256:..., once
## it is pushed) pins it
RELEASE_IMAGE ?= darkroom-control-panel
IMAGE_DIGEST ?=
release: venv
	@$(PY) scripts/release.py --version "$(VERSION)" --image-repository "$(RELEASE_IMAGE)" --image-digest "$(IMAGE_DIGEST)"

## vendor: re-fetch the dashboard's htmx + htmx-ext-sse from the npm registry (pinned versions, sha512 checked)
vendor:
	@scripts/vendor_frontend.sh

clean:
	rm -rf .devcluster .realcluster realcluster/bin tools/helm/bin dist .pytest_cache .mypy_cache .ruff_cache

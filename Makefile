# Darkroom Control Panel — the two commands a fresh machine needs are `make api` and `make test`.
# Every target bootstraps .venv/ itself from the hashed locks in requirements/ (compiled by `make lock` from
# pyproject.toml), re-installing only when pyproject.toml or a lock changes. Two kinds of venv:
#   `make api` (and cluster, operator): the product's runtime + the embedded devcluster (requirements/devcluster.txt);
#   `make test` (and lint, typecheck, unit, bench): that + the toolchain (requirements/dev.txt).
# A dev venv serves `make api` as it is; a runtime-only venv gets the toolchain added by the first `make test`.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
LOCKS := requirements/build.txt requirements/runtime.txt requirements/devcluster.txt requirements/dev.txt
FINGERPRINT := $(shell cat pyproject.toml $(LOCKS) 2>/dev/null | sha1sum | cut -c1-12)
API_STAMP := $(VENV)/.installed-api-$(FINGERPRINT)
DEV_STAMP := $(VENV)/.installed-dev-$(FINGERPRINT)
# --no-deps: a lock is the whole closure, hashed (pip refuses anything else); no resolver, no surprise versions.
PIP_INSTALL := $(PY) -m pip install -q --disable-pip-version-check --no-deps --require-hashes
PORT ?= 5000
DEVCLUSTER_PORT ?= 6443
REALCLUSTER_PORT ?= 7443
PYTEST_ARGS ?=
OPERATOR_ARGS ?=
IMAGE ?= darkroom-control-panel:0.1.0
OVERLAY ?= dev
UV_ARGS ?=
UV_COMPILE = $(VENV)/bin/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes --custom-compile-command "make lock" $(UV_ARGS)

.PHONY: venv venv-api api test lint typecheck unit cluster realcluster realcluster-build operator bench clean docker-build deploy undeploy vendor lock

# $(call install,LOCK,WHAT): a venv if missing, then the lock, then our own packages (editable, built with the
# pinned setuptools of requirements/build.txt, no build isolation: nothing unpinned is fetched).
define install
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing $(2): $$(grep -c '^[A-Za-z]' $(1)) pinned packages from $(1) into $(VENV)/ (once; again only when a lock changes) ..."
	@SECONDS=0; $(PIP_INSTALL) -r requirements/build.txt -r $(1) \
		&& PYTHONWARNINGS=ignore::UserWarning $(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e . \
		&& echo "Installed in $${SECONDS} s ($$(du -sh $(VENV) | cut -f1) in $(VENV)/)."
endef

$(API_STAMP):
	$(call install,requirements/devcluster.txt,the product's runtime and the embedded devcluster (no test tools))
	@rm -f $(VENV)/.installed-api-* && touch $@

$(DEV_STAMP):
	$(call install,requirements/dev.txt,the product with devcluster and the test toolchain)
	@rm -f $(VENV)/.installed-* && touch $@ $(API_STAMP)

venv-api: $(API_STAMP)
venv: $(DEV_STAMP)

## api: run the product (embedded devcluster unless KUBECONFIG/--kubeconfig says otherwise; PORT, DEVCLUSTER_PORT)
api: venv-api
	@PORT=$(PORT) DEVCLUSTER_PORT=$(DEVCLUSTER_PORT) $(PY) scripts/run_api.py

## lock: recompile requirements/*.txt from pyproject.toml (UV_ARGS=--upgrade to move to the newest versions).
## dev.txt first; the others are constrained by it, so one package has one version in every lock.
lock: venv
	@$(PY) -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"]))' \
		| $(UV_COMPILE) - -o requirements/build.txt
	@$(UV_COMPILE) pyproject.toml --extra dev -o requirements/dev.txt
	@$(UV_COMPILE) pyproject.toml --extra devcluster -c requirements/dev.txt -o requirements/devcluster.txt
	@$(UV_COMPILE) pyproject.toml -c requirements/dev.txt -o requirements/runtime.txt

## test: lint, type-check and run the whole suite
test: venv lint typecheck
	@scripts/install_test_tools.sh
	@$(PY) -m pytest $(PYTEST_ARGS)

## lint: ruff, and the import contracts of pyproject.toml [tool.importlinter] (who may import whom)
lint: venv
	@$(PY) -m ruff check .
	@$(PY) -m ruff format --check .
	@PYTHONPATH=.:operator $(VENV)/bin/lint-imports --no-cache --config pyproject.toml

# mypy --strict (pyproject [tool.mypy]): product code and tests, then bench/ on its own (its scripts import each
# other as top-level modules, and bench/devcluster.py would clash with the devcluster package).
typecheck: venv
	@$(PY) -m mypy
	@$(PY) -m mypy bench

unit: venv
	@$(PY) -m pytest tests/unit $(PYTEST_ARGS)

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

## bench: performance tables (never part of the test suite)
bench: venv
	@$(PY) bench/devcluster.py

## docker-build: build the image (API + dashboard and reconciler) from deploy/Dockerfile
docker-build:
	docker build -f deploy/Dockerfile -t $(IMAGE) .

## deploy: install on the current kubectl context (OVERLAY=dev|production; KUBECTL="kubectl --context X")
deploy:
	@scripts/deploy.sh deploy $(OVERLAY)

## undeploy: remove what deploy installed, keeping the CRDs (and so every Darkroom and Task)
undeploy:
	@scripts/deploy.sh undeploy $(OVERLAY)

## vendor: re-fetch the dashboard's htmx + htmx-ext-sse from the npm registry (pinned versions, sha512 checked)
vendor:
	@scripts/vendor_frontend.sh

clean:
	rm -rf .devcluster .realcluster realcluster/bin .pytest_cache .mypy_cache .ruff_cache

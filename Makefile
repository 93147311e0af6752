# Darkroom Control Panel — the two commands a fresh machine needs are `make api` and `make test`.
# Every target bootstraps .venv/ itself (re-installing only when pyproject.toml changes).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml 2>/dev/null | cut -c1-12)
PORT ?= 5000
REALCLUSTER_PORT ?= 7443
PYTEST_ARGS ?=
OPERATOR_ARGS ?=
IMAGE ?= darkroom-control-panel:0.1.0
OVERLAY ?= dev

.PHONY: venv api test lint typecheck unit cluster realcluster realcluster-build operator bench clean docker-build deploy undeploy vendor

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	@$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)

## api: run the product (embedded devcluster unless KUBECONFIG/--kubeconfig says otherwise)
api: venv
	@PORT=$(PORT) $(PY) scripts/run_api.py

## test: lint, type-check and run the whole suite
test: venv lint typecheck
	@scripts/install_test_tools.sh
	@$(PY) -m pytest $(PYTEST_ARGS)

lint: venv
	@$(PY) -m ruff check .
	@$(PY) -m ruff format --check .

typecheck: venv
	@$(PY) -m mypy

unit: venv
	@$(PY) -m pytest tests/unit $(PYTEST_ARGS)

## realcluster: the real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
## a simulated node) in the foreground; data and kubeconfig in .realcluster/. Needs Go (test infrastructure only).
realcluster: realcluster-build
	@REALCLUSTER_PORT=$(REALCLUSTER_PORT) realcluster/bin/realcluster up --data-dir .realcluster

realcluster-build:
	@scripts/build_realcluster.sh

## operator: the reconciler alone against the current kubeconfig (KUBECONFIG or ~/.kube/config)
operator: venv
	@$(PY) -m darkroom_operator $(OPERATOR_ARGS)

## cluster: devcluster alone in the foreground
cluster: venv
	@$(PY) -m devcluster serve --host 127.0.0.1 --port 6443 --data-dir .devcluster --kubeconfig .devcluster/kubeconfig

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

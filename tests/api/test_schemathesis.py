"""Property-based fuzzing of the whole API from its own OpenAPI document (schemathesis + hypothesis).

Drives the real app in-process over WSGI, one app per cluster kind of the run (``--cluster``: devcluster and the real
control plane), each on a private cluster of its kind with the CRDs installed (the fuzzer creates, changes and deletes
objects freely, so it must not share the session clusters). Each generated case is sent to every kind's app and each
answer checked on its own: generating the cases (hypothesis, schemathesis) is most of the fuzzer's CPU and does not
depend on the cluster, so it is paid once, not once per kind. Every kind must answer each case with the same status
(the same requests in the same order: devcluster, the local default, answers as the real control plane does).
Every documented operation gets positive cases (valid by the schema) and negative cases (violating it);
every response is checked by schemathesis' default checks: no 5xx, documented status codes, content types
and headers, responses conforming to their schemas (CONFORMANCE), invalid input rejected with 4xx; all but
"valid input accepted" (see EXCLUDED_CHECKS). The endless event streams (``/watch``, ``/ui/live/...``) are
read for STREAM_READ_S each (heartbeats every 0.1 s let schemathesis stop on time), and each event read is
checked against the document's ``ServerSentEvent``. At least 1,000 cases run in total; derandomized, so a
failure reproduces; a failure names the kind that answered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.core.result import Err, Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from backend.api.watch import watching
from backend.app import create_app
from backend.core.access import ClusterAccess
from backend.settings import ApiSettings
from tests.clusters import ClusterKind, ClusterProcess
from tests.support import install_crds

pytestmark = pytest.mark.fuzz  # its own lane (tests/lanes.py): long, and clusters of its own

MIN_CASES = 1_000
EXAMPLES = {GenerationMode.POSITIVE: 50, GenerationMode.NEGATIVE: 25}
# endless: read for a while (their events: test_watching.py, test_live_rows.py, tests/dashboard/test_live_details.py)
STREAMS = {"/watch", "/ui/live/{view}", "/ui/live/{view}/{namespace}/{name}"}
STREAM_EXAMPLES = {GenerationMode.POSITIVE: 10, GenerationMode.NEGATIVE: 10}
STREAM_READ_S = 0.5
# What the answers must have in common with the document, for every operation.
CONFORMANCE = [status_code_conformance, content_type_conformance, response_headers_conformance, response_schema_conformance]
# "Schema-valid input must be accepted" cannot hold for rules a JSON schema cannot say: the namespace
# must exist, a WebFolder source needs baseUrl, a continue token must be one we issued. Those get a
# precise 4xx problem; schema-violating input must still be rejected (negative_data_rejection stays on).
EXCLUDED_CHECKS = [positive_data_acceptance]


@pytest.fixture
def fuzz_apps(cluster_kinds: tuple[ClusterKind, ...], fresh_cluster: Callable[..., ClusterProcess]) -> Iterator[dict[str, Flask]]:
    """Kind → the app on a private cluster of that kind (CRDs installed, its informers synced), for every kind selected."""
    apps: dict[str, Flask] = {}
    accesses: list[ClusterAccess] = []
    try:
        for kind in cluster_kinds:
            cluster = fresh_cluster(kind)
            install_crds(Path(cluster.kubeconfig))
            settings = ApiSettings(kubeconfig=Path(cluster.kubeconfig), sse_heartbeat_s=0.1)
            access = ClusterAccess.start(settings, environ={})
            accesses.append(access)
            assert access.synced, kind
            apps[kind] = create_app(settings, access=access)
            apps[kind].config["TESTING"] = True
        yield apps
    finally:
        for app in apps.values():
            watching.close(app)
        for access in accesses:
            access.stop()


def fuzz(operation: Any, mode: GenerationMode, examples: int, apps: dict[str, Flask]) -> int:
    """Run one operation in one mode, each case against every app of ``apps``; the number of cases it executed."""
    executed = 0
    stream = {"timeout": STREAM_READ_S} if operation.path in STREAMS else {}

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        nonlocal executed
        executed += 1
        statuses: dict[str, int] = {}
        for kind, app in apps.items():
            try:
                statuses[kind] = case.call_and_validate(app=app, excluded_checks=EXCLUDED_CHECKS, **stream).status_code
            except (Exception, BaseExceptionGroup) as e:
                e.add_note(f"answered by the app on {kind}")
                raise
        # the same request in the same sequence: devcluster must answer as the real control plane does
        assert len(set(statuses.values())) == 1, f"{case.method} {case.formatted_path} {case.query}: statuses by kind {statuses}"

    run()
    return executed


def test_the_conformance_checks_run() -> None:
    load_all_checks()
    assert set(CONFORMANCE) <= set(CHECKS.get_all()) - set(EXCLUDED_CHECKS)


@pytest.mark.timeout(1200)  # some 3,800 cases, each on every kind: minutes on a loaded machine (the suite's 300 s would fire inside a case)
def test_fuzz_every_operation(fuzz_apps: dict[str, Flask]) -> None:
    documents = {kind: app.test_client().get("/openapi.json").get_json() for kind, app in fuzz_apps.items()}
    assert len({json.dumps(document, sort_keys=True) for document in documents.values()}) == 1, "one document on every kind"
    schema = schemathesis.openapi.from_wsgi("/openapi.json", next(iter(fuzz_apps.values())))
    results = list(schema.get_all_operations())
    assert not [result.err() for result in results if isinstance(result, Err)]
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert {op.path for op in operations} >= {"/darkrooms", "/darkrooms/{namespace}/{name}", "/tasks", "/healthz", "/readyz", *STREAMS}
    counts: dict[str, int] = {}
    failures: dict[str, str] = {}
    for operation in operations:
        for mode, examples in (STREAM_EXAMPLES if operation.path in STREAMS else EXAMPLES).items():
            label = f"{operation.method.upper()} {operation.path} ({mode})"
            try:
                counts[label] = fuzz(operation, mode, examples, fuzz_apps)
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE, label
                counts[label] = 0  # nothing in this operation's schema can be violated (e.g. only free-form strings)
            except (Exception, BaseExceptionGroup) as e:  # collect every failure, then report them together
                failures[label] = "\n".join([f"{type(e).__name__}: {e}", *getattr(e, "__notes__", ())])
    report = "\n\n".join(f"{label}:\n{failure}" for label, failure in failures.items())
    assert not failures, f"{report}\n\ncases run: {sum(counts.values())} {counts}"
    assert sum(counts.values()) >= MIN_CASES, counts
    assert sum(n for label, n in counts.items() if label.endswith("(negative)")) > 0
    assert all(counts[f"GET {path} (positive)"] > 0 for path in STREAMS), counts

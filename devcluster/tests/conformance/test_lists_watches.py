"""Reads and watches through the official kubernetes client, asserting what kube-apiserver does.

Covers:
- list label selectors with every operator (``=``, ``==``, ``!=``, ``in``, ``notin``, exists,
  ``!key``, combinations); an unparsable selector is 400 BadRequest;
- list field selectors: ``metadata.name`` / ``metadata.namespace`` (with ``!=``), Event
  ``involvedObject.name`` / ``.kind`` / ``.uid``; an unsupported field label is 400 BadRequest with
  the kind's conversion message;
- all-namespaces lists (raw ``/api/v1/configmaps`` and ``list_config_map_for_all_namespaces``),
  items in etcd's key order (``namespace/name`` compared as strings, also page by page), list
  ``metadata.resourceVersion`` is the current revision;
- pagination: limit/continue returns every object exactly once, ``remainingItemCount`` without
  selectors (absent with one), continued pages are a consistent snapshot at the first page's
  revision; a continue token older than the history is 410 Expired carrying a fresh (inconsistent)
  continue token that resumes at the latest revision; a malformed token is 400;
- resourceVersion on list: ``Exact`` serves the list as of that revision, ``NotOlderThan`` the
  current state, a future revision is 504 Timeout (ResourceVersionTooLarge), a compacted one 410,
  ``resourceVersionMatch`` without ``resourceVersion`` is 422;
- watch: no resourceVersion gives synthetic ADDED then live events; from a resourceVersion, exactly
  the later changes in commit order with increasing resourceVersions; label and field selector
  watches turn "stops matching" into DELETED (last matching state, new resourceVersion) and
  "starts matching" into ADDED; single-object watches (fieldSelector and the by-name URLs);
  ``timeoutSeconds`` ends the stream; idle BOOKMARKs carrying only kind/apiVersion/resourceVersion;
  a too-old resourceVersion gives one ERROR event with a 410 Expired Status, and
  ``kubernetes.watch.Watch`` turns it into ApiException(410); chunked newline-delimited JSON framing;
  50 concurrent watchers see identical event sequences; commit order under 8 concurrent writers;
- server-side printing: Table for configmaps, deployments and a Darkroom (CRD printer columns,
  priority, READY from the /status subresource), includeObject Metadata/Object/None on lists and
  single objects; PartialObjectMetadataList returns metadata only (also through DynamicClient).
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from typing import Any

import pytest
from kubernetes import client, config, watch
from kubernetes.dynamic import DynamicClient

from tests.clusters import DevclusterProcess
from tests.support import wait_for

pytestmark = pytest.mark.devcluster_only  # devcluster's own conformance suite; tests/fidelity holds it against kube

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
DR_GROUP, DR_VERSION, DR_PLURAL = "deployments.example.com", "v1", "darkrooms"


# -- helpers ---------------------------------------------------------------------------------


def _raw(
    api: client.ApiClient, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str = "application/json", timeout: float = 30.0
) -> Any:
    """A GET through the client's own transport, unparsed: the urllib3 response (streamable)."""
    method, url, headers, _, _ = api.param_serialize(
        "GET", path, query_params=list(query), header_params={"Accept": accept}, auth_settings=["BearerToken"]
    )
    return api.call_api(method, url, header_params=headers, _request_timeout=timeout).response


def _get_json(
    api: client.ApiClient, path: str, query: Sequence[tuple[str, str]] = (), *, accept: str = "application/json"
) -> tuple[int, dict[str, Any]]:
    resp = _raw(api, path, query, accept=accept)
    try:
        return resp.status, json.loads(resp.data)
    finally:
        resp.release_conn()


def _lines(resp: Any) -> Iterator[dict[str, Any]]:
    """Watch events from a streaming response, one JSON document per line."""
    buffer = b""
    for chunk in resp.stream(65536):
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield json.loads(line)
    assert not buffer.strip(), f"unterminated watch line: {buffer!r}"


@contextlib.contextmanager
def _watch_raw(api: client.ApiClient, path: str, query: Sequence[tuple[str, str]], timeout: float = 30.0) -> Iterator[Any]:
    resp = _raw(api, path, [("watch", "true"), *query], timeout=timeout)
    try:
        assert resp.status == 200
        yield resp
    finally:
        resp.close()
        resp.release_conn()


def _error(e: client.ApiException) -> dict[str, Any]:
    status: dict[str, Any] = json.loads(e.body)
    return status


def _expect_error(call: Callable[[], object], code: int, reason: str) -> dict[str, Any]:
    with pytest.raises(client.ApiException) as info:
        call()
    assert info.value.status == code
    body = _error(info.value)
    assert body["kind"] == "Status"
    assert body["status"] == "Failure"
    assert body["code"] == code
    assert body["reason"] == reason
    return body


def _cm(name: str, labels: dict[str, str] | None = None, data: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, **({"labels": labels} if labels else {})}, "data": data or {}}


def _names(items: Sequence[Any]) -> list[str]:
    return [i.metadata.name for i in items]


def _pooled_client(cluster: DevclusterProcess, pool: int) -> client.ApiClient:
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(cluster.kubeconfig), client_configuration=configuration)
    configuration.connection_pool_maxsize = pool
    return client.ApiClient(configuration)


@contextlib.contextmanager
def _other_namespace(core: client.CoreV1Api, name: str) -> Iterator[str]:
    core.create_namespace({"metadata": {"name": name}})
    try:
        yield name
    finally:
        core.delete_namespace(name)


# -- label and field selectors -----------------------------------------------------------------


def test_label_selectors_every_operator(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    for name, labels in {
        "a": {"env": "prod", "tier": "web"},
        "b": {"env": "dev", "tier": "web"},
        "c": {"env": "prod"},
        "d": {},
        "e": {"env": "qa", "tier": "db"},
    }.items():
        core.create_namespaced_config_map(namespace, _cm(name, labels))
    cases = {
        "env=prod": ["a", "c"],
        "env==prod": ["a", "c"],
        "env!=prod": ["b", "d", "e"],  # != also matches objects without the key
        "env in (dev,qa)": ["b", "e"],
        "env notin (dev,qa)": ["a", "c", "d"],  # notin also matches objects without the key
        "tier": ["a", "b", "e"],
        "!tier": ["c", "d"],
        "env=prod,tier": ["a"],
        "env in (prod),!tier": ["c"],
        "env notin (prod),tier in (web,db)": ["b", "e"],
        "env=nope": [],
    }
    for selector, expected in cases.items():
        assert _names(core.list_namespaced_config_map(namespace, label_selector=selector).items) == expected, selector
    for bad in ("env in prod", "env in (prod", "=prod", "env=bad value", "env=-bad-"):
        body = _expect_error(functools.partial(core.list_namespaced_config_map, namespace, label_selector=bad), 400, "BadRequest")
        assert body["message"], bad


def test_field_selectors_name_and_namespace(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    for name in ("one", "two", "three"):
        core.create_namespaced_config_map(namespace, _cm(name))
    assert _names(core.list_namespaced_config_map(namespace, field_selector="metadata.name=two").items) == ["two"]
    assert _names(core.list_namespaced_config_map(namespace, field_selector="metadata.name!=two").items) == ["one", "three"]
    assert _names(core.list_namespaced_config_map(namespace, field_selector="metadata.name==one").items) == ["one"]
    assert _names(core.list_namespaced_config_map(namespace, field_selector=f"metadata.namespace={namespace}").items) == [
        "one",
        "three",
        "two",
    ]
    assert core.list_namespaced_config_map(namespace, field_selector="metadata.namespace=elsewhere").items == []
    across = core.list_config_map_for_all_namespaces(field_selector=f"metadata.namespace={namespace},metadata.name!=one")
    assert [(i.metadata.namespace, i.metadata.name) for i in across.items] == [(namespace, "three"), (namespace, "two")]
    body = _expect_error(lambda: core.list_namespaced_config_map(namespace, field_selector="data.key=x"), 400, "BadRequest")
    assert body["message"] == '"data.key" is not a known field selector: only "metadata.name", "metadata.namespace"'
    _expect_error(lambda: core.list_namespaced_config_map(namespace, field_selector="metadata.name"), 400, "BadRequest")


def test_event_field_selectors(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    uids = {}
    for name, kind, target in (("e1", "ConfigMap", "alpha"), ("e2", "Pod", "alpha"), ("e3", "ConfigMap", "beta")):
        uids[name] = str(uuid.uuid4())
        core.create_namespaced_event(
            namespace,
            {
                "metadata": {"name": name},
                "involvedObject": {"kind": kind, "name": target, "namespace": namespace, "uid": uids[name], "apiVersion": "v1"},
                "reason": "Tested",
                "message": "selector test",
                "type": "Normal",
                "source": {"component": "conformance"},
            },
        )

    def names(selector: str) -> list[str]:
        return _names(core.list_namespaced_event(namespace, field_selector=selector).items)

    assert names("involvedObject.name=alpha") == ["e1", "e2"]
    assert names("involvedObject.kind=ConfigMap") == ["e1", "e3"]
    assert names(f"involvedObject.uid={uids['e2']}") == ["e2"]
    assert names("involvedObject.kind=ConfigMap,involvedObject.name=alpha") == ["e1"]
    assert names("involvedObject.kind!=ConfigMap") == ["e2"]
    assert names("reason=Tested,type=Normal,source=conformance") == ["e1", "e2", "e3"]
    across = core.list_event_for_all_namespaces(field_selector=f"involvedObject.name=beta,metadata.namespace={namespace}")
    assert _names(across.items) == ["e3"]
    body = _expect_error(lambda: core.list_namespaced_event(namespace, field_selector="involvedObject.color=red"), 400, "BadRequest")
    assert body["message"] == "field label not supported: involvedObject.color"


# -- all-namespaces lists, ordering, list resourceVersion ---------------------------------------


def test_all_namespaces_lists_sorted_by_key(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    marker = {"suite": namespace}
    with _other_namespace(core, f"{namespace}-b") as second:
        first_writes = [core.create_namespaced_config_map(namespace, _cm(n, marker)) for n in ("zeta", "alpha")]
        second_writes = [core.create_namespaced_config_map(second, _cm(n, marker)) for n in ("mid", "beta")]
        # etcd's key order, `namespace/name` compared as strings: `<ns>-b/...` before `<ns>/...` ('-' < '/').
        expected = [(second, "beta"), (second, "mid"), (namespace, "alpha"), (namespace, "zeta")]
        typed = core.list_config_map_for_all_namespaces(label_selector=f"suite={namespace}")
        assert [(i.metadata.namespace, i.metadata.name) for i in typed.items] == expected
        paged: list[tuple[str, str]] = []
        token = None
        for _ in range(10):  # one a page, across the two namespaces: each object once, in the same order
            page = core.list_config_map_for_all_namespaces(label_selector=f"suite={namespace}", limit=1, _continue=token)
            paged += [(i.metadata.namespace, i.metadata.name) for i in page.items]
            token = page.metadata._continue
            if not token:
                break
        assert paged == expected
        status, raw = _get_json(api_client, "/api/v1/configmaps", [("labelSelector", f"suite={namespace}")])
        assert status == 200
        assert raw["kind"] == "ConfigMapList"
        assert raw["apiVersion"] == "v1"
        assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in raw["items"]] == expected
        # The list's resourceVersion is the store's current revision: at least every write before it,
        # and older than any write after it.
        newest = max(int(o.metadata.resource_version) for o in first_writes + second_writes)
        assert int(raw["metadata"]["resourceVersion"]) >= newest
        later = core.create_namespaced_config_map(namespace, _cm("later"))
        assert int(later.metadata.resource_version) > int(raw["metadata"]["resourceVersion"])
        # Namespaced list of the same objects carries the same cluster-wide revision semantics.
        listed = core.list_namespaced_config_map(namespace)
        assert int(listed.metadata.resource_version) >= int(later.metadata.resource_version)
        assert _names(listed.items) == ["alpha", "later", "zeta"]


# -- pagination --------------------------------------------------------------------------------


def test_pagination_returns_every_object_once_from_a_consistent_snapshot(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    names = [f"p-{i:02d}" for i in range(25)]
    for name in reversed(names):  # created out of order: lists are still sorted by name
        core.create_namespaced_config_map(namespace, _cm(name, {"page": "yes"}, {"v": "old"}))

    page1 = core.list_namespaced_config_map(namespace, limit=10)
    assert _names(page1.items) == names[:10]
    assert page1.metadata.remaining_item_count == 15
    assert page1.metadata._continue
    snapshot_rv = page1.metadata.resource_version

    # Changes after the first page must not show in later pages.
    core.create_namespaced_config_map(namespace, _cm("p-100", {"page": "yes"}))  # sorts between p-10 and p-11
    core.delete_namespaced_config_map("p-15", namespace)
    changed = core.patch_namespaced_config_map("p-20", namespace, {"data": {"v": "new"}})
    assert int(changed.metadata.resource_version) > int(snapshot_rv)

    page2 = core.list_namespaced_config_map(namespace, limit=10, _continue=page1.metadata._continue)
    assert _names(page2.items) == names[10:20]
    assert page2.metadata.remaining_item_count == 5
    assert page2.metadata.resource_version == snapshot_rv
    page3 = core.list_namespaced_config_map(namespace, limit=10, _continue=page2.metadata._continue)
    assert _names(page3.items) == names[20:]
    assert page3.metadata._continue is None
    assert page3.metadata.remaining_item_count is None
    assert page3.metadata.resource_version == snapshot_rv
    old_p20 = next(i for i in page3.items if i.metadata.name == "p-20")
    assert old_p20.data == {"v": "old"}
    assert int(old_p20.metadata.resource_version) <= int(snapshot_rv)

    everything = _names(page1.items + page2.items + page3.items)
    assert everything == names
    assert len(set(everything)) == 25

    # A fresh list sees the new state.
    now = _names(core.list_namespaced_config_map(namespace).items)
    assert "p-100" in now and "p-15" not in now

    # With a selector the server cannot count what is left: no remainingItemCount.
    selected = core.list_namespaced_config_map(namespace, limit=10, label_selector="page=yes")
    assert len(selected.items) == 10
    assert selected.metadata._continue
    assert selected.metadata.remaining_item_count is None
    rest: list[str] = _names(selected.items)
    token = selected.metadata._continue
    while token:
        more = core.list_namespaced_config_map(namespace, limit=10, label_selector="page=yes", _continue=token)
        rest += _names(more.items)
        token = more.metadata._continue
    assert rest == sorted(set(names) - {"p-15"} | {"p-100"})

    # Exactly `limit` objects left: no continue token on the last full page.
    exact = core.list_namespaced_config_map(namespace, limit=25)
    assert len(exact.items) == 25
    assert exact.metadata._continue is None


def test_malformed_continue_token_is_bad_request(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    for token in ("garbage", "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ=="):  # not base64 JSON; JSON without rv/start
        body = _expect_error(functools.partial(core.list_namespaced_config_map, namespace, limit=1, _continue=token), 400, "BadRequest")
        assert body["message"].startswith("invalid continue token: continue key is not valid")
    core.create_namespaced_config_map(namespace, _cm("a"))
    core.create_namespaced_config_map(namespace, _cm("b"))
    token = core.list_namespaced_config_map(namespace, limit=1).metadata._continue
    body = _expect_error(
        lambda: core.list_namespaced_config_map(namespace, limit=1, _continue=token, resource_version="1"), 400, "BadRequest"
    )
    assert body["message"] == "specifying resource version is not allowed when using continue"


def test_expired_continue_and_compacted_revisions(fresh_devcluster: Callable[..., DevclusterProcess]) -> None:
    cluster = fresh_devcluster("--history-size", "5")
    api = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    try:
        core = client.CoreV1Api(api)
        core.create_namespace({"metadata": {"name": "pages"}})
        names = [f"p-{i:02d}" for i in range(25)]
        created = [core.create_namespaced_config_map("pages", _cm(n, data={"v": "1"})) for n in names]
        first_rv = created[0].metadata.resource_version
        # Nothing else writes on a private server: the list revision is exactly the last write.
        page1 = core.list_namespaced_config_map("pages", limit=10)
        assert page1.metadata.resource_version == created[-1].metadata.resource_version
        assert _names(page1.items) == names[:10]
        for i in range(6):  # > history size: the first page's revision is compacted away
            core.create_namespaced_config_map("pages", _cm(f"zz-{i}"))
        body = _expect_error(lambda: core.list_namespaced_config_map("pages", limit=10, _continue=page1.metadata._continue), 410, "Expired")
        assert body["message"].startswith("The provided continue parameter is too old to display a consistent list result.")
        fresh_token = body["metadata"]["continue"]
        assert fresh_token
        # The token from the 410 continues after the last key, at the latest revision (inconsistent list).
        rest: list[str] = []
        token = fresh_token
        while token:
            page = core.list_namespaced_config_map("pages", limit=10, _continue=token)
            rest += _names(page.items)
            token = page.metadata._continue
        assert rest == names[10:] + [f"zz-{i}" for i in range(6)]

        # resourceVersion lists: compacted revision is 410, a future one 504.
        _expect_error(
            lambda: core.list_namespaced_config_map("pages", resource_version=first_rv, resource_version_match="Exact"), 410, "Expired"
        )
        current = int(core.list_namespaced_config_map("pages").metadata.resource_version)
        body = _expect_error(
            lambda: core.list_namespaced_config_map("pages", resource_version=str(current + 100), resource_version_match="Exact"),
            504,
            "Timeout",
        )
        assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    finally:
        api.close()


# -- resourceVersion on list -------------------------------------------------------------------


def test_list_at_resource_version(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    a1 = core.create_namespaced_config_map(namespace, _cm("a", data={"v": "1"}))
    a2 = core.patch_namespaced_config_map("a", namespace, {"data": {"v": "2"}})
    b1 = core.create_namespaced_config_map(namespace, _cm("b", data={"v": "1"}))
    core.delete_namespaced_config_map("a", namespace)

    at1 = core.list_namespaced_config_map(namespace, resource_version=a1.metadata.resource_version, resource_version_match="Exact")
    assert at1.metadata.resource_version == a1.metadata.resource_version
    assert [(i.metadata.name, i.data) for i in at1.items] == [("a", {"v": "1"})]
    at2 = core.list_namespaced_config_map(namespace, resource_version=a2.metadata.resource_version, resource_version_match="Exact")
    assert [(i.metadata.name, i.data, i.metadata.resource_version) for i in at2.items] == [("a", {"v": "2"}, a2.metadata.resource_version)]
    at3 = core.list_namespaced_config_map(namespace, resource_version=b1.metadata.resource_version, resource_version_match="Exact")
    assert _names(at3.items) == ["a", "b"]
    # Exact with a limit pages through the old revision too.
    paged = core.list_namespaced_config_map(
        namespace, resource_version=b1.metadata.resource_version, resource_version_match="Exact", limit=1
    )
    assert _names(paged.items) == ["a"]
    assert _names(core.list_namespaced_config_map(namespace, limit=1, _continue=paged.metadata._continue).items) == ["b"]

    # NotOlderThan (and a bare resourceVersion) serve data at least that fresh: the current state.
    newer = core.list_namespaced_config_map(namespace, resource_version=a1.metadata.resource_version, resource_version_match="NotOlderThan")
    assert _names(newer.items) == ["b"]
    assert int(newer.metadata.resource_version) > int(b1.metadata.resource_version)
    assert _names(core.list_namespaced_config_map(namespace, resource_version="0").items) == ["b"]

    future = str(int(newer.metadata.resource_version) + 1000)
    for match in ("Exact", "NotOlderThan", None):
        body = _expect_error(
            functools.partial(core.list_namespaced_config_map, namespace, resource_version=future, resource_version_match=match),
            504,
            "Timeout",
        )
        assert body["message"].startswith(f"Timeout: Too large resource version: {future}, current: ")
        assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"

    # ListOptions validation: 422 Invalid naming every problem.
    body = _expect_error(lambda: core.list_namespaced_config_map(namespace, resource_version_match="Exact"), 422, "Invalid")
    assert body["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: '
        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
    )
    assert [(c["field"], c["reason"]) for c in body["details"]["causes"]] == [("resourceVersionMatch", "FieldValueForbidden")]
    body = _expect_error(
        lambda: core.list_namespaced_config_map(namespace, resource_version="1", resource_version_match="Newest"), 422, "Invalid"
    )
    assert body["message"].endswith('resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""')
    body = _expect_error(
        lambda: core.list_namespaced_config_map(namespace, resource_version="0", resource_version_match="Exact"), 422, "Invalid"
    )
    assert body["message"].endswith('resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
    body = _expect_error(
        lambda: core.list_namespaced_config_map(
            namespace, resource_version="0", resource_version_match="NotOlderThan", _continue=paged.metadata._continue
        ),
        422,
        "Invalid",
    )
    assert body["details"]["causes"][0]["message"] == "Forbidden: resourceVersionMatch is forbidden when continue is provided"


# -- watch -------------------------------------------------------------------------------------


def test_watch_without_resource_version_sends_existing_objects_then_changes(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, _cm("first"))
    core.create_namespaced_config_map(namespace, _cm("second"))
    w = watch.Watch()
    seen: list[tuple[str, str]] = []
    with contextlib.closing(w.stream(core.list_namespaced_config_map, namespace, timeout_seconds=20, _request_timeout=30)) as stream:
        for event in stream:
            assert isinstance(event["object"], client.V1ConfigMap)
            seen.append((event["type"], event["object"].metadata.name))
            if len(seen) == 2:
                core.create_namespaced_config_map(namespace, _cm("third"))
                core.patch_namespaced_config_map("third", namespace, {"data": {"k": "v"}})
                core.delete_namespaced_config_map("third", namespace)
            if len(seen) == 5:
                w.stop()
                break
    assert sorted(seen[:2]) == [("ADDED", "first"), ("ADDED", "second")]
    assert seen[2:] == [("ADDED", "third"), ("MODIFIED", "third"), ("DELETED", "third")]


def test_watch_from_resource_version_replays_changes_in_commit_order(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    first = core.create_namespaced_config_map(namespace, _cm("first"))
    acks: list[tuple[str, str, str | None]] = [("ADDED", "first", first.metadata.resource_version)]
    a = core.create_namespaced_config_map(namespace, _cm("a", data={"v": "1"}))
    acks.append(("ADDED", "a", a.metadata.resource_version))
    a2 = core.patch_namespaced_config_map("a", namespace, {"data": {"v": "2"}})
    acks.append(("MODIFIED", "a", a2.metadata.resource_version))
    b = core.create_namespaced_config_map(namespace, _cm("b"))
    acks.append(("ADDED", "b", b.metadata.resource_version))
    core.delete_namespaced_config_map("a", namespace)
    acks.append(("DELETED", "a", None))
    b2 = core.replace_namespaced_config_map("b", namespace, {"metadata": {"name": "b"}, "data": {"x": "y"}})
    acks.append(("MODIFIED", "b", b2.metadata.resource_version))
    core.delete_namespaced_config_map("b", namespace)
    acks.append(("DELETED", "b", None))

    w = watch.Watch()
    events = list(
        islice(
            w.stream(core.list_namespaced_config_map, namespace, resource_version=start, timeout_seconds=10, _request_timeout=30), len(acks)
        )
    )
    got = [(e["type"], e["object"].metadata.name) for e in events]
    assert got == [(t, n) for t, n, _ in acks]
    rvs = [int(e["object"].metadata.resource_version) for e in events]
    assert rvs == sorted(rvs) and len(set(rvs)) == len(rvs)
    assert all(rv > int(start) for rv in rvs)
    for event, (_, _, rv) in zip(events, acks, strict=True):
        if rv is not None:
            assert event["object"].metadata.resource_version == rv
    # A DELETED event carries the object's last state.
    assert events[4]["object"].data == {"v": "2"}
    assert events[6]["object"].data == {"x": "y"}
    assert w.resource_version == events[-1]["object"].metadata.resource_version

    # Watching from the last of them: nothing older is replayed, the next change is.
    with _watch_raw(
        api_client, f"/api/v1/namespaces/{namespace}/configmaps", [("resourceVersion", str(rvs[-1])), ("timeoutSeconds", "10")]
    ) as resp:
        core.create_namespaced_config_map(namespace, _cm("after"))
        event = next(_lines(resp))
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "after")


def test_label_selector_watch_turns_match_changes_into_added_and_deleted(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, _cm("obj", {"team": "blue"}, {"v": "1"}))
    away = core.patch_namespaced_config_map("obj", namespace, {"metadata": {"labels": {"team": "red"}}, "data": {"v": "2"}})
    core.create_namespaced_config_map(namespace, _cm("never", {"team": "red"}))
    core.patch_namespaced_config_map("never", namespace, {"data": {"v": "x"}})
    back = core.patch_namespaced_config_map("obj", namespace, {"metadata": {"labels": {"team": "blue"}}})
    core.patch_namespaced_config_map("obj", namespace, {"data": {"v": "3"}})
    core.delete_namespaced_config_map("obj", namespace)

    w = watch.Watch()
    events = list(
        islice(
            w.stream(
                core.list_namespaced_config_map,
                namespace,
                label_selector="team=blue",
                resource_version=start,
                timeout_seconds=10,
                _request_timeout=30,
            ),
            5,
        )
    )
    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "obj"),
        ("DELETED", "obj"),
        ("ADDED", "obj"),
        ("MODIFIED", "obj"),
        ("DELETED", "obj"),
    ]
    gone = events[1]["object"]
    # kube-apiserver sends the last state that matched, stamped with the change's resourceVersion.
    assert gone.metadata.labels == {"team": "blue"}
    assert gone.data == {"v": "1"}
    assert gone.metadata.resource_version == away.metadata.resource_version
    assert events[2]["object"].metadata.resource_version == back.metadata.resource_version
    assert events[2]["object"].data == {"v": "2"}
    assert events[3]["object"].data == {"v": "3"}

    # Nothing of "never" leaks into the selected stream, even with more time.
    with _watch_raw(
        api_client,
        f"/api/v1/namespaces/{namespace}/configmaps",
        [("labelSelector", "team=blue"), ("resourceVersion", start), ("timeoutSeconds", "1")],
    ) as resp:
        assert [e["object"]["metadata"]["name"] for e in _lines(resp)] == ["obj"] * 5


def test_field_selector_watch_on_event_type(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)

    def event(name: str, type_: str) -> dict[str, Any]:
        return {
            "metadata": {"name": name},
            "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": namespace},
            "reason": "Tested",
            "message": "field watch",
            "type": type_,
        }

    start = core.list_namespaced_event(namespace).metadata.resource_version
    core.create_namespaced_event(namespace, event("ev1", "Normal"))
    up = core.patch_namespaced_event("ev1", namespace, {"type": "Warning"})
    core.create_namespaced_event(namespace, event("ev2", "Warning"))
    down = core.patch_namespaced_event("ev1", namespace, {"type": "Normal", "message": "calm"})
    core.delete_namespaced_event("ev2", namespace)
    core.delete_namespaced_event("ev1", namespace)  # never matched again: no event

    events = list(
        islice(
            watch.Watch().stream(
                core.list_namespaced_event,
                namespace,
                field_selector="type=Warning",
                resource_version=start,
                timeout_seconds=3,
                _request_timeout=30,
            ),
            10,
        )
    )
    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "ev1"),
        ("ADDED", "ev2"),
        ("DELETED", "ev1"),
        ("DELETED", "ev2"),
    ]
    assert events[0]["object"].metadata.resource_version == up.metadata.resource_version
    assert events[2]["object"].type == "Warning"
    assert events[2]["object"].message == "field watch"
    assert events[2]["object"].metadata.resource_version == down.metadata.resource_version


def test_single_object_watches(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, _cm("one"))
    core.create_namespaced_config_map(namespace, _cm("two"))
    w = watch.Watch()
    seen: list[tuple[str, str]] = []
    with contextlib.closing(
        w.stream(core.list_namespaced_config_map, namespace, field_selector="metadata.name=one", timeout_seconds=20, _request_timeout=30)
    ) as stream:
        for event in stream:
            seen.append((event["type"], event["object"].metadata.name))
            if len(seen) == 1:
                start = event["object"].metadata.resource_version
                core.patch_namespaced_config_map("two", namespace, {"data": {"k": "v"}})
                core.patch_namespaced_config_map("one", namespace, {"data": {"k": "v"}})
                core.delete_namespaced_config_map("two", namespace)
                core.delete_namespaced_config_map("one", namespace)
            if len(seen) == 3:
                w.stop()
                break
    assert seen == [("ADDED", "one"), ("MODIFIED", "one"), ("DELETED", "one")]

    # The by-name URL forms: ?watch=true on the object, and the legacy /watch/ prefix.
    for path, query in (
        (f"/api/v1/namespaces/{namespace}/configmaps/one", [("watch", "true")]),
        (f"/api/v1/watch/namespaces/{namespace}/configmaps/one", []),
    ):
        resp = _raw(api_client, path, [*query, ("resourceVersion", start), ("timeoutSeconds", "1")])
        try:
            assert resp.status == 200
            assert [(e["type"], e["object"]["metadata"]["name"]) for e in _lines(resp)] == [("MODIFIED", "one"), ("DELETED", "one")]
        finally:
            resp.release_conn()


def test_timeout_seconds_ends_the_watch(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    events = list(
        watch.Watch().stream(core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=1, _request_timeout=30)
    )
    assert events == []
    resp = _raw(
        api_client, f"/api/v1/namespaces/{namespace}/configmaps", [("watch", "1"), ("resourceVersion", rv), ("timeoutSeconds", "1")]
    )
    try:
        assert resp.status == 200
        assert resp.read() == b""  # the server ends the chunked body: EOF, no events
    finally:
        resp.release_conn()


def test_idle_watch_gets_bookmarks(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    w = watch.Watch()
    seen: list[dict[str, Any]] = []
    with contextlib.closing(
        w.stream(
            core.list_namespaced_config_map,
            namespace,
            resource_version=rv,
            allow_watch_bookmarks=True,
            timeout_seconds=20,
            _request_timeout=30,
        )
    ) as stream:
        for event in stream:
            seen.append(event)
            if len(seen) == 1:
                # The watch client keeps the bookmark's resourceVersion to resume from.
                assert w.resource_version == event["raw_object"]["metadata"]["resourceVersion"]
                created = core.create_namespaced_config_map(namespace, _cm("wake"))
            if event["type"] == "BOOKMARK" and len(seen) > 2:
                w.stop()
                break
    first, added, *_, last = seen
    for bookmark in (first, last):
        assert bookmark["type"] == "BOOKMARK"
        obj = bookmark["raw_object"]
        assert obj["kind"] == "ConfigMap"
        assert obj["apiVersion"] == "v1"
        assert set(obj) <= {"kind", "apiVersion", "metadata"}
        assert "name" not in obj["metadata"] and "uid" not in obj["metadata"]
        assert int(obj["metadata"]["resourceVersion"]) >= int(rv)
    assert (added["type"], added["object"].metadata.name) == ("ADDED", "wake")
    assert int(last["raw_object"]["metadata"]["resourceVersion"]) >= int(created.metadata.resource_version)
    # Without allowWatchBookmarks no BOOKMARK is sent.
    plain = list(
        watch.Watch().stream(core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=2, _request_timeout=30)
    )
    assert [e["type"] for e in plain] == ["ADDED"]


def test_custom_resource_watch_bookmarks_and_dynamic_client(api_client: client.ApiClient, namespace: str, crds_installed: None) -> None:
    dyn = DynamicClient(api_client)
    darkrooms = dyn.resources.get(api_version=f"{DR_GROUP}/{DR_VERSION}", kind="Darkroom")
    rv = darkrooms.get(namespace=namespace).metadata.resourceVersion
    seen: list[dict[str, Any]] = []
    for event in darkrooms.watch(namespace=namespace, resource_version=rv, allow_watch_bookmarks=True, timeout=5):
        seen.append(event)
        if event["type"] == "BOOKMARK":
            break
    assert [e["type"] for e in seen] == ["BOOKMARK"]  # idle: nothing but the bookmark
    bookmark = seen[-1]["raw_object"]
    assert bookmark["kind"] == "Darkroom"
    assert bookmark["apiVersion"] == f"{DR_GROUP}/{DR_VERSION}"
    assert set(bookmark) <= {"kind", "apiVersion", "metadata"}
    assert int(bookmark["metadata"]["resourceVersion"]) >= int(rv)


def test_watch_from_compacted_resource_version_is_410(fresh_devcluster: Callable[..., DevclusterProcess]) -> None:
    cluster = fresh_devcluster("--history-size", "5")
    api = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    try:
        core = client.CoreV1Api(api)
        core.create_namespace({"metadata": {"name": "old"}})
        old = core.create_namespaced_config_map("old", _cm("c-0")).metadata.resource_version
        for i in range(1, 9):
            core.create_namespaced_config_map("old", _cm(f"c-{i}"))

        resp = _raw(api, "/api/v1/namespaces/old/configmaps", [("watch", "true"), ("resourceVersion", old)])
        try:
            assert resp.status == 200  # the error travels inside the stream
            events = list(_lines(resp))  # and the server ends the stream after it
        finally:
            resp.release_conn()
        assert len(events) == 1
        assert events[0]["type"] == "ERROR"
        status = events[0]["object"]
        assert status["kind"] == "Status" and status["apiVersion"] == "v1"
        assert status["status"] == "Failure"
        assert status["code"] == 410
        assert status["reason"] == "Expired"
        assert status["message"].startswith(f"too old resource version: {old} (")

        # kubernetes.watch.Watch raises ApiException(410): at once with timeout_seconds, and after
        # its single automatic retry from the same resourceVersion without it.
        for kwargs in ({"timeout_seconds": 5}, {}):
            with pytest.raises(client.ApiException) as info:
                list(watch.Watch().stream(core.list_namespaced_config_map, "old", resource_version=old, _request_timeout=30, **kwargs))
            assert info.value.status == 410
            assert info.value.reason.startswith("Expired: too old resource version")

        # A current resourceVersion still watches fine.
        current = core.list_namespaced_config_map("old").metadata.resource_version
        with _watch_raw(api, "/api/v1/namespaces/old/configmaps", [("resourceVersion", current), ("timeoutSeconds", "10")]) as stream:
            core.create_namespaced_config_map("old", _cm("fresh"))
            event = next(_lines(stream))
        assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "fresh")
    finally:
        api.close()


def test_watch_wire_format_is_chunked_newline_delimited_json(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version
    for name in ("x1", "x2", "x3"):
        core.create_namespaced_config_map(namespace, _cm(name, data={"text": "line\nbreak {json}"}))
    with _watch_raw(api_client, f"/api/v1/namespaces/{namespace}/configmaps", [("resourceVersion", rv), ("timeoutSeconds", "10")]) as resp:
        assert resp.headers["Transfer-Encoding"] == "chunked"
        assert resp.headers["Content-Type"].startswith("application/json")
        raw = b""
        for chunk in resp.read_chunked():
            raw += chunk
            if raw.count(b"\n") >= 3:
                break
    lines = raw.split(b"\n")
    assert lines[-1] == b""  # every event ends with a newline
    events = [json.loads(line) for line in lines[:-1]]
    assert len(events) == 3
    for event, name in zip(events, ("x1", "x2", "x3"), strict=True):
        assert set(event) == {"type", "object"}
        assert event["type"] == "ADDED"
        assert event["object"]["kind"] == "ConfigMap" and event["object"]["apiVersion"] == "v1"
        assert event["object"]["metadata"]["name"] == name
        assert event["object"]["data"] == {"text": "line\nbreak {json}"}  # newlines inside values stay escaped


def test_fifty_concurrent_watchers_see_the_same_events(devcluster: DevclusterProcess, api_client: client.ApiClient, namespace: str) -> None:
    api = _pooled_client(devcluster, 64)
    try:
        core = client.CoreV1Api(api)
        start = core.list_namespaced_config_map(namespace).metadata.resource_version
        established = threading.Semaphore(0)

        def watcher() -> list[tuple[str, str, str]]:
            with _watch_raw(
                api, f"/api/v1/namespaces/{namespace}/configmaps", [("resourceVersion", start), ("timeoutSeconds", "30")], timeout=60
            ) as resp:
                established.release()
                return [
                    (e["type"], e["object"]["metadata"]["name"], e["object"]["metadata"]["resourceVersion"])
                    for e in islice(_lines(resp), 20)
                ]

        with ThreadPoolExecutor(max_workers=50) as pool:
            futures = [pool.submit(watcher) for _ in range(50)]
            for _ in range(50):
                assert established.acquire(timeout=30), "watchers did not connect"
            expected = []
            for i in range(10):
                obj = core.create_namespaced_config_map(namespace, _cm(f"fan-{i}"))
                expected.append(("ADDED", f"fan-{i}", obj.metadata.resource_version))
            for i in range(10):
                obj = core.patch_namespaced_config_map(f"fan-{i}", namespace, {"data": {"n": str(i)}})
                expected.append(("MODIFIED", f"fan-{i}", obj.metadata.resource_version))
            results = [f.result(timeout=60) for f in futures]
        assert all(r == expected for r in results)
    finally:
        api.close()


def test_events_arrive_in_commit_order_under_concurrent_writers(
    devcluster: DevclusterProcess, api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    acks: dict[int, tuple[str, str]] = {}
    lock = threading.Lock()

    def writer(t: int) -> None:
        api = config.new_client_from_config(config_file=str(devcluster.kubeconfig))
        try:
            mine = client.CoreV1Api(api)
            for i in range(10):
                name = f"w{t}-{i}"
                rv = int(mine.create_namespaced_config_map(namespace, _cm(name)).metadata.resource_version)
                with lock:
                    acks[rv] = ("ADDED", name)
                rv = int(mine.patch_namespaced_config_map(name, namespace, {"data": {"i": str(i)}}).metadata.resource_version)
                with lock:
                    acks[rv] = ("MODIFIED", name)
        finally:
            api.close()

    with _watch_raw(
        api_client, f"/api/v1/namespaces/{namespace}/configmaps", [("resourceVersion", start), ("timeoutSeconds", "60")], timeout=90
    ) as resp:
        with ThreadPoolExecutor(max_workers=8) as pool:
            for future in [pool.submit(writer, t) for t in range(8)]:
                future.result(timeout=60)
        assert len(acks) == 160  # every acknowledged write has its own resourceVersion
        events = list(islice(_lines(resp), 160))
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(acks)  # strictly increasing, exactly the acknowledged writes
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [acks[rv] for rv in rvs]


# -- server-side printing ----------------------------------------------------------------------


def test_table_for_configmaps(api_client: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, _cm("cfg-a", data={"k1": "v", "k2": "v"}))
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "cfg-b"}, "binaryData": {"b": "AAE="}})
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    status, table = _get_json(api_client, path, accept=TABLE)
    assert status == 200
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert int(table["metadata"]["resourceVersion"]) > 0
    columns = table["columnDefinitions"]
    assert [c["name"] for c in columns] == ["Name", "Data", "Age"]
    assert columns[0]["format"] == "name"
    assert all(c["priority"] == 0 for c in columns)
    assert [r["cells"][:2] for r in table["rows"]] == [["cfg-a", 2], ["cfg-b", 1]]
    assert all(isinstance(r["cells"][2], str) and r["cells"][2] for r in table["rows"])
    partial = table["rows"][0]["object"]  # includeObject defaults to Metadata
    assert partial["kind"] == "PartialObjectMetadata" and partial["apiVersion"] == "meta.k8s.io/v1"
    assert partial["metadata"]["name"] == "cfg-a" and "data" not in partial

    _, full = _get_json(api_client, path, [("includeObject", "Object")], accept=TABLE)
    assert full["rows"][0]["object"]["kind"] == "ConfigMap"
    assert full["rows"][0]["object"]["data"] == {"k1": "v", "k2": "v"}
    _, bare = _get_json(api_client, path, [("includeObject", "None")], accept=TABLE)
    assert [r.get("object") for r in bare["rows"]] == [None, None]

    # A single object as a Table: one row, the same columns; includeObject honoured too.
    _, one = _get_json(api_client, f"{path}/cfg-a", accept=TABLE)
    assert one["kind"] == "Table"
    assert [c["name"] for c in one["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert [r["cells"][:2] for r in one["rows"]] == [["cfg-a", 2]]
    assert one["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    _, one_bare = _get_json(api_client, f"{path}/cfg-a", [("includeObject", "None")], accept=TABLE)
    assert one_bare["rows"][0].get("object") is None


def test_table_for_deployments(api_client: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api_client)
    apps.create_namespaced_deployment(
        namespace,
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx:1"}, {"name": "side", "image": "busybox:2"}]},
                },
            },
        },
    )
    wait_for(lambda: apps.read_namespaced_deployment("web", namespace).status.ready_replicas == 2, message="deployment ready")
    _, table = _get_json(api_client, f"/apis/apps/v1/namespaces/{namespace}/deployments", accept=TABLE)
    columns = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [
        ("Name", 0),
        ("Ready", 0),
        ("Up-to-date", 0),
        ("Available", 0),
        ("Age", 0),
        ("Containers", 1),
        ("Images", 1),
        ("Selector", 1),
    ]
    [row] = table["rows"]
    cells = row["cells"]
    assert cells[:4] == ["web", "2/2", 2, 2]
    assert cells[5:] == ["c,side", "nginx:1,busybox:2", "app=web"]


def test_table_for_darkrooms(api_client: client.ApiClient, namespace: str, crds_installed: None) -> None:
    custom = client.CustomObjectsApi(api_client)
    body = {
        "apiVersion": f"{DR_GROUP}/{DR_VERSION}",
        "kind": "Darkroom",
        "metadata": {"name": "gallery"},
        "spec": {"source": {"type": "WebFolder", "baseUrl": "https://x"}, "subDomains": ["a"], "version": "0.4.2"},
    }
    wait_for(lambda: custom.create_namespaced_custom_object(DR_GROUP, DR_VERSION, namespace, DR_PLURAL, body), message="darkroom created")
    path = f"/apis/{DR_GROUP}/{DR_VERSION}/namespaces/{namespace}/{DR_PLURAL}"
    _, before = _get_json(api_client, path, accept=TABLE)
    assert before["rows"][0]["cells"][3] is None  # no status yet: the JSONPath finds nothing

    custom.patch_namespaced_custom_object_status(
        DR_GROUP,
        DR_VERSION,
        namespace,
        DR_PLURAL,
        "gallery",
        {
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "Available",
                        "message": "up",
                        "lastTransitionTime": "2024-01-01T00:00:00Z",
                    }
                ]
            }
        },
    )
    _, table = _get_json(api_client, path, accept=TABLE)
    assert table["kind"] == "Table"
    columns = table["columnDefinitions"]
    assert [c["name"] for c in columns] == ["Name", "Version", "Type", "Ready", "Domains", "Age"]
    assert {c["name"]: c["priority"] for c in columns} == {"Name": 0, "Version": 0, "Type": 0, "Ready": 0, "Domains": 1, "Age": 0}
    assert {c["name"]: c["type"] for c in columns}["Age"] == "date"
    assert columns[0]["format"] == "name"
    assert columns[1]["description"] == "Darkroom image tag the deployment runs."
    [row] = table["rows"]
    name, version, source_type, ready, domains, age = row["cells"]
    assert (name, version, source_type, ready, domains) == ("gallery", "0.4.2", "WebFolder", "True", None)
    assert isinstance(age, str) and age
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["name"] == "gallery"

    _, full = _get_json(api_client, path, [("includeObject", "Object")], accept=TABLE)
    assert full["rows"][0]["object"]["spec"]["version"] == "0.4.2"
    assert full["rows"][0]["object"]["status"]["conditions"][0]["status"] == "True"
    _, one = _get_json(api_client, f"{path}/gallery", accept=TABLE)
    assert one["rows"][0]["cells"][:4] == ["gallery", "0.4.2", "WebFolder", "True"]


def test_partial_object_metadata_list(api_client: client.ApiClient, namespace: str, crds_installed: None) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, _cm("meta-a", {"x": "1"}, {"secret-ish": "payload"}))
    core.create_namespaced_config_map(namespace, _cm("meta-b", data={"k": "v"}))
    status, body = _get_json(api_client, f"/api/v1/namespaces/{namespace}/configmaps", accept=PARTIAL_LIST)
    assert status == 200
    assert body["kind"] == "PartialObjectMetadataList"
    assert body["apiVersion"] == "meta.k8s.io/v1"
    assert int(body["metadata"]["resourceVersion"]) > 0
    assert [i["metadata"]["name"] for i in body["items"]] == ["meta-a", "meta-b"]
    for item in body["items"]:
        assert set(item) == {"kind", "apiVersion", "metadata"}
        assert item["kind"] == "PartialObjectMetadata"
        assert item["metadata"]["namespace"] == namespace
        assert item["metadata"]["uid"] and item["metadata"]["resourceVersion"]
    assert body["items"][0]["metadata"]["labels"] == {"x": "1"}

    # The same through the DynamicClient (what metadata informers use), for a custom resource.
    dyn = DynamicClient(api_client)
    darkrooms = dyn.resources.get(api_version=f"{DR_GROUP}/{DR_VERSION}", kind="Darkroom")
    darkrooms.create(
        body={
            "apiVersion": f"{DR_GROUP}/{DR_VERSION}",
            "kind": "Darkroom",
            "metadata": {"name": "meta-dr"},
            "spec": {"source": {"type": "WebFolder", "baseUrl": "https://x"}, "subDomains": ["a"]},
        },
        namespace=namespace,
    )
    listed = darkrooms.get(namespace=namespace, header_params={"Accept": PARTIAL_LIST})
    assert listed.kind == "PartialObjectMetadataList"
    assert [i.metadata.name for i in listed.items] == ["meta-dr"]
    assert listed.items[0].to_dict().keys() == {"kind", "apiVersion", "metadata"}

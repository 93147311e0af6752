"""The namespace pickers with more namespaces than ``namespace_choices_max`` (:mod:`backend.dashboard.namespacepicker`).

Behaviours, on an app whose limit is 2 (every test cluster has more namespaces than that): the list filter is a text
input with a datalist of at most 20 names (the one filtered by among them), never a select of every namespace; the
list filtered by a typed namespace shows that namespace's objects only; ``GET /ui/namespaces?namespace=`` answers the
matching names as ``<option>`` elements, prefix first, at most 20; the create forms' namespace is a text input asking
that URL with ``create=<Kind>``, and a Darkroom created through it lands in the typed namespace. The default limit
keeps the select (the other page tests).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask

from tests.dashboard.clients import Client
from tests.support import install_crds, wait_for

OPTION = re.compile(r'<option value="([^"]+)"')


@pytest.fixture
def picker_app(make_app: Callable[..., Flask]) -> Flask:
    return make_app(testing=False, namespace_choices_max=2)


@pytest.fixture
def many(api_client: Any) -> Iterator[list[str]]:
    """25 namespaces of one family (``pick-<id>-NN``), deleted afterwards."""
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    family = f"pick-{uuid.uuid4().hex[:6]}"
    names = [f"{family}-{n:02}" for n in range(25)]
    for name in names:
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield names
    for name in names:
        try:
            core.delete_namespace(name)
        except client.ApiException as e:
            assert e.status == 404, e


def test_the_list_filter_is_a_typeahead(picker_app: Flask, many: list[str], custom: Any) -> None:
    http = Client(picker_app.test_client())
    family = many[0].rsplit("-", 1)[0]

    def options() -> list[str] | None:
        found = OPTION.findall(http.get(f"/ui/namespaces?namespace={family}").get_data(as_text=True))
        return found if len(found) == 20 else None

    assert wait_for(options, timeout_s=10, message="the cache holding the new namespaces") == many[:20]
    assert OPTION.findall(http.get(f"/ui/namespaces?namespace={many[23]}").get_data(as_text=True)) == [many[23]]
    assert OPTION.findall(http.get(f"/ui/namespaces?namespace={family[5:]}-24").get_data(as_text=True)) == [many[24]]  # contains

    unfiltered = http.get("/").get_data(as_text=True)
    assert 'type="search" value="" placeholder="All namespaces"' in unfiltered and '<select id="filter-namespace"' not in unfiltered
    offered = re.search(r'<datalist id="filter-namespace-options">(.*?)</datalist>', unfiltered, re.S)
    assert offered and 0 < len(OPTION.findall(offered.group(1))) <= 20  # the first names, not every namespace

    page = http.get(f"/?namespace={many[7]}").get_data(as_text=True)
    assert '<select id="filter-namespace"' not in page
    field = re.search(r'<input id="filter-namespace"[^>]*>', page)
    assert field and f'value="{many[7]}"' in field.group(0) and ' hx-get="/ui/namespaces"' in field.group(0)
    assert ' list="filter-namespace-options"' in field.group(0)  # each attribute after a space (valid HTML)
    datalist = re.search(r'<datalist id="filter-namespace-options">(.*?)</datalist>', page, re.S)
    assert datalist and OPTION.findall(datalist.group(1)) == [many[7]]  # the names starting with what is typed

    custom.create_namespaced_custom_object(
        "deployments.example.com", "v1", many[7], "darkrooms",
        {"apiVersion": "deployments.example.com/v1", "kind": "Darkroom", "metadata": {"name": "picked"},
         "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/"}, "subDomains": [f"picked-{many[7]}"]}},
    )  # fmt: skip

    def listed() -> bool:
        return ">picked<" in http.get(f"/?namespace={many[7]}").get_data(as_text=True)

    wait_for(listed, timeout_s=10, message="the Darkroom in the list filtered by its typed namespace")
    assert ">picked<" not in http.get(f"/?namespace={many[8]}").get_data(as_text=True)


def test_a_create_form_offers_a_typeahead_and_creates_where_typed(picker_app: Flask, many: list[str], custom: Any) -> None:
    http = Client(picker_app.test_client())
    wait_for(lambda: many[-1] in http.get(f"/ui/namespaces?namespace={many[-1]}").get_data(as_text=True), timeout_s=10)
    for path, kind in (("/ui/darkrooms/new", "Darkroom"), ("/ui/tasks/new", "Task"), ("/ui/postgresqls/new", "Postgresql")):
        plain = http.get(path)
        assert plain.status_code == 200 and 'id="f-namespace" name="namespace" type="text"' in plain.get_data(as_text=True), path
        form = http.get(f"{path}?namespace={many[3]}").get_data(as_text=True)
        assert '<select id="f-namespace"' not in form, path
        field = re.search(r'<input id="f-namespace"[^>]*>', form)
        assert field and f'value="{many[3]}"' in field.group(0), path
        assert f' hx-get="/ui/namespaces?create={kind}"' in field.group(0) and ' list="f-namespace-options"' in field.group(0), path
        datalist = re.search(r'<datalist id="f-namespace-options">(.*?)</datalist>', form, re.S)
        assert datalist and len(OPTION.findall(datalist.group(1))) <= 20, path
        suggested = http.get(f"/ui/namespaces?create={kind}&namespace={many[3]}").get_data(as_text=True)
        assert OPTION.findall(suggested) == [many[3]] and "you may not create here" not in suggested  # the local mode may

    created = http.post(
        "/ui/darkrooms/new",
        data={"name": "typed", "namespace": many[11], "source.type": "WebFolder", "source.baseUrl": "https://example.com/",
              "subDomains": [f"typed-{many[11]}"]},
    )  # fmt: skip
    assert created.status_code == 303, created.get_data(as_text=True)[-3000:]
    stored = custom.get_namespaced_custom_object("deployments.example.com", "v1", many[11], "darkrooms", "typed")
    assert stored["metadata"]["namespace"] == many[11]


def test_a_person_who_may_not_list_namespaces_is_suggested_only_theirs(realcluster_required: None, realcluster: Any) -> None:
    """Real control plane (devcluster allows everything): a ServiceAccount that may list Darkrooms in two of 25
    namespaces, signed in with its token on an app whose limit is 2, is suggested those two only — whatever it types —
    and its pages never name another namespace of the family; ``/namespaces`` (exact, every namespace asked) agrees."""
    from kubernetes import client, config

    from backend.app import create_app
    from backend.server import shutdown as serving
    from tests.identity.logins import login_settings

    install_crds(realcluster.kubeconfig)
    admin = config.new_client_from_config(config_file=str(realcluster.kubeconfig))
    core: Any = client.CoreV1Api(admin)
    rbac: Any = client.RbacAuthorizationV1Api(admin)
    family = f"vis-{uuid.uuid4().hex[:6]}"
    names = [f"{family}-{n:02}" for n in range(25)]
    mine = [names[3], names[17]]
    home = f"{family}-sa"  # the ServiceAccount's (its user name names it) and the sessions'
    for name in (*names, home):
        core.create_namespace({"metadata": {"name": name}})
    app = None
    try:
        core.create_namespaced_service_account(home, {"metadata": {"name": "viewer"}})
        subject = {"kind": "ServiceAccount", "name": "viewer", "namespace": home}
        listing = {"apiGroups": ["deployments.example.com"], "resources": ["darkrooms"], "verbs": ["get", "list", "watch"]}
        for name in mine:
            rbac.create_namespaced_role(name, {"metadata": {"name": "viewer"}, "rules": [listing]})
            role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "viewer"}
            rbac.create_namespaced_role_binding(name, {"metadata": {"name": "viewer"}, "roleRef": role_ref, "subjects": [subject]})
        token = core.create_namespaced_service_account_token("viewer", home, {"spec": {"expirationSeconds": 3600}}).status.token
        app = create_app(login_settings(realcluster.kubeconfig, home, namespace_choices_max=2))
        browser = app.test_client()
        assert browser.post("/login", data={"token": token, "next": "/"}).status_code == 303
        http = Client(browser)

        def suggested(typed: str) -> list[str]:
            return OPTION.findall(http.get(f"/ui/namespaces?namespace={typed}").get_data(as_text=True))

        wait_for(lambda: suggested(family) == mine, timeout_s=20, message="the cache holding the family")
        assert suggested(names[17]) == [names[17]] and suggested(names[5]) == []
        assert suggested(family[4:]) == mine  # contains, still only theirs
        for path in (f"/?namespace={names[3]}", "/ui/darkrooms/new", f"/ui/darkrooms/new?namespace={names[17]}"):
            page = http.get(path).get_data(as_text=True)
            datalist = re.search(r'<datalist id="(?:filter|f)-namespace-options">(.*?)</datalist>', page, re.S)
            assert datalist, path
            assert set(OPTION.findall(datalist.group(1))) <= set(mine), path
            assert not [n for n in names if n not in mine and n in page], path  # no other namespace of the family named
        listed = browser.get("/namespaces", headers={"Accept": "application/json"}).get_json()
        assert sorted(n["name"] for n in listed["items"] if n["name"].startswith(family)) == mine
    finally:
        if app is not None:
            serving.shutdown(app)
        for name in (*names, home):
            core.delete_namespace(name)
        admin.close()

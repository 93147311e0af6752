"""The Postgresql pages without a browser (no reconciler runs here: tests write the status and children
themselves), through the Flask test client on devcluster and the real control plane.

Behaviours: the list (empty state that keeps the namespace filter, a row with state badge, phase,
version, endpoint and age, the htmx fragment, one row for live refreshes, an empty row once gone); the
generated form (CRD fields, defaults as placeholders or preselected, help from the CRD, the parameter
allowlist, the write-only password); invalid input answered 422 with errors inline on the right inputs
and summarised, nothing created, the password never rendered back; parameter rows added and removed
server-side, a name chosen twice refused; a create stored as the JSON API stores it (the password only
in the owned Secret); edit (stored values, the StorageClass read-only, a blank password keeps the
Secret, every problem of an edit at once — the schema's beside the kind's own storage check, in form
order — and a stale form answered 409 with the current values); the detail page (connection details,
spec, status, conditions, child resources with the password Secret by name only and someone else's
Service shown as such, Events, the live and endpoint fragments, a deleted database); "Show password"
(CSRF required, the password in a no-store fragment, the read logged without the value, hidden again
by GET; not for a passwordSecretRef, a missing Secret or a Secret the database does not own); the
cluster refusing the Secret read (RBAC, real control plane only) explained on the page; /watch
carrying Postgresql changes; delete.
"""

from __future__ import annotations

import base64
import logging
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask

from tests.clusters import RealclusterProcess
from tests.dashboard.clients import Client
from tests.dashboard.read_rules import POD_RULES, READ_RULES
from tests.support import install_crds, wait_for

PG = ("database.db.example.com", "v1")
PASSWORD = "integration-Password-sentinel-31"


def make_pg(custom: Any, namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    body = {"apiVersion": "database.db.example.com/v1", "kind": "Postgresql", "metadata": {"name": name}, "spec": spec}
    created: dict[str, Any] = custom.create_namespaced_custom_object(*PG, namespace, "postgresqls", body)
    return created


def owner_of(pg: dict[str, Any]) -> dict[str, Any]:
    meta = pg["metadata"]
    return {"apiVersion": pg["apiVersion"], "kind": "Postgresql", "name": meta["name"], "uid": meta["uid"], "controller": True}


def secret_of(core: Any, pg: dict[str, Any], *, owned: bool = True) -> None:
    """A password Secret ``<name>-credentials`` as the reconciler makes it (``owned``), or someone else's of that name."""
    meta = pg["metadata"]
    metadata = {"name": f"{meta['name']}-credentials", **({"ownerReferences": [owner_of(pg)]} if owned else {})}
    core.create_namespaced_secret(meta["namespace"], {"metadata": metadata, "stringData": {"password": PASSWORD}})


def set_ready(custom: Any, namespace: str, name: str) -> None:
    """Write the status the reconciler would write for a ready database."""
    condition = {"status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}
    status = {
        "phase": "Running",
        "observedGeneration": 1,
        "readyReplicas": 1,
        "endpoint": {"host": f"{name}.{namespace}.svc", "port": 5432},
        "passwordSecret": {"name": f"{name}-credentials", "key": "password", "present": True},
        "conditions": [
            {**condition, "type": "Ready", "reason": "DatabaseReady", "message": "accepting connections"},
            {**condition, "type": "Reconciled", "reason": "Applied", "message": "all children applied"},
        ],
    }
    custom.patch_namespaced_custom_object_status(*PG, namespace, "postgresqls", name, {"status": status})


def cached(http: Client, namespace: str, name: str, needle: str = "") -> str:
    """The detail page once the API's cache holds the object (and the page shows ``needle``)."""
    path = f"/ui/postgresqls/{namespace}/{name}"
    wait_for(lambda: http.get(path).status_code == 200 and needle in http.get(path).get_data(as_text=True), timeout_s=10)
    return str(http.get(path).get_data(as_text=True))


def names(custom: Any, namespace: str) -> list[str]:
    return [o["metadata"]["name"] for o in custom.list_namespaced_custom_object(*PG, namespace, "postgresqls")["items"]]


def form_of(namespace: str, name: str = "orders", **fields: Any) -> dict[str, Any]:
    return {"namespace": namespace, "name": name, "deletionPolicy": "Retain", **fields}


def test_list_empty_state_rows_and_fragments(http: Client, custom: Any, namespace: str) -> None:
    empty = http.get(f"/ui/postgresqls?namespace={namespace}").get_data(as_text=True)
    assert "No databases match" in empty and f"/ui/postgresqls/new?namespace={namespace}" in empty
    assert 'aria-current="page">Databases' in empty.replace("\n", "")
    assert f'sse-connect="/ui/live/postgresqls?namespace={namespace}&amp;lastEventId=' in empty

    make_pg(custom, namespace, "orders", version="16")
    set_ready(custom, namespace, "orders")
    wait_for(lambda: f"orders.{namespace}.svc:5432" in http.get(f"/ui/postgresqls?namespace={namespace}").get_data(as_text=True))
    html = http.get(f"/ui/postgresqls?namespace={namespace}").get_data(as_text=True)
    row = re.search(rf'<tr sse-swap="Postgresql/{namespace}/orders".*?</tr>', html, re.S)
    assert row, html
    assert 'data-state="Ready"' in row.group(0) and "tone-good" in row.group(0)
    for text in ("Running", ">16<", f"orders.{namespace}.svc:5432", "1 database in " + namespace):
        assert text in html, text

    fragment = http.get(f"/ui/postgresqls?namespace={namespace}&q=ord", headers={"HX-Request": "true", "HX-Target": "postgresql-list"})
    text = fragment.get_data(as_text=True)
    assert text.lstrip().startswith('<section id="postgresql-list"') and "<html" not in text
    assert f'sse-connect="/ui/live/postgresqls?namespace={namespace}&amp;q=ord&amp;lastEventId=' in text
    assert f'hx-get="/ui/postgresqls?namespace={namespace}&amp;q=ord" hx-trigger="sse:members, sse:reset"' in text
    one = http.get(f"/ui/postgresqls/{namespace}/orders/row").get_data(as_text=True)
    assert one.strip().startswith("<tr") and "Running" in one
    assert http.get(f"/ui/postgresqls/{namespace}/missing/row").get_data(as_text=True) == ""


def test_generated_form_shows_the_crd(http: Client, namespace: str) -> None:
    html = http.get(f"/ui/postgresqls/new?namespace={namespace}").get_data(as_text=True)
    assert f'<option value="{namespace}" selected>' in html
    assert re.search(r'<input id="f-version" name="version" type="text" value="" autocomplete="off" placeholder="17"', html)
    assert 'maxlength="8" pattern="(13|14|15|16|17|18)(\\.[0-9]{1,2})?"' in html
    assert '<datalist id="f-version-options">' in html
    assert 'id="f-storage-size" name="storage.size"' in html and 'placeholder="1Gi"' in html
    assert 'id="f-resources-requests-cpu" name="resources.requests.cpu"' in html
    assert 'id="f-resources-limits-memory" name="resources.limits.memory"' in html
    assert 'id="f-passwordSecretRef-name"' in html and "Required when Existing Secret is used." in html
    assert re.search(r'<select id="f-deletionPolicy" name="deletionPolicy"[^>]*>\s*<option value="Retain" selected>', html)
    assert 'name="password" type="password" value="" autocomplete="new-password"' in html
    assert "PersistentVolumeClaims" in html  # help text from the CRD's description of deletionPolicy
    assert '<option value="max_connections">max_connections (integer)</option>' in html
    assert '<option value="log_statement">log_statement (one of none, ddl, mod, all)</option>' in html
    assert "fsync" not in html  # only the allowlist is offered


def test_invalid_create_errors_inline_and_nothing_created(http: Client, custom: Any, namespace: str) -> None:
    form = form_of(
        namespace,
        version="12",
        password=PASSWORD,
        **{"storage.size": "lots", "parameters:name": ["max_connections", "work_mem"], "parameters:value": ["many", "8MB"]},
    )
    answer = http.post("/ui/postgresqls/new", form)
    html = answer.get_data(as_text=True)
    assert answer.status_code == 422
    for field_id in ("f-version", "f-storage-size", "f-parameters-max_connections"):
        assert f'id="{field_id}-error"' in html, field_id
        assert re.search(rf'id="{field_id}"[^>]*aria-invalid="true"', html), field_id
    assert "must be a whole number, e.g. 100" in html
    assert 'href="#f-parameters-max_connections">Parameter max_connections</a>' in html
    assert 'href="#f-storage-size">Data volume / Size</a>' in html
    assert 'value="many"' in html and 'value="lots"' in html  # what was typed is shown again
    assert PASSWORD not in html  # but never the password
    assert names(custom, namespace) == []

    added = http.post("/ui/postgresqls/new", {**form, "add-row": "parameters"})
    assert added.status_code == 200 and added.get_data(as_text=True).count('name="parameters:value"') == 3
    removed = http.post("/ui/postgresqls/new", {**form, "remove-row": "parameters:0"}).get_data(as_text=True)
    assert 'value="many"' not in removed and removed.count('name="parameters:value"') == 1
    twice = http.post(
        "/ui/postgresqls/new", {**form_of(namespace), "parameters:name": ["work_mem"] * 2, "parameters:value": ["1MB", "2MB"]}
    )
    assert twice.status_code == 422 and "chosen twice" in twice.get_data(as_text=True)
    assert names(custom, namespace) == []


def test_a_short_password_is_refused_with_the_minimum(http: Client, custom: Any, namespace: str) -> None:
    form = http.get(f"/ui/postgresqls/new?namespace={namespace}").get_data(as_text=True)
    assert re.search(r'name="password" type="password"[^>]* minlength="8" maxlength="1024"', form)
    assert "8 to 1024 characters" in form  # the help says it before anyone tries
    answer = http.post("/ui/postgresqls/new", form_of(namespace, password="x"))
    html = answer.get_data(as_text=True)
    assert answer.status_code == 422 and 'id="f-password-error"' in html
    assert "must be 8 to 1024 characters without control characters" in html
    assert names(custom, namespace) == []


def test_the_detail_page_says_whether_a_password_is_stored(http: Client, custom: Any, namespace: str) -> None:
    make_pg(custom, namespace, "kept")
    html = cached(http, namespace, "kept")
    assert re.search(r'data-field="password-set"><span class="badge tone-idle">not stored yet</span>', html)
    found = {"passwordSecret": {"name": "kept-credentials", "key": "password", "present": True}}
    custom.patch_namespaced_custom_object_status(*PG, namespace, "postgresqls", "kept", {"status": found})
    html = cached(http, namespace, "kept", needle='tone-good">stored')
    assert re.search(r'data-field="password-set"><span class="badge tone-good">stored</span>', html)


def test_create_and_edit(http: Client, custom: Any, namespace: str, api_client: Any) -> None:
    from kubernetes import client

    form = form_of(
        namespace,
        version="16",
        user="shop",
        password=PASSWORD,
        **{
            "storage.size": "2Gi",
            "resources.requests.cpu": "250m",
            "resources.limits.memory": "1Gi",
            "parameters:name": ["max_connections", ""],
            "parameters:value": ["150", ""],
        },
    )
    created = http.post("/ui/postgresqls/new", form)
    assert created.status_code == 303, created.get_data(as_text=True)
    assert created.headers["Location"] == f"/ui/postgresqls?namespace={namespace}&created=orders"
    stored = custom.get_namespaced_custom_object(*PG, namespace, "postgresqls", "orders")
    spec = stored["spec"]
    assert spec["version"] == "16" and spec["user"] == "shop" and spec["storage"]["size"] == "2Gi"
    assert spec["resources"] == {"requests": {"cpu": "250m"}, "limits": {"memory": "1Gi"}}
    assert spec["parameters"] == {"max_connections": "150"} and "password" not in str(stored)
    core = client.CoreV1Api(api_client)
    secret = core.read_namespaced_secret("orders-credentials", namespace)
    assert secret.data is not None
    assert base64.b64decode(secret.data["password"]).decode() == PASSWORD

    cached(http, namespace, "orders")
    edit_page = http.get(f"/ui/postgresqls/{namespace}/orders/edit").get_data(as_text=True)
    assert 'value="16"' in edit_page and 'value="250m"' in edit_page and PASSWORD not in edit_page
    assert re.search(r'id="f-storage-storageClassName"[^>]*readonly', edit_page)
    assert 'name="parameters:value" value="150"' in edit_page
    generation = re.search(r'name="generation" value="(\d+)"', edit_page)
    assert generation
    edited = {
        "generation": generation.group(1),
        "version": "17",
        "user": "shop",
        "storage.size": "2Gi",
        "deletionPolicy": "Delete",
        "parameters:name": ["max_connections", "log_statement"],
        "parameters:value": ["150", "ddl"],
    }
    saved = http.post(f"/ui/postgresqls/{namespace}/orders/edit", edited, headers={"HX-Request": "true"})
    assert saved.status_code == 200 and saved.headers["HX-Redirect"] == f"/ui/postgresqls/{namespace}/orders?saved=1"
    spec = custom.get_namespaced_custom_object(*PG, namespace, "postgresqls", "orders")["spec"]
    assert spec["version"] == "17" and spec["deletionPolicy"] == "Delete" and spec["parameters"]["log_statement"] == "ddl"
    assert core.read_namespaced_secret("orders-credentials", namespace).data == secret.data  # a blank password keeps it

    # Every problem at once: the schema's (version, user) beside the kind's own check (the volume never shrinks).
    bad = http.post(
        f"/ui/postgresqls/{namespace}/orders/edit", {**edited, "generation": "2", "version": "9", "user": "postgres", "storage.size": "1Gi"}
    )
    html = bad.get_data(as_text=True)
    assert bad.status_code == 422
    for field_id in ("f-version-error", "f-user-error", "f-storage-size-error"):
        assert f'id="{field_id}"' in html, field_id
    assert "cannot shrink from 2Gi to 1Gi" in html
    assert html.index('href="#f-version"') < html.index('href="#f-user"') < html.index('href="#f-storage-size"')  # form order

    stale = http.post(f"/ui/postgresqls/{namespace}/orders/edit", {**edited, "version": "15"})  # the form of the first generation
    html = stale.get_data(as_text=True)
    assert stale.status_code == 409 and "Someone else changed this database" in html
    assert "<dt>PostgreSQL version</dt><dd>17</dd>" in html and 'value="15"' in html
    assert custom.get_namespaced_custom_object(*PG, namespace, "postgresqls", "orders")["spec"]["version"] == "17"


def test_detail_page_connection_children_and_fragments(http: Client, custom: Any, namespace: str, api_client: Any) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    pg = make_pg(custom, namespace, "ledger", databaseName="books", user="clerk")
    core.create_namespaced_config_map(
        namespace, {"metadata": {"name": "ledger-config", "ownerReferences": [owner_of(pg)]}, "data": {"a": "b"}}
    )
    secret_of(core, pg)
    core.create_namespaced_service(namespace, {"metadata": {"name": "ledger"}, "spec": {"ports": [{"port": 8080}]}})  # not the database's
    set_ready(custom, namespace, "ledger")

    html = cached(http, namespace, "ledger", needle="Running")
    assert f'<dd class="mono" data-field="host">ledger.{namespace}.svc</dd>' in html
    assert '<dd class="mono" data-field="port">5432</dd>' in html
    assert '<dd class="mono" data-field="database">books</dd>' in html and '<dd class="mono" data-field="user">clerk</dd>' in html
    assert "Show password" in html and PASSWORD not in html
    assert 'data-state="Ready"' in html and "DatabaseReady" in html and "accepting connections" in html
    children = html.split("Child resources", 1)[1].split("Events", 1)[0]
    assert "ledger-credentials" in children and "read only by Show password" in children
    assert "ledger-config" in children and "1 key" in children
    assert "a Service of this name exists but belongs to someone else (left alone)" in children and "8080" not in children
    assert "ledger-headless" in children and "data-ledger-0" in children and "not created yet" in children

    live = http.get(f"/ui/postgresqls/{namespace}/ledger", headers={"HX-Request": "true", "HX-Target": "postgresql-live"})
    assert live.get_data(as_text=True).lstrip().startswith('<div id="postgresql-live"')
    endpoint = http.get(f"/ui/postgresqls/{namespace}/ledger", headers={"HX-Request": "true", "HX-Target": "postgresql-endpoint"})
    text = endpoint.get_data(as_text=True)
    assert text.lstrip().startswith('<div id="postgresql-endpoint"') and "5432" in text

    custom.delete_namespaced_custom_object(*PG, namespace, "postgresqls", "ledger")
    wait_for(lambda: http.get(f"/ui/postgresqls/{namespace}/ledger").status_code == 404)
    gone = http.get(f"/ui/postgresqls/{namespace}/ledger", headers={"HX-Request": "true", "HX-Target": "postgresql-live"})
    assert gone.status_code == 200 and "This database no longer exists" in gone.get_data(as_text=True)


def test_show_password(http: Client, custom: Any, namespace: str, api_client: Any, caplog: pytest.LogCaptureFixture) -> None:
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    pg = make_pg(custom, namespace, "vault")
    cached(http, namespace, "vault")
    path = f"/ui/postgresqls/{namespace}/vault/password"
    fragment = {"HX-Request": "true", "HX-Target": "pg-password"}

    assert http.post(path, token=False, headers=fragment).status_code == 403  # CSRF, like every dashboard write
    missing = http.post(path, headers=fragment)
    assert missing.status_code == 404 and "does not exist yet" in missing.get_data(as_text=True)

    secret_of(core, pg)
    caplog.set_level(logging.INFO, logger="backend.dashboard.pgpassword")
    shown = http.post(path, headers=fragment)
    html = shown.get_data(as_text=True)
    assert shown.status_code == 200 and html.lstrip().startswith('<div id="pg-password"')
    assert f'id="pg-password-value" data-length="{len(PASSWORD)}">{PASSWORD}</code>' in html
    assert shown.headers["Cache-Control"] == "no-store"
    reads = [r.getMessage() for r in caplog.records if "read from Secret" in r.getMessage()]
    assert reads == [f"password of Postgresql {namespace}/vault read from Secret vault-credentials by the local mode's own identity "
                     "from 127.0.0.1"]  # fmt: skip
    assert all(PASSWORD not in r.getMessage() for r in caplog.records)
    hidden = http.get(path, headers=fragment).get_data(as_text=True)
    assert "Show password" in hidden and PASSWORD not in hidden

    # Without JavaScript: the whole page, the password in place.
    page = http.post(path)
    assert page.status_code == 200 and "<html" in page.get_data(as_text=True) and PASSWORD in page.get_data(as_text=True)

    # A Secret of that name the database does not own is not shown.
    core.delete_namespaced_secret("vault-credentials", namespace)
    secret_of(core, pg, owned=False)
    foreign = http.post(path, headers=fragment)
    assert foreign.status_code == 409 and "does not belong to this database" in foreign.get_data(as_text=True)
    assert PASSWORD not in foreign.get_data(as_text=True)


def test_a_referenced_secret_is_not_revealed(http: Client, custom: Any, namespace: str) -> None:
    make_pg(custom, namespace, "byo", passwordSecretRef={"name": "my-secret", "key": "pw"})
    html = cached(http, namespace, "byo")
    assert "In your Secret" in html and "my-secret" in html and "Show password" not in html
    refused = http.post(f"/ui/postgresqls/{namespace}/byo/password", headers={"HX-Request": "true", "HX-Target": "pg-password"})
    assert refused.status_code == 409


def secret_row(http: Client, namespace: str, name: str) -> str:
    children = http.get(f"/ui/postgresqls/{namespace}/{name}", headers={"HX-Request": "true", "HX-Target": "postgresql-children"})
    row = re.search(r'<li class="tree-node" data-kind="Secret".*?</div>', children.get_data(as_text=True), re.S)  # its node's line
    assert row, children.get_data(as_text=True)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row.group(0))).strip()


def test_the_password_secret_row_says_what_the_reconciler_last_saw(http: Client, custom: Any, namespace: str) -> None:
    """Never "holds the password" for a Secret that is not there: the row follows status.passwordSecret."""
    make_pg(custom, namespace, "byo2", passwordSecretRef={"name": "my-secret", "key": "pw"})
    cached(http, namespace, "byo2")
    assert secret_row(http, namespace, "byo2") == "Secret my-secret not looked at yet by the reconciler"

    def seen(present: bool) -> dict[str, Any]:
        return {"status": {"passwordSecret": {"name": "my-secret", "key": "pw", "present": present}}}

    custom.patch_namespaced_custom_object_status(*PG, namespace, "postgresqls", "byo2", seen(False))
    missing = "Secret my-secret your Secret is missing, or without the key pw: the database waits for it"
    wait_for(lambda: secret_row(http, namespace, "byo2") == missing, timeout_s=10, message="the missing Secret said")
    custom.patch_namespaced_custom_object_status(*PG, namespace, "postgresqls", "byo2", seen(True))
    wait_for(lambda: secret_row(http, namespace, "byo2") == "Secret my-secret your Secret; key pw holds the password", timeout_s=10)

    make_pg(custom, namespace, "gen")
    cached(http, namespace, "gen")
    absent = {"status": {"passwordSecret": {"name": "gen-credentials", "key": "password", "present": False}}}
    custom.patch_namespaced_custom_object_status(*PG, namespace, "postgresqls", "gen", absent)
    expected = "Secret gen-credentials not created yet (missing, or without the key password: the database waits for it)"
    wait_for(lambda: secret_row(http, namespace, "gen") == expected, timeout_s=10, message="the generated Secret not there yet")


@dataclass
class Refused:
    """An app on the real control plane whose cluster user may do all the pages need but read Secrets,
    with an admin client and a namespace of its own."""

    app: Flask
    admin: Any  # kubernetes.client.ApiClient (system:masters)
    namespace: str


@pytest.fixture
def refused(realcluster_required: None, realcluster: RealclusterProcess, tmp_path: Path) -> Iterator[Refused]:
    """Not parametrized by ``kube``: only the real control plane authorizes (devcluster allows everything)."""
    from kubernetes import client, config

    from backend.app import create_app
    from backend.server import shutdown as serving
    from backend.settings import ApiSettings

    install_crds(realcluster.kubeconfig)
    admin = config.new_client_from_config(config_file=str(realcluster.kubeconfig))
    rbac, core = client.RbacAuthorizationV1Api(admin), client.CoreV1Api(admin)
    name = f"test-no-secrets-{uuid.uuid4().hex[:6]}"
    rbac.create_cluster_role({"metadata": {"name": name}, "rules": READ_RULES + POD_RULES})  # the app's own account: all it caches
    subject = {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}
    role_ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}
    rbac.create_cluster_role_binding({"metadata": {"name": name}, "roleRef": role_ref, "subjects": [subject]})
    core.create_namespace({"metadata": {"name": name}})
    kubeconfig = yaml.safe_load(realcluster.kubeconfig.read_text())
    for user in kubeconfig["users"]:
        user["user"] = {"token": realcluster.token("alice")}
    (tmp_path / "alice.kubeconfig").write_text(yaml.safe_dump(kubeconfig))
    app = create_app(ApiSettings(kubeconfig=tmp_path / "alice.kubeconfig"))
    yield Refused(app=app, admin=admin, namespace=name)
    serving.shutdown(app)
    core.delete_namespace(name)
    rbac.delete_cluster_role_binding(name)
    rbac.delete_cluster_role(name)
    admin.close()


def test_a_refused_secret_read_is_explained(refused: Refused) -> None:
    from kubernetes import client

    namespace = refused.namespace
    pg = make_pg(client.CustomObjectsApi(refused.admin), namespace, "locked")
    secret_of(client.CoreV1Api(refused.admin), pg)
    http = Client(refused.app.test_client())
    page = cached(http, namespace, "locked")
    # The local mode asks its own (kubeconfig's) identity what it may do: "Show password" comes disabled, with why.
    reason = f"You may not get secrets &#34;locked-credentials&#34; in namespace &#34;{namespace}&#34;."
    assert 'aria-disabled="true"' in page and f'title="{reason}"' in page and 'id="pg-password-why"' in page
    answer = http.post(f"/ui/postgresqls/{namespace}/locked/password", headers={"HX-Request": "true", "HX-Target": "pg-password"})
    html = answer.get_data(as_text=True)
    assert answer.status_code == 403 and html.lstrip().startswith('<div id="pg-password"')
    assert "does not allow the control panel to read the Secret locked-credentials" in html and "get on secrets" in html
    assert PASSWORD not in html and "Try again" in html


def test_watch_carries_postgresql_changes(http: Client, custom: Any, namespace: str) -> None:
    stream = http.get(f"/watch?kind=Postgresql&namespace={namespace}", buffered=False)
    try:
        frames = iter(stream.response)
        assert b"event: ready" in next(frames)
        make_pg(custom, namespace, "streamed")
        frame = next(frames)
        while b"heartbeat" in frame:
            frame = next(frames)
        assert b"event: postgresql" in frame and b'"name":"streamed"' in frame and b'"kind":"Postgresql"' in frame
    finally:
        stream.close()


def test_delete(http: Client, custom: Any, namespace: str) -> None:
    pg = make_pg(custom, namespace, "doomed")
    cached(http, namespace, "doomed")
    html = http.get(f"/ui/postgresqls/{namespace}/doomed").get_data(as_text=True)
    assert (
        "Its data volume (data-doomed-0) and its password Secret (doomed-credentials) stay (deletion policy Retain): a database"
        " of the same name would run on that data, with that password." in html
    )
    listed = http.get(f"/ui/postgresqls?namespace={namespace}").get_data(as_text=True)
    assert 'data-note="Its StatefulSet, Services and ConfigMap go with it. Its data volume (data-doomed-0) and its password' in listed
    assert http.post(f"/ui/postgresqls/{namespace}/doomed/delete", {"uid": pg["metadata"]["uid"]}, token=False).status_code == 403
    deleted = http.post(f"/ui/postgresqls/{namespace}/doomed/delete", {"uid": pg["metadata"]["uid"]})
    assert deleted.status_code == 303
    assert re.fullmatch(rf"/ui/postgresqls\?namespace={namespace}&(deleted|terminating)=doomed", deleted.headers["Location"])
    wait_for(lambda: "doomed" not in names(custom, namespace))

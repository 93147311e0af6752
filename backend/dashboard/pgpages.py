"""The Postgresql pages: list, detail (with connection details), the generated create/edit form, delete,
and the password behind "Show password".

Installed by :mod:`backend.dashboard` (:func:`install`: the views close over the Postgresql service;
:data:`LISTS` is its navigation link). Routes:

- ``GET /ui/postgresqls`` — the list (``?namespace=&q=&page=``; target ``postgresql-list``: that block);
  ``GET /ui/postgresqls/<ns>/<name>/row`` one row on demand; rows are pushed live by :mod:`.liverows` (view ``postgresqls``).
- ``GET /ui/postgresqls/<ns>/<name>`` — detail: connection (host, port, database, user), spec, status,
  conditions, child resources (password Secret by name only, ConfigMap, Services, StatefulSet, data
  PVC), the timeline of the Events about it and its children (``?events=``: :mod:`.timeline`), and their YAML at
  ``#yaml`` or ``?view=yaml`` (:mod:`.yamlview`; the Secret by name only); each region (:data:`REGIONS`) gets its
  block, fetched again when the page's stream
  (:mod:`.livedetail`, ``/ui/live/postgresql/<ns>/<name>``) says it changed.
- ``GET /ui/postgresqls/<ns>/<name>/edit/freshness?generation=`` — the edit form's notice (:meth:`.editing.Flow.freshness`).
- ``GET|POST /ui/postgresqls/new`` and ``/ui/postgresqls/<ns>/<name>/edit`` — the form :mod:`.forms`
  builds from the CRD and :data:`FORM_SPEC`, written through :mod:`.actions` (the flow of
  :mod:`.editing`: 422 inline, 409 explained with the current values); ``add-row`` / ``remove-row``
  edit the parameter rows server-side.
- ``POST /ui/postgresqls/<ns>/<name>/delete``; ``POST /ui/postgresqls/bulk/confirm`` and ``/bulk`` delete the list's
  selection (:mod:`.bulk`).
- ``GET /ui/postgresqls/<ns>`` goes to the list filtered to that namespace (:func:`.browsing.add_shortcuts`).
- ``POST /ui/postgresqls/<ns>/<name>/password`` (CSRF-checked like every dashboard POST) — reads
  (:mod:`.pgpassword`) the password from the Secret ``<name>-credentials`` through the API's Kubernetes client, only then and
  only when that Secret's controller ownerReference is this Postgresql (a ``passwordSecretRef`` names
  the user's own Secret: not revealed). Answers the ``password`` block (``Cache-Control: no-store``, as
  every dashboard page) and logs who read which password, never the value. A Secret the API may not
  read (RBAC: it needs ``get`` on ``secrets``) is a 403 whose fragment says so; a missing Secret a 404.
  ``GET`` of the same path is the hidden state again ("Hide"; reads nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, request
from werkzeug.wrappers import Response as BaseResponse

from backend.core.errors import Failure
from backend.core.schemas.postgresqls import PostgresqlResourceListInputSchema, PostgresqlResourcesInputSchema
from backend.core.services import KindService, Services
from backend.dashboard import (
    browsing,
    bulk,
    darkroompages,
    forms,
    livedetail,
    liverows,
    pgpassword,
    rendering,
    returning,
    timeline,
    tree,
    yamledit,
    yamlview,
)
from cluster import CONFIGMAPS, PERSISTENTVOLUMECLAIMS, SERVICES, STATEFULSETS, ClusterError, NotFound
from cluster.acting import ActingClient
from cluster.resources import Resource
from kinds import postgresqls as kind

LIST = "postgresqls.html"
DETAIL = "postgresql_detail.html"
BASE = "/ui/postgresqls"
TAKES_EFFECT = "It is the database's password unless it was changed inside the database (ALTER ROLE) after the first start."


def _takes(what: str) -> str:
    return "one of " + ", ".join(what.split("|")) if "|" in what else what


FORM_SPEC = forms.FormSpec(
    kind="Postgresql",
    sections=(
        forms.Section(legend="Database", paths=("version", "databaseName", "user"), rest=True),  # a new spec field lands here
        forms.Section(legend="Password", paths=("password", "passwordSecretRef")),
        forms.Section(legend="Storage", paths=("storage",)),
        forms.Section(legend="Resources", paths=("resources",)),
        forms.Section(legend="Parameters", paths=("parameters",)),
        forms.Section(legend="Deletion", paths=("deletionPolicy",)),
    ),
    labels={
        "version": "PostgreSQL version",
        "storage": "Data volume",
        "storage.storageClassName": "StorageClass",
        "passwordSecretRef": "Existing Secret",
        "passwordSecretRef.name": "Secret name",
        "parameters": "postgresql.conf parameters",
        **{f"resources.{group}.cpu": "CPU" for group in kind.RESOURCE_GROUPS},
    },
    help={  # sharper than the CRD's words for any quantity by resource name: the API schema's
        **{f"resources.{group}": PostgresqlResourcesInputSchema().fields[group].metadata["description"] for group in kind.RESOURCE_GROUPS},
        **{
            f"resources.{group}.{name}": PostgresqlResourceListInputSchema().fields[name].metadata["description"]
            for group in kind.RESOURCE_GROUPS
            for name in kind.RESOURCE_NAMES
        },
    },
    fixed_keys=kind.API.keys,
    pairs={"parameters": {name: _takes(what) for name, what in kind.PARAMETERS.items()}},
    nouns={"parameters": "parameter"},
    write_only={
        "password": forms.WriteOnly(
            label="Password (optional)", help=kind.PASSWORD_NOTE, min_length=kind.PASSWORD_MIN_LENGTH, max_length=kind.PASSWORD_MAX_LENGTH
        )
    },
    fixed=frozenset({"storage.size", "storage.storageClassName"}),  # a StatefulSet's volume claims (PostgresqlKind.check)
    suggestions={"version": kind.VERSIONS},
)
FORM_OF = forms.build(FORM_SPEC)  # the CRD is read here, once, at import


def _notice() -> str | None:
    return returning.notice("Database")


LISTS = (rendering.NavLink(BASE, "postgresqls", "Databases"),)
BULK = bulk.Bulk(list_path=BASE, base=BASE, actions=(bulk.DELETE,))


# -- the detail page ------------------------------------------------------------------------------


def _describe(resource: Resource, obj: Mapping[str, Any]) -> str:
    """What a leaf of the resource tree says of a Service or ConfigMap; the tree states a StatefulSet and a claim itself
    (:mod:`.tree`, from :mod:`kinds.workloads`)."""
    spec = obj.get("spec") or {}
    if resource is SERVICES:
        ports = ", ".join(str(p.get("port")) for p in spec.get("ports") or ())
        kind_and_ip = f"{spec.get('type') or 'ClusterIP'} {spec.get('clusterIP') or ''}".strip()
        address = "headless" if spec.get("clusterIP") == "None" else kind_and_ip
        return f"{address}, port {ports}"
    if resource is CONFIGMAPS:
        keys = len(obj.get("data") or {})
        return f"{keys} key{'' if keys == 1 else 's'}"
    return ""


def password_secret_row(pg: Mapping[str, Any]) -> dict[str, Any]:
    """The password Secret's row, by name and from what the reconciler last saw of it (``status.passwordSecret``: the
    dashboard never reads a Secret to list it): present, missing (the database waits for it) or not looked at yet."""
    ref = pg.get("passwordSecretRef")
    name = ref["name"] if ref else kind.password_secret_name(pg["name"])
    key = ref["key"] if ref else kind.PASSWORD_KEY
    seen = (pg.get("status") or {}).get("passwordSecret")
    row: dict[str, Any] = {"kind": "Secret", "name": name}
    if seen is None or seen.get("name") != name:
        return {**row, "exists": False, "detail": "not looked at yet by the reconciler"}
    if not seen.get("present"):
        missing = f"missing, or without the key {key}: the database waits for it"
        return {**row, "exists": False, "detail": f"your Secret is {missing}" if ref else f"not created yet ({missing})"}
    holds = f"your Secret; key {key} holds the password" if ref else "holds the password (read only by Show password)"
    return {**row, "exists": True, "detail": holds}


def children(client: ActingClient, pg: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The password Secret (by name: it is never read here), ConfigMap, Services, StatefulSet (from the API's cache,
    by controller UID: :func:`.darkroompages.child`) and data PVC (by name as the person, from the API's cache). A
    ConfigMap, Service or StatefulSet of that name the Postgresql does not control is shown as someone else's; the PVC
    is the StatefulSet controller's (kept or deleted per ``deletionPolicy``), so it is shown whoever owns it. The
    resource tree (:func:`.tree.build`) hangs the StatefulSet's Pods under it, and the PVC under the Pod mounting it."""
    name, namespace, uid = pg["name"], pg["namespace"], pg["uid"]
    found: list[dict[str, Any]] = [password_secret_row(pg)]
    wanted: tuple[tuple[Resource, str, bool], ...] = (
        (CONFIGMAPS, kind.config_map_name(name), True),
        (SERVICES, name, True),
        (SERVICES, kind.headless_service_name(name), True),
        (STATEFULSETS, name, True),
        (PERSISTENTVOLUMECLAIMS, kind.claim_name(name), False),
    )
    for resource, child, owned in wanted:
        entry: dict[str, Any] = {"kind": resource.kind, "name": child, "exists": False, "detail": "not created yet"}
        if owned:  # from the API's cache, by controller UID
            obj, why = darkroompages.child(client, resource, namespace, child, uid)
            if obj is None:
                found.append({**entry, "detail": why})
                continue
        else:  # the StatefulSet controller's claim, whoever owns it: read by name as the person (the cache holds the labelled claims)
            try:
                obj = client.get(resource, child, namespace=namespace)
            except NotFound:
                found.append(entry)
                continue
            except ClusterError as e:
                found.append({**entry, "detail": f"could not read it: {e.message}"})
                continue
        found.append({**entry, "exists": True, "detail": _describe(resource, obj), "object": obj})  # object: for the YAML view
    return found


def _base_context(pg: Mapping[str, Any] | None, namespace: str, name: str) -> dict[str, Any]:
    ref = (pg or {}).get("passwordSecretRef")
    return {
        "d": pg,
        "namespace": namespace,
        "name": name,
        "secret_ref": ref,
        "secret_name": ref["name"] if ref else kind.password_secret_name(name),
        "password_note": TAKES_EFFECT,
    }


#: the detail page's regions (element id → its block), each fetched again when the page's live stream says so
REGIONS = {
    "postgresql-endpoint": "endpoint",
    "postgresql-spec": "spec",
    "postgresql-live": "live",
    "postgresql-children": "children",
    "postgresql-events": "events",
}


@dataclass(frozen=True)
class PostgresqlPages:
    """The Postgresql views of one app, over its Postgresql service."""

    service: KindService

    def list_page(self) -> Response:
        return browsing.list_page(
            self.service, LIST, target="postgresql-list", item=self.service.friendly, notice=_notice(), extra={"bulk": BULK}
        )

    def row(self, namespace: str, name: str) -> Response:
        try:
            obj = self.service.friendly(self.service.fetch(namespace, name))
        except Failure:
            return Response("", status=200, mimetype="text/html")  # gone: the row disappears
        return rendering.block(LIST, "row", {"p": obj})

    def detail(self, namespace: str, name: str) -> Response:
        timeline.chosen_type()  # a bad ?events= is a 400 whether or not the Postgresql is there
        target = rendering.fragment_wanted()
        region = REGIONS.get(target or "")
        try:
            raw = self.service.fetch(namespace, name)
        except Failure as failure:
            if region is not None:  # gone: the region says so (live) or goes
                return rendering.block(DETAIL, region, _base_context(None, namespace, name))
            return browsing.problem_page(failure)
        pg = self.service.friendly(raw)
        if target == "pg-password":
            return rendering.block(DETAIL, "password", _base_context(pg, namespace, name))
        return self._detail_page(raw, namespace, name)

    def _detail_page(self, raw: Mapping[str, Any], namespace: str, name: str, *, status: int = 200, **extra: Any) -> Response:
        pg = self.service.friendly(raw)
        client = self.service.client
        owned = children(client, pg)
        nodes = tree.build(client, owned, logs=timeline.page_path("postgresqls", namespace, name) + "/logs")
        context = {
            **_base_context(pg, namespace, name),
            "timeline": timeline.build(
                timeline.related_events(client, pg["uid"], [*darkroompages.children_uids(owned), *tree.uids(nodes)]),
                own_uid=pg["uid"],
                base=timeline.page_path("postgresqls", namespace, name),
                chosen=timeline.chosen_type(),
            ),
            "children": owned,
            "tree": nodes,
            "saved": bool(request.args.get("saved")),
            **extra,
        }
        region = REGIONS.get(rendering.fragment_wanted() or "")
        if region is not None:
            return rendering.block(DETAIL, region, context, status=status)
        context.update(yamlview.context(raw, owned, client=client))
        return rendering.page(DETAIL, context, status=status)

    # -- the password -----------------------------------------------------------------------------

    def password(self, namespace: str, name: str) -> BaseResponse:
        try:
            raw = self.service.fetch(namespace, name)
        except Failure as failure:
            return browsing.problem_page(failure)
        pg = self.service.friendly(raw)
        if request.method == "GET":  # "Hide": the control again; nothing is read
            if rendering.fragment_wanted() == "pg-password":
                return rendering.block(DETAIL, "password", _base_context(pg, namespace, name))
            return browsing.go(f"{BASE}/{namespace}/{name}")
        revealed = pgpassword.read(self.service.client, pg)
        extra = {"revealed": revealed}
        if rendering.fragment_wanted() == "pg-password":
            return rendering.block(DETAIL, "password", {**_base_context(pg, namespace, name), **extra}, status=revealed.status)
        return self._detail_page(raw, namespace, name, status=revealed.status, **extra)  # without JavaScript: the page, password in place


# -- the form -------------------------------------------------------------------------------------


def _saved_path(namespace: str, name: str) -> str:
    return browsing.with_query(f"{BASE}/{namespace}/{name}", saved="1")


PAGE = forms.FormPage(
    form_id="postgresql-form",
    nav="postgresqls",
    list_title="Databases",
    list_path=BASE,
    item_base=BASE,
    noun="database",
    new_title="New PostgreSQL database",
    create_button="Create database",
    name_hint=f'Lowercase letters, digits and "-", starting with a letter (at most {kind.MAX_NAME_LENGTH}).',
    max_name_length=kind.MAX_NAME_LENGTH,
    live="postgresql",
)


def install(blueprint: Blueprint, services: Services) -> tuple[liverows.RowView | livedetail.DetailView, ...]:
    """Add the Postgresql pages over the app's Postgresql service; their live list view and detail stream."""
    pages = PostgresqlPages(services["Postgresql"])
    flow = forms.generated_flow(FORM_OF, PAGE, service=pages.service, saved_path=_saved_path)
    views: tuple[rendering.ViewDecl, ...] = (
        (BASE, "postgresqls", pages.list_page, ("get",), "Databases (Postgresqls) page: filters ?namespace=&q=&sort=&page="),
        (BASE + "/new", "new_postgresql", flow.new, ("get", "post"), "New Postgresql form (generated from the CRD); POST creates"),
        (
            BASE + "/<namespace>/<name>",
            "postgresql",
            pages.detail,
            ("get",),
            "Postgresql detail page with connection details and its events timeline (?events=Warning|Normal|All, else 400)",
        ),
        (BASE + "/<namespace>/<name>/row", "postgresql_row", pages.row, ("get",), "One Postgresql row on demand; empty when it is gone"),
        (BASE + "/<namespace>/<name>/edit", "edit_postgresql", flow.edit, ("get", "post"), "Edit Postgresql form; POST saves"),
        (
            BASE + "/<namespace>/<name>/edit/freshness",
            "postgresql_edit_freshness",
            flow.freshness,
            ("get",),
            "Whether a Postgresql changed or went since an edit form was opened at ?generation=",
        ),
        (BASE + "/<namespace>/<name>/delete", "delete_postgresql", flow.delete, ("post",), "Delete a Postgresql"),
        (BASE + "/<namespace>/<name>/password", "postgresql_password", pages.password, ("get", "post"), "The password, on request"),
    )
    added = rendering.add_views(blueprint, views)
    yamledit.install(blueprint, pages.service, page=PAGE, saved_path=_saved_path)
    added["postgresql_password"].__doc__ = pgpassword.DOC
    bulk.install(blueprint, pages.service, BULK, endpoint="postgresql")
    browsing.add_shortcuts(blueprint, BASE, title="Databases", by_namespace=BASE)
    return (
        liverows.RowView.of("postgresqls", pages.service, LIST, "p", warnings=True),
        livedetail.DetailView("postgresql", pages.service),
    )

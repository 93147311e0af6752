"""The Darkroom pages: list (``/``), detail, create/edit form and delete, with their live fragments.

Installed by :mod:`backend.dashboard` (:func:`install`: the views close over the Darkroom service; :data:`LISTS`
is its navigation link). Routes:

- ``GET /`` — the list (``?namespace=&q=&sort=&page=``); an htmx request targeting ``darkroom-list``
  gets only that block. Its rows are pushed live by :mod:`.liverows` (view ``darkrooms``);
  ``GET /ui/darkrooms/<ns>/<name>/row`` is one row on demand.
- ``GET /ui/darkrooms/<ns>/<name>`` — detail (spec, status, conditions, children, the timeline of the Events about it
  and them, ``?events=Warning|Normal|All``: :mod:`.timeline`;
  their YAML at ``#yaml`` or ``?view=yaml``, :mod:`.yamlview`); each region (:data:`REGIONS`: target
  ``darkroom-spec``, ``darkroom-live``, ``darkroom-children``, ``darkroom-events``) gets its block, fetched again when
  the page's stream (:mod:`.livedetail`, ``/ui/live/darkroom/<ns>/<name>``) says it changed.
- ``GET /ui/darkrooms/<ns>/<name>/edit/freshness?generation=`` — the edit form's notice that the Darkroom changed or
  went since the form was opened (:meth:`.editing.Flow.freshness`).

Domain links use ``https://`` only when the Ingress serves them over TLS, else ``http://``
(:func:`kinds.darkrooms.domain_url`). The list and the status use the reconciler's ``status.tls``
(the dashboard can read neither the reconciler's settings nor, with the deployed RBAC, Ingresses);
the children panel uses the Ingress it shows, judged by the same :func:`kinds.darkrooms.serves_tls`.
- ``GET|POST /ui/darkrooms/new`` and ``/ui/darkrooms/<ns>/<name>/edit`` — the form :mod:`.forms`
  builds from the CRD and :data:`FORM_SPEC` (the WebFolder/S3 switch from the variant table in
  :mod:`kinds.darkrooms`; the S3 keys write-only, standing in for ``credentialsSecretRef``); POST
  validates and writes through :mod:`.actions` (the flow of :mod:`.editing`: 422: the form again
  with inline errors; 409 on edit: the form again with the current values explained). ``add-item`` /
  ``remove-item=subDomains:<i>`` edit the sub-domain list server-side (``forms.js`` does it in place).
- ``GET /ui/darkrooms``, ``/ui`` and ``/ui/darkrooms/<ns>`` go to the list (the last filtered to that namespace:
  :func:`.browsing.add_shortcuts`).
- ``POST /ui/darkrooms/<ns>/<name>/delete`` — delete (the detail page asks for confirmation).
- ``POST /ui/darkrooms/bulk/confirm`` and ``/ui/darkrooms/bulk`` — Delete or Scale the list's selection (:mod:`.bulk`:
  :data:`BULK`).
- ``POST /ui/darkrooms/<ns>/<name>/scale`` — set ``replicas`` (the detail page's Replicas control, block ``scale``:
  a refusal or an invalid number comes back in it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, request
from werkzeug.wrappers import Response as BaseResponse

from backend.api.problems import Problem
from backend.core import errors
from backend.core.access import CHILDREN, CONTROLLER_UID, controller_uid
from backend.core.errors import Failure
from backend.core.schemas.darkrooms import KEY_MAX_LENGTH
from backend.core.services import KindService, Services
from backend.dashboard import (
    actions,
    browsing,
    bulk,
    editing,
    forms,
    livedetail,
    liverows,
    rendering,
    returning,
    timeline,
    tree,
    yamledit,
    yamlview,
)
from cluster import CONFIGMAPS, DEPLOYMENTS, INGRESSES, SERVICES, ClusterError, FrozenDict, NotFound
from cluster.acting import ActingClient
from cluster.resources import Resource
from kinds import darkrooms as darkroom_kind

LIST = "darkrooms.html"
DETAIL = "darkroom_detail.html"
MAX_REPLICAS = 100  # the CRD's maximum of spec.replicas
REPLICAS_HINT = f"Enter a whole number of replicas from 0 to {MAX_REPLICAS}."
#: the detail page's regions (element id → its block), each fetched again when the page's live stream says so
REGIONS = {"darkroom-spec": "spec", "darkroom-live": "live", "darkroom-children": "children", "darkroom-events": "events"}

FORM_SPEC = forms.FormSpec(
    kind="Darkroom",
    sections=(
        forms.Section(legend="Image source", paths=("source",)),
        forms.Section(legend="Sub-domains", paths=("subDomains",)),
        forms.Section(legend="Version, scaling and caching", paths=("version", "replicas"), rest=True),
    ),
    labels={
        "source": "Image source",
        "source.baseUrl": "Base URL",
        "source.type": "Source type",
        "subDomains": "Sub-domains",
        "cacheTime": "Cache time (seconds)",
    },
    nouns={"subDomains": "sub-domain"},
    switches={
        "source": forms.Switch(
            key="type",
            members={v.type: (*v.fields, *v.keys) for v in darkroom_kind.SOURCES.values()},
            required={v.type: v.required for v in darkroom_kind.SOURCES.values()},
            choices={"WebFolder": ("Web folder", "originals fetched over HTTP(S)"), "S3": ("S3 bucket", "AWS S3 or compatible")},
        )
    },
    write_only={f"source.{key}": forms.WriteOnly(label=forms.humanize(key), max_length=KEY_MAX_LENGTH) for key in darkroom_kind.KEY_FIELDS},
    stand_ins={
        "source.credentialsSecretRef": forms.StandIn(
            label="Credentials",
            fields=tuple(f"source.{key}" for key in darkroom_kind.KEY_FIELDS),
            set_flag="source.credentialsSet",
            help="Leave both empty for a public bucket. Keys are stored in a Secret owned by the Darkroom and never shown again.",
            help_set="Credentials are stored. Leave both keys empty to keep them, or enter both to replace them.",
        )
    },
)
FORM_OF = forms.build(FORM_SPEC)  # the CRD is read here, once, at import


LISTS = (rendering.NavLink("/", "darkrooms", "Darkrooms"),)
SCALE = bulk.Action("scale", "Scale", "Scaling", "scaled", bulk.patching(lambda replicas: {"replicas": replicas}), needs_replicas=True)
BULK = bulk.Bulk(list_path="/", base="/ui/darkrooms", actions=(bulk.DELETE, SCALE), max_replicas=MAX_REPLICAS, replicas_hint=REPLICAS_HINT)


def _notice() -> str | None:
    return returning.notice("Darkroom")


def child(client: ActingClient, resource: Resource, namespace: str, name: str, uid: str) -> tuple[FrozenDict | None, str]:
    """The object of ``resource`` named ``name`` that the object with ``uid`` controls, found by the cache index of
    controller UIDs (:data:`backend.core.access.CONTROLLER_UID`: never a listing; an unlabelled one by name from the API
    server), as the person may read it; else
    None and why (not created yet, someone else's object of that name — the reconciler's ChildConflict —, or not
    readable by the person). Also for :mod:`.pgpages`."""
    try:
        cached = client.by_index(resource, CONTROLLER_UID, uid) if resource in CHILDREN else ()
        owned = [o for o in cached if o["metadata"].get("namespace") == namespace]
        found = next((o for o in owned if o["metadata"].get("name") == name), None)
        if found is not None:
            return found, ""
        # not in the cache (a kind the API does not cache, or an object without the managed-by label): asked of the API
        # server, as the person
        named = client.get(resource, name, namespace=namespace)
    except NotFound:
        return None, "not created yet"
    except ClusterError as e:
        return None, f"could not read it: {e.message}"
    if uid in controller_uid(named):
        return named, ""
    return None, f"a {resource.kind} of this name exists but belongs to someone else (left alone)"


def children_uids(entries: list[dict[str, Any]]) -> list[str]:
    """The UIDs of the children found (their Events are shown with the object's: :func:`.timeline.related_events`)."""
    return [str(e["object"]["metadata"]["uid"]) for e in entries if e.get("object") is not None]


def children(client: ActingClient, namespace: str, name: str, uid: str) -> list[dict[str, Any]]:
    """ConfigMap, Deployment, Service and Ingress the Darkroom controls (named after it), from the API's cache
    (:func:`child`). An object of that name the Darkroom does not control is shown as such, never as a child."""
    found: list[dict[str, Any]] = []
    resource: Resource
    for resource in (CONFIGMAPS, DEPLOYMENTS, SERVICES, INGRESSES):
        entry: dict[str, Any] = {"kind": resource.kind, "name": name, "exists": False, "detail": "not created yet"}
        obj, why = child(client, resource, namespace, name, uid)
        if obj is None:
            found.append({**entry, "detail": why})
            continue
        entry["exists"] = True
        entry["object"] = obj  # for the YAML view
        spec = obj.get("spec") or {}
        if resource is DEPLOYMENTS:
            entry["detail"] = ""  # the resource tree states it (backend.dashboard.tree, from kinds.workloads)
        elif resource is SERVICES:
            ports = ", ".join(str(p.get("port")) for p in spec.get("ports") or ())
            entry["detail"] = f"{spec.get('type') or 'ClusterIP'} {spec.get('clusterIP') or ''} port {ports}".strip()
        elif resource is INGRESSES:
            entry["hosts"] = [r.get("host") for r in spec.get("rules") or () if r.get("host")]
            entry["tls"] = darkroom_kind.serves_tls(obj)  # the Ingress shown decides its links' scheme
            entry["detail"] = ""
        else:
            entry["detail"] = f"{len(obj.get('data') or {})} keys"
        found.append(entry)
    return found


@dataclass(frozen=True)
class DarkroomPages:
    """The Darkroom views of one app, over its Darkroom service."""

    service: KindService

    def list_page(self) -> Response:
        return browsing.list_page(
            self.service, LIST, target="darkroom-list", item=self.service.friendly, notice=_notice(), extra={"bulk": BULK}
        )

    def row(self, namespace: str, name: str) -> Response:
        try:
            obj = self.service.friendly(self.service.fetch(namespace, name))
        except Failure:
            return Response("", status=200, mimetype="text/html")  # gone: the row disappears
        return rendering.block(LIST, "row", {"d": obj})

    def scale(self, namespace: str, name: str) -> BaseResponse:
        """Set spec.replicas (the JSON API's PATCH, through the same service); the Replicas control again on a refusal
        or an invalid number (htmx swaps it in place; without JavaScript, the page with it)."""
        text = (request.form.get("replicas") or "").strip()
        problem: Problem | None = None
        try:
            actions.change(self.service, namespace, name, {"replicas": int(text)})
        except ValueError:
            problem = Problem(422, errors={"replicas": [REPLICAS_HINT]})
        except errors.NotFound as gone:
            return browsing.problem_page(gone)
        except (ClusterError, Failure) as error:
            problem = editing.problem_of(error)
        if problem is None:
            return browsing.go(browsing.with_query(f"/ui/darkrooms/{namespace}/{name}", saved="1"))
        messages = [m for ms in (problem.errors or {"replicas": [problem.detail or problem.title]}).values() for m in ms]
        if rendering.fragment_wanted() == "darkroom-scale":
            obj = self.service.friendly(self.service.fetch(namespace, name))
            context = {"d": {**obj, "replicas": text}, "namespace": namespace, "name": name, "scale_errors": {"replicas": messages}}
            return rendering.block(DETAIL, "scale", context, status=problem.status)
        return self.detail(namespace, name, status=problem.status, scale_errors={"replicas": messages})

    def detail(self, namespace: str, name: str, *, status: int = 200, **extra: Any) -> Response:
        chosen = timeline.chosen_type()
        target = rendering.fragment_wanted()
        region = REGIONS.get(target or "")
        try:
            raw = self.service.fetch(namespace, name)
        except Failure as failure:
            if region is not None:  # gone: the region says so (live) or goes
                return rendering.block(DETAIL, region, {"d": None, "namespace": namespace, "name": name})
            return browsing.problem_page(failure)
        obj = self.service.friendly(raw)
        owned = children(self.service.client, namespace, name, obj["uid"])
        nodes = tree.build(self.service.client, owned, logs=timeline.page_path("darkrooms", namespace, name) + "/logs")
        context = {
            "d": obj,
            "namespace": namespace,
            "name": name,
            "timeline": timeline.build(
                timeline.related_events(self.service.client, obj["uid"], [*children_uids(owned), *tree.uids(nodes)]),
                own_uid=obj["uid"],
                base=timeline.page_path("darkrooms", namespace, name),
                chosen=chosen,
            ),
            "children": owned,
            "tree": nodes,
            "saved": bool(request.args.get("saved")),
            **extra,
        }
        if region is not None:
            return rendering.block(DETAIL, region, context, status=status)
        context.update(yamlview.context(raw, owned, client=self.service.client))
        return rendering.page(DETAIL, context, status=status)


PAGE = forms.FormPage(
    form_id="darkroom-form",
    nav="darkrooms",
    list_title="Darkrooms",
    list_path="/",
    item_base="/ui/darkrooms",
    noun="Darkroom",
    new_title="New Darkroom",
    create_button="Create Darkroom",
    name_hint='Lowercase letters, digits and "-", starting with a letter (at most 63).',
    max_name_length=63,
    live="darkroom",
)


def _saved_path(namespace: str, name: str) -> str:
    return browsing.with_query(f"/ui/darkrooms/{namespace}/{name}", saved="1")


def install(blueprint: Blueprint, services: Services) -> tuple[liverows.RowView | livedetail.DetailView, ...]:
    """Add the Darkroom pages over the app's Darkroom service; their live list view and detail stream."""
    pages = DarkroomPages(services["Darkroom"])
    flow = forms.generated_flow(FORM_OF, PAGE, service=pages.service, saved_path=_saved_path)
    views: tuple[rendering.ViewDecl, ...] = (
        ("/", "darkrooms", pages.list_page, ("get",), "Darkrooms page (the landing page): filters ?namespace=&q=&sort=&page="),
        ("/ui/darkrooms/new", "new_darkroom", flow.new, ("get", "post"), "New Darkroom form; POST creates"),
        (
            "/ui/darkrooms/<namespace>/<name>",
            "darkroom",
            pages.detail,
            ("get",),
            "Darkroom detail page; ?events=Warning|Normal|All filters its events timeline (else 400)",
        ),
        (
            "/ui/darkrooms/<namespace>/<name>/row",
            "darkroom_row",
            pages.row,
            ("get",),
            "One Darkroom row on demand; empty when it is gone",
        ),
        ("/ui/darkrooms/<namespace>/<name>/edit", "edit_darkroom", flow.edit, ("get", "post"), "Edit Darkroom form; POST saves"),
        (
            "/ui/darkrooms/<namespace>/<name>/edit/freshness",
            "darkroom_edit_freshness",
            flow.freshness,
            ("get",),
            "Whether a Darkroom changed or went since an edit form was opened at ?generation=",
        ),
        ("/ui/darkrooms/<namespace>/<name>/delete", "delete_darkroom", flow.delete, ("post",), "Delete a Darkroom"),
        ("/ui/darkrooms/<namespace>/<name>/scale", "scale_darkroom", pages.scale, ("post",), "Scale a Darkroom (form field replicas)"),
    )
    rendering.add_views(blueprint, views)
    bulk.install(blueprint, pages.service, BULK, endpoint="darkroom")
    yamledit.install(blueprint, pages.service, page=PAGE, saved_path=_saved_path)
    browsing.add_shortcuts(blueprint, "/", title="Darkrooms", trimmed=("/ui", "/ui/darkrooms"), by_namespace="/ui/darkrooms")
    return (
        liverows.RowView.of("darkrooms", pages.service, LIST, "d", warnings=True),
        livedetail.DetailView("darkroom", pages.service),
    )

"""The REST endpoints of every kind: :class:`CollectionView` and :class:`ItemView` over its application service.

Flask's ``MethodView`` pattern: a method per HTTP verb, and :func:`register_api` adds both views of one kind (on the
kind's blueprint, :func:`resource_blueprint`) with their OpenAPI operations (:func:`collection_operations`,
:func:`item_operations`). The HTTP half only: query parameters, bodies, ``If-Match``, status codes, ETags and
``Location``. What is read, checked and written — and the precondition loop — is the kind's
:class:`backend.core.services.KindService`, built once by :func:`backend.app.create_app` and handed in; its domain
errors propagate to :mod:`backend.api.problems`.

``GET /<plural>`` (cache, paginated; ``?namespace=&labelSelector=&fieldSelector=&q=&sort=&limit=&continue=``:
:mod:`backend.api.queries`), ``POST /<plural>``, and ``GET|PUT|PATCH|DELETE
/<plural>/<namespace>/<name>``. Reads come from the informer cache through the cached client
(read-your-writes included); writes go to the API server (:mod:`backend.core.writing`).

Concurrency: the ETag is the resourceVersion. ``If-Match`` on PUT/PATCH/DELETE is checked against
the current object (re-read from the server before refusing, in case the cache lags): 412 on
mismatch, also when the object changes between the check and the write. A ``resourceVersion`` in a
PUT/PATCH body is a precondition like Kubernetes' own: 409 when stale. With neither, a write is
unconditional: on a conflict it is rebuilt on the fresh object and retried (a PATCH is re-applied).

Bodies: POST/PUT take ``application/json``; PATCH is a JSON merge patch (RFC 7386) on the friendly
shape, ``application/merge-patch+json`` or ``application/json``: the patch must itself be an object
of known fields (the ``...Patch`` schema), then the merged result must be a valid PUT body. Unknown
fields are 422 errors naming them. A body is checked (400/413/415/422) before the object is looked up
(404) and preconditions are evaluated (409/412). A 422 names every problem at once (:meth:`backend.core.services.KindService.problems`):
all fields' errors, a patch's own and its merged result's, and the kind's checks of what is valid.
DELETE answers 202 with the object while finalizers hold it, 204 once it is gone.

``?dryRun=All`` on POST/PUT/PATCH/DELETE (Kubernetes' parameter and value; anything else is a 400):
every check runs — ours, the API server's validation, defaulting and admission, the kind's own
writes (:meth:`backend.core.kinds.base.Kind.after_dry_run`), preconditions — and the answer is what would be
stored, with the same status codes; nothing is stored, no ``Location`` (a create names nothing)
and no consistency token.

``/<plural>/<namespace>`` (a namespace without a name) is no resource: any method answers a 404
problem whose detail points at ``/<plural>?namespace=<namespace>`` (:func:`register_namespace_hints`,
a handler of the router's 404, so the OpenAPI document lists no such path).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, urlencode

import orjson
from flask import Blueprint, Flask, Response, request, url_for
from flask.views import MethodView
from werkzeug.exceptions import NotFound as RouteNotFound

from backend.api import apidocs, bodies, problems, queries
from backend.api.problems import Problem
from backend.core import errors, validation
from backend.core.kinds.base import Kind
from backend.core.services import KindService, version
from cluster import Conflict


def item_response(service: KindService, obj: Mapping[str, Any], *, status: int = 200, dry_run: bool = False, **headers: str) -> Response:
    """One object as JSON with its resourceVersion as the ETag. A dry run's answer is rendered apart from the
    memo: it may carry the stored object's UID and resourceVersion with content that was never stored."""
    if not dry_run:
        response = Response(service.renderer.encoded(obj), status=status, mimetype=bodies.JSON, headers=headers)
        response.set_etag(version(obj))
        return response
    body = orjson.dumps(service.converted(obj))
    response = Response(body, status=status, mimetype=bodies.JSON, headers=headers)
    if version(obj):
        response.set_etag(version(obj))
    return response


def dry_run() -> bool:
    """Whether the request asks for a dry run (``?dryRun=All``); 400 for another value."""
    value = request.args.get("dryRun")
    if value is None:
        return False
    if value != "All":
        raise Problem(400, 'dryRun must be "All" (check everything, store nothing), as in Kubernetes')
    return True


def if_match() -> frozenset[str] | None:
    """Versions ``If-Match`` accepts (None: no header, or ``*``)."""
    tags = request.if_match
    if not tags or tags.star_tag:
        return None
    return frozenset(tags.as_set(include_weak=False))


class CollectionView(MethodView):
    """``/<plural>``: list the kind's objects, create one."""

    init_every_request = False  # one instance per kind, made by register_api: it holds only the service

    def __init__(self, service: KindService) -> None:
        self.service = service

    def get(self) -> Response:
        service = self.service
        query = queries.list_query(service.settings, service.kind)
        return Response(service.renderer.page(service.list(query), query), mimetype=bodies.JSON)

    def post(self) -> Response:
        service, dry = self.service, dry_run()
        friendly = service.checked(service.kind.create_schema, bodies.read_json(), existing=None)
        written = service.check_and_create(friendly, server="API", dry_run=dry)
        if dry:
            return item_response(service, written, status=201, dry_run=True)
        location = url_for(".item", namespace=friendly["namespace"], name=friendly["name"])
        return item_response(service, written, status=201, Location=location)


class ItemView(MethodView):
    """``/<plural>/<namespace>/<name>``: read, replace, change (JSON merge patch) and delete one object."""

    init_every_request = False

    def __init__(self, service: KindService) -> None:
        self.service = service

    def get(self, namespace: str, name: str) -> Response:
        service = self.service
        return item_response(service, service.fetch(namespace, name))

    def put(self, namespace: str, name: str) -> Response:
        service, dry = self.service, dry_run()
        schema = service.kind.update_schema
        body = bodies.read_json()
        friendly, found = validation.validate(schema, body)
        if found:  # with the kind's checks against the stored object, when there is one
            current = service.stored(namespace, name)
            raise errors.Invalid(service.problems(schema, body, existing=current)[1] if current else found)
        written = service.replace(namespace, name, friendly, wanted=if_match(), dry_run=dry)
        return item_response(service, written, dry_run=dry)

    def patch(self, namespace: str, name: str) -> Response:
        service, dry = self.service, dry_run()
        patch_body = bodies.read_json(accept=(bodies.MERGE_PATCH, bodies.JSON))
        loaded, patch_errors = validation.validate(service.kind.patch_schema, patch_body)  # the patch itself must be well-formed
        if patch_errors:  # and what the merged result lacks, and the kind's checks: all at once
            current = service.stored(namespace, name)
            if current is not None:
                merged = service.patched(current, patch_body)
                patch_errors = service.problems(service.kind.update_schema, merged, existing=current, earlier=patch_errors)[1]
            raise errors.Invalid(patch_errors)
        written = service.patch(namespace, name, patch_body, body_version=loaded.get("resourceVersion"), wanted=if_match(), dry_run=dry)
        return item_response(service, written, dry_run=dry)

    def delete(self, namespace: str, name: str) -> Response:
        service, dry = self.service, dry_run()
        wanted = if_match()
        current = service.current_at(namespace, name, wanted, precondition=True, verb="delete")
        try:
            result, terminating = service.delete(
                namespace,
                name,
                uid=current["metadata"].get("uid"),
                resource_version=version(current) if wanted else None,
                dry_run=dry,
            )
        except Conflict:
            raise service.stale(service.fetch(namespace, name, fresh=True), precondition=bool(wanted)) from None
        return item_response(service, result, status=202, dry_run=dry) if terminating else Response(status=204)


Operations = dict[str, tuple[str, dict[str, Any]]]  # method → (summary, OpenAPI operation), in the document's order


def collection_operations(kind: Kind) -> Operations:
    """The OpenAPI operations of :class:`CollectionView` for ``kind``."""
    title = kind.title
    titles, ok = title + "s", apidocs.json_response
    return {
        "GET": (f"List {titles}", {
            "tags": [titles],
            "description": (
                f"{titles} of all namespaces (or one), sorted by namespace then name (or `sort`), from the cache; `labelSelector`,"
                " `fieldSelector` and `q` narrow it. A query parameter not listed here is a 400, never ignored."
            ),
            "parameters": apidocs.list_parameters(kind),
            "responses": {"200": ok(f"{title}List", f"A page of {titles}."), **apidocs.problems(400, 503)},
        }),
        "POST": (f"Create a {title}", {
            "tags": [titles],
            "parameters": [apidocs.DRY_RUN],
            "requestBody": apidocs.request_body(f"{title}Create"),
            "responses": {
                "201": ok(title, f"The new {title}.", etag=True, location=True),
                **apidocs.problems(400, 409, 413, 415, 422, 503),
            },
        }),
    }  # fmt: skip


def item_operations(title: str) -> Operations:
    """The OpenAPI operations of :class:`ItemView` for the kind ``title``."""
    titles, ok = title + "s", apidocs.json_response
    item_parameters = apidocs.path_parameters(title)
    return {
        "GET": (f"Get a {title}", {
            "tags": [titles],
            "parameters": item_parameters,
            "responses": {"200": ok(title, f"The {title}.", etag=True), **apidocs.problems(404, 503)},
        }),
        "PUT": (f"Replace a {title}", {
            "tags": [titles],
            "description": "The body is the whole friendly object; name and namespace come from the URL.",
            "parameters": [*item_parameters, apidocs.IF_MATCH, apidocs.DRY_RUN],
            "requestBody": apidocs.request_body(f"{title}Update"),
            "responses": {"200": ok(title, f"The updated {title}.", etag=True), **apidocs.problems(400, 404, 409, 412, 413, 415, 422, 503)},
        }),
        "PATCH": (f"Change a {title} (JSON merge patch)", {
            "tags": [titles],
            "description": "RFC 7386 merge patch on the friendly object: present fields replace, null removes.",
            "parameters": [*item_parameters, apidocs.IF_MATCH, apidocs.DRY_RUN],
            "requestBody": apidocs.request_body(f"{title}Patch", content_type=(apidocs.MERGE_PATCH, apidocs.JSON)),
            "responses": {"200": ok(title, f"The updated {title}.", etag=True), **apidocs.problems(400, 404, 409, 412, 413, 415, 422, 503)},
        }),
        "DELETE": (f"Delete a {title}", {
            "tags": [titles],
            "parameters": [*item_parameters, apidocs.IF_MATCH, apidocs.DRY_RUN],
            "responses": {
                "202": ok(title, "Deletion requested; finalizers still hold the object (terminating)."),
                "204": {"description": "Deleted."},
                **apidocs.problems(400, 404, 409, 412, 503),
            },
        }),
    }  # fmt: skip


def register_api(app_or_blueprint: Flask | Blueprint, service: KindService) -> None:
    """Serve the kind of ``service``: ``/<plural>`` (endpoint ``collection``) and ``/<plural>/<namespace>/<name>``
    (endpoint ``item``), each view documented with its OpenAPI operations. One kind per blueprint (its name scopes
    the endpoints: :func:`resource_blueprint`) or per app."""
    plural, title = service.plural, service.title
    collection = apidocs.document_methods(CollectionView.as_view("collection", service), collection_operations(service.kind))
    item = apidocs.document_methods(ItemView.as_view("item", service), item_operations(title))
    app_or_blueprint.add_url_rule(f"/{plural}", view_func=collection)
    app_or_blueprint.add_url_rule(f"/{plural}/<namespace>/<name>", view_func=item)


def resource_blueprint(service: KindService) -> Blueprint:
    """The blueprint serving the kind of ``service`` under ``/<plural>`` (named ``<plural>``)."""
    blueprint = Blueprint(service.plural, __name__)
    register_api(blueprint, service)
    return blueprint


def register_namespace_hints(app: Flask, kinds: Iterable[KindService]) -> None:
    """Answer ``/<plural>/<namespace>`` of each of ``kinds`` (no route: the router's 404) with a problem that
    points at the namespace's list; any other unknown path gets the plain 404 problem."""
    titles = {kind.plural: kind.title for kind in kinds}

    @app.errorhandler(RouteNotFound)
    def _not_found(error: RouteNotFound) -> Response:
        segments = request.path.strip("/").split("/")
        if len(segments) == 2 and segments[0] in titles and segments[1]:
            plural, namespace = segments
            title = titles[plural]
            listed = f"{request.script_root}/{plural}?{urlencode({'namespace': namespace})}"
            item = f"{request.script_root}/{plural}/{quote(namespace)}/<name>"
            detail = (
                f'"{request.script_root}{request.path}" names a namespace, not a {title}: the {title}s of namespace '
                f'"{namespace}" are listed at {listed}; one {title} is {item}'
            )
            return problems.routing_answer(Problem(404, detail, extra={"list": listed}))
        return problems.routing_answer(Problem(404, error.description))

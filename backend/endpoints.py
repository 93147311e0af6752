"""The REST endpoints of a kind, generated from a :class:`backend.kinds.Kind`: :func:`resource_blueprint`.

``GET /<plural>`` (cache, paginated), ``POST /<plural>``, and ``GET|PUT|PATCH|DELETE
/<plural>/<namespace>/<name>``. Reads come from the informer cache through the cached client
(read-your-writes included); writes go to the API server (:mod:`backend.writing`).

Concurrency: the ETag is the resourceVersion. ``If-Match`` on PUT/PATCH/DELETE is checked against
the current object (re-read from the server before refusing, in case the cache lags): 412 on
mismatch, also when the object changes between the check and the write. A ``resourceVersion`` in a
PUT/PATCH body is a precondition like Kubernetes' own: 409 when stale. With neither, a write is
unconditional: on a conflict it is rebuilt on the fresh object and retried (a PATCH is re-applied).

Bodies: POST/PUT take ``application/json``; PATCH is a JSON merge patch (RFC 7386) on the friendly
shape, ``application/merge-patch+json`` or ``application/json``: the patch must itself be an object
of known fields (the ``...Patch`` schema), then the merged result must be a valid PUT body. Unknown
fields are 422 errors naming them. A body is checked (400/413/415/422) before the object is looked up
(404) and preconditions are evaluated (409/412). A 422 names every problem at once (:func:`problems`):
all fields' errors, a patch's own and its merged result's, and the kind's checks of what is valid.
DELETE answers 202 with the object while finalizers hold it, 204 once it is gone.

``?dryRun=All`` on POST/PUT/PATCH/DELETE (Kubernetes' parameter and value; anything else is a 400):
every check runs — ours, the API server's validation, defaulting and admission, the kind's own
writes (:meth:`backend.kinds.Kind.after_dry_run`), preconditions — and the answer is what would be
stored, with the same status codes; nothing is stored, no ``Location`` (a create names nothing)
and no consistency token.

``/<plural>/<namespace>`` (a namespace without a name) is no resource: any method answers a 404
problem whose detail points at ``/<plural>?namespace=<namespace>`` (:func:`register_namespace_hints`,
a handler of the router's 404, so the OpenAPI document lists no such path).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, urlencode

import orjson
from flask import Blueprint, Flask, Response, request, url_for
from marshmallow import Schema
from werkzeug.exceptions import NotFound as RouteNotFound

from backend import apidocs, consistency, listing, payloads, state, writing
from backend.kinds import Kind
from backend.problems import Problem
from cluster import Conflict, FrozenDict, NotFound, Resource

RETRIES = 3


def renderer(kind: Kind) -> listing.Renderer:
    """The app's memoizing renderer of ``kind`` (display defaults come from the app's settings)."""
    settings = state.current().settings
    return listing.app_renderer(kind.plural, lambda: listing.Renderer(lambda obj, _extra: kind.to_friendly(obj, settings=settings)))


def item_response(kind: Kind, obj: Mapping[str, Any], *, status: int = 200, dry_run: bool = False, **headers: str) -> Response:
    """One object as JSON with its resourceVersion as the ETag. A dry run's answer is rendered apart from the
    memo: it may carry the stored object's UID and resourceVersion with content that was never stored."""
    if not dry_run:
        return renderer(kind).item_response(obj, status=status, headers=headers)
    body = orjson.dumps(kind.to_friendly(obj, settings=state.current().settings))
    response = Response(body, status=status, mimetype=listing.JSON, headers=headers)
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


def served(namespace: str) -> bool:
    wanted = state.current().settings.namespace
    return wanted is None or namespace == wanted


def cached_list(resource: Resource, query: listing.ListQuery) -> list[FrozenDict]:
    """The objects a collection query selects, from the cache (a namespace this API does not serve: none)."""
    served_namespace = state.current().settings.namespace
    if served_namespace and query.namespace not in (None, served_namespace):
        return []
    namespace = query.namespace or served_namespace
    return state.current().access.client.list(resource, namespace=namespace, label_selector=query.label_selector)


def fetch(kind: Kind, namespace: str, name: str, *, fresh: bool = False) -> Mapping[str, Any]:
    """The object from the cache (``fresh``: from the API server); 404 problem when absent."""
    client = state.current().access.client
    try:
        if not served(namespace):
            raise NotFound("not served")
        return client.get(kind.resource, name, namespace=namespace, fresh=fresh)
    except NotFound:
        raise Problem(404, f'{kind.title} "{namespace}/{name}" not found') from None


def version(obj: Mapping[str, Any]) -> str:
    return str(obj["metadata"].get("resourceVersion", ""))


def if_match() -> frozenset[str] | None:
    """Versions ``If-Match`` accepts (None: no header, or ``*``)."""
    tags = request.if_match
    if not tags or tags.star_tag:
        return None
    return frozenset(tags.as_set(include_weak=False))


def base(kind: Kind, namespace: str, name: str, wanted: frozenset[str] | None, *, status: int) -> Mapping[str, Any]:
    """The current object, at one of the ``wanted`` versions if given (else ``status`` problem)."""
    current = fetch(kind, namespace, name)
    if wanted is None or version(current) in wanted:
        return current
    current = fetch(kind, namespace, name, fresh=True)  # the cache may lag behind a version the client saw
    if version(current) in wanted:
        return current
    raise stale(kind, current, status)


def stale(kind: Kind, current: Mapping[str, Any], status: int) -> Problem:
    meta = current["metadata"]
    what = "If-Match does not name" if status == 412 else "the resourceVersion in the body is not"
    return Problem(
        status,
        f'{what} the current version of {kind.title} "{meta["namespace"]}/{meta["name"]}" ({version(current)}): re-read it and retry',
        headers={"ETag": f'"{version(current)}"'},
    )


def problems(
    kind: Kind, schema: type[Schema], data: Any, *, existing: Mapping[str, Any] | None, earlier: Mapping[str, list[str]] | None = None
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """``data`` loaded by ``schema``, and every problem of it at once (empty: valid): ``earlier`` errors (a patch's
    own), the schema's (all fields, the kind's table rules beside them) and, when those exist, the kind's own checks
    (:meth:`backend.kinds.Kind.check` against ``existing``) of the fields that did load — so a client fixes a body
    in one round, not one per layer. On a valid body the kind's checks run where the write runs (:func:`create`,
    :func:`write`)."""
    friendly, errors = payloads.validate(schema, data)
    errors = payloads.merged(earlier or {}, errors)
    if errors:
        errors = payloads.merged(errors, kind.check(friendly, existing=existing), beside=True)
    return friendly, errors


def checked(kind: Kind, schema: type[Schema], data: Any, *, existing: Mapping[str, Any] | None) -> dict[str, Any]:
    """``data`` loaded by ``schema``; else a 422 with every problem of it (:func:`problems`)."""
    friendly, errors = problems(kind, schema, data, existing=existing)
    if errors:
        raise payloads.invalid(errors)
    return friendly


def patched(kind: Kind, current: Mapping[str, Any], patch: Any) -> dict[str, Any]:
    """The friendly body a JSON merge patch of friendly fields makes of ``current`` (to be validated as a PUT body)."""
    raw = kind.to_friendly(current, settings=None)
    raw.pop("resourceVersion", None)
    merged: dict[str, Any] = payloads.merge_patch(kind.patch_base(raw, patch), patch)
    return merged


def stored(kind: Kind, namespace: str, name: str) -> Mapping[str, Any] | None:
    """The object, or None when there is none (a refused body is answered 422 either way: the body comes first)."""
    try:
        return fetch(kind, namespace, name)
    except Problem:
        return None


def create(kind: Kind, friendly: Mapping[str, Any], *, server: str, dry_run: bool = False) -> dict[str, Any]:
    """POST: check a validated friendly object (served namespace, the kind's checks) and create it; the server's answer.

    ``server`` names what refuses a namespace it does not serve ("API", "dashboard"); ``dry_run``: store nothing.
    """
    if not served(friendly["namespace"]):
        raise payloads.invalid({"namespace": [f"this {server} serves namespace {state.current().settings.namespace} only"]})
    errors = kind.check(friendly, existing=None)
    if errors:
        raise payloads.invalid(errors)
    client = state.current().access.client
    clash = kind.conflicts(client, friendly)
    if clash:
        raise Problem(409, clash)
    created = writing.create(kind, client, friendly, dry_run=dry_run)
    if not dry_run:
        consistency.wrote(kind.resource)
    return created


def write(
    kind: Kind,
    namespace: str,
    name: str,
    body_version: str | None,
    build: Callable[[Mapping[str, Any]], dict[str, Any]],
    *,
    wanted: frozenset[str] | None,
    dry_run: bool = False,
) -> Response:
    """PUT/PATCH: ``build(current)`` gives the validated friendly object to store over ``current``.

    ``wanted``: the versions ``If-Match`` accepts (:func:`if_match`; None: no precondition but ``body_version``).
    ``dry_run``: store nothing, answer what would be stored.
    """
    client = state.current().access.client
    status = 412
    if wanted is None and body_version:
        wanted, status = frozenset((body_version,)), 409
    current = base(kind, namespace, name, wanted, status=status)
    if body_version and body_version != version(current):
        raise stale(kind, current, 409)
    for _ in range(RETRIES):
        friendly = build(current)
        errors = kind.check(friendly, existing=current)
        if errors:
            raise payloads.invalid(errors)
        try:
            written = writing.replace(kind, client, friendly, existing=current, resource_version=version(current), dry_run=dry_run)
        except Conflict:
            current = fetch(kind, namespace, name, fresh=True)
            if wanted is not None:
                raise stale(kind, current, status) from None
            continue
        if not dry_run:
            consistency.wrote(kind.resource)
        return item_response(kind, written, dry_run=dry_run)
    raise Problem(409, f'{kind.title} "{namespace}/{name}" kept changing during the update; retry')


def delete(
    kind: Kind, namespace: str, name: str, *, uid: str | None, resource_version: str | None = None, dry_run: bool = False
) -> tuple[dict[str, Any], bool]:
    """DELETE exactly the object with ``uid`` (at ``resource_version`` when given): the server's answer, and
    whether finalizers still hold the object (terminating). Conflict and NotFound propagate. ``dry_run``: delete nothing."""
    client = state.current().access.client
    result = client.delete(kind.resource, name, namespace=namespace, uid=uid, resource_version=resource_version, dry_run=dry_run)
    if not dry_run:
        consistency.wrote(kind.resource)
    meta = result.get("metadata") or {}
    return result, bool(result.get("kind") == kind.resource.kind and meta.get("deletionTimestamp") and meta.get("finalizers"))


def with_identity(friendly: dict[str, Any], kind: Kind, namespace: str, name: str) -> dict[str, Any]:
    """Check a body's name/namespace against the URL (422 on mismatch) and fill them in."""
    errors = {
        field: [f"must match the URL ({expected})"]
        for field, expected in (("name", name), ("namespace", namespace))
        if friendly.get(field) not in (None, expected)
    }
    if errors:
        raise payloads.invalid(errors, f"the body names another {kind.title} than the URL")
    return {**friendly, "name": name, "namespace": namespace}


def resource_blueprint(kind: Kind) -> Blueprint:
    """The blueprint serving ``kind`` under ``/<plural>``."""
    blueprint = Blueprint(kind.plural, __name__)
    title, titles = kind.title, kind.title + "s"
    item_parameters = apidocs.path_parameters(title)

    def list_objects() -> Response:
        query = listing.list_query(state.current().settings)
        return renderer(kind).list_response(cached_list(kind.resource, query), query)

    def create_view() -> Response:
        dry = dry_run()
        friendly = checked(kind, kind.create_schema, payloads.read_json(), existing=None)
        written = create(kind, friendly, server="API", dry_run=dry)
        if dry:
            return item_response(kind, written, status=201, dry_run=True)
        location = url_for(f"{kind.plural}.get", namespace=friendly["namespace"], name=friendly["name"])
        return item_response(kind, written, status=201, Location=location)

    def get(namespace: str, name: str) -> Response:
        return renderer(kind).item_response(fetch(kind, namespace, name))

    def replace(namespace: str, name: str) -> Response:
        dry = dry_run()
        body = payloads.read_json()
        friendly, errors = payloads.validate(kind.update_schema, body)
        if errors:  # with the kind's checks against the stored object, when there is one
            current = stored(kind, namespace, name)
            raise payloads.invalid(problems(kind, kind.update_schema, body, existing=current)[1] if current else errors)
        friendly = with_identity(friendly, kind, namespace, name)
        return write(kind, namespace, name, friendly.get("resourceVersion"), lambda _current: friendly, wanted=if_match(), dry_run=dry)

    def patch(namespace: str, name: str) -> Response:
        dry = dry_run()
        patch_body = payloads.read_json(accept=(payloads.MERGE_PATCH, payloads.JSON))
        loaded, patch_errors = payloads.validate(kind.patch_schema, patch_body)  # the patch itself must be well-formed
        if patch_errors:  # and what the merged result lacks, and the kind's checks: all at once
            current = stored(kind, namespace, name)
            if current is not None:
                patch_errors = problems(
                    kind, kind.update_schema, patched(kind, current, patch_body), existing=current, earlier=patch_errors
                )[1]
            raise payloads.invalid(patch_errors)
        body_version = loaded.get("resourceVersion")

        def build(current: Mapping[str, Any]) -> dict[str, Any]:
            return with_identity(
                checked(kind, kind.update_schema, patched(kind, current, patch_body), existing=current), kind, namespace, name
            )

        return write(kind, namespace, name, body_version, build, wanted=if_match(), dry_run=dry)

    def delete_view(namespace: str, name: str) -> Response:
        dry = dry_run()
        wanted = if_match()
        current = base(kind, namespace, name, wanted, status=412)
        try:
            result, terminating = delete(
                kind,
                namespace,
                name,
                uid=current["metadata"].get("uid"),
                resource_version=version(current) if wanted else None,
                dry_run=dry,
            )
        except Conflict:
            raise stale(kind, fetch(kind, namespace, name, fresh=True), 412 if wanted else 409) from None
        return item_response(kind, result, status=202, dry_run=dry) if terminating else Response(status=204)

    ok = apidocs.json_response
    views: list[tuple[str, str, Callable[..., Response], str, dict[str, Any]]] = [
        ("", "GET", list_objects, f"List {titles}", {
            "description": f"{titles} of all namespaces (or one), sorted by namespace then name, from the cache.",
            "parameters": apidocs.list_parameters(),
            "responses": {"200": ok(f"{title}List", f"A page of {titles}."), **apidocs.problems(400, 503)},
        }),
        ("", "POST", create_view, f"Create a {title}", {
            "parameters": [apidocs.DRY_RUN],
            "requestBody": apidocs.request_body(f"{title}Create"),
            "responses": {
                "201": ok(title, f"The new {title}.", etag=True, location=True),
                **apidocs.problems(400, 409, 413, 415, 422, 503),
            },
        }),
        ("/<namespace>/<name>", "GET", get, f"Get a {title}", {
            "parameters": item_parameters,
            "responses": {"200": ok(title, f"The {title}.", etag=True), **apidocs.problems(404, 503)},
        }),
        ("/<namespace>/<name>", "PUT", replace, f"Replace a {title}", {
            "description": "The body is the whole friendly object; name and namespace come from the URL.",
            "parameters": [*item_parameters, apidocs.IF_MATCH, apidocs.DRY_RUN],
            "requestBody": apidocs.request_body(f"{title}Update"),
            "responses": {"200": ok(title, f"The updated {title}.", etag=True), **apidocs.problems(400, 404, 409, 412, 413, 415, 422, 503)},
        }),
        ("/<namespace>/<name>", "PATCH", patch, f"Change a {title} (JSON merge patch)", {
            "description": "RFC 7386 merge patch on the friendly object: present fields replace, null removes.",
            "parameters": [*item_parameters, apidocs.IF_MATCH, apidocs.DRY_RUN],
            "requestBody": apidocs.request_body(f"{title}Patch", content_type=(apidocs.MERGE_PATCH, apidocs.JSON)),
            "responses": {"200": ok(title, f"The updated {title}.", etag=True), **apidocs.problems(400, 404, 409, 412, 413, 415, 422, 503)},
        }),
        ("/<namespace>/<name>", "DELETE", delete_view, f"Delete a {title}", {
            "parameters": [*item_parameters, apidocs.IF_MATCH, apidocs.DRY_RUN],
            "responses": {
                "202": ok(title, "Deletion requested; finalizers still hold the object (terminating)."),
                "204": {"description": "Deleted."},
                **apidocs.problems(400, 404, 409, 412, 503),
            },
        }),
    ]  # fmt: skip
    for suffix, method, view, summary, operation in views:
        endpoint = view.__name__.removesuffix("_view")  # create_view and delete_view: named apart from the module's create and delete
        view.__name__ = view.__qualname__ = f"{kind.plural}_{endpoint}"
        apidocs.document(view, method, summary, {"tags": [titles], **operation})
        blueprint.add_url_rule(f"/{kind.plural}{suffix}", endpoint=endpoint, view_func=view, methods=[method])
    return blueprint


def register_namespace_hints(app: Flask, kinds: Iterable[Kind]) -> None:
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
            return Problem(404, detail, extra={"list": listed}).response()
        return Problem(404, error.description).response()

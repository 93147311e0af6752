"""What a request asks for: its :class:`Target` (resource, namespace, name, subresource), the
:class:`Rendering` its Accept header negotiates (JSON, YAML, protobuf, Table, watch streams), and the
query options parsed with kube's error texts (dryRun, watch options, booleans, integers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from devcluster import errors
from devcluster.resources import ResourceType
from devcluster.writing import WriteOptions

_DUPLICATES_KEY = "devcluster.duplicate_fields"

JSON = "application/json"
# Under a served group version, kube's router answers a path it has no route for with a Status;
# outside of any served group (or outside /api and /apis) the mux answers in plain text.
_NOT_FOUND = errors.not_found_route()


class _PlainNotFound(Exception):
    """The mux's ``404 page not found`` (text/plain): no API group serves the path."""


class _EmptyNotFound(Exception):
    """The OpenAPI v3 handler's 404 for a group version it has no document for: no body at all."""


@dataclass(frozen=True)
class Target:
    """What a resource URL names."""

    resource: ResourceType
    namespace: str | None  # None: all namespaces (or cluster-scoped)
    name: str
    subresource: str
    legacy_watch: bool


@dataclass(frozen=True)
class Rendering:
    """How the client wants objects back."""

    kind: str  # "object" | "Table" | "PartialObjectMetadata"
    api_version: str = "meta.k8s.io/v1"
    yaml: bool = False


_REPRESENTATIONS = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
_STREAMS = ["application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch"]


def _accepts(header: str, *, collection: bool = False) -> Rendering:
    """Pick the first media type in ``Accept`` that devcluster can produce (406 when none).

    The 406 names what kube-apiserver offers (a collection also streams), not what devcluster does.
    """
    if not header.strip():
        return Rendering("object")
    for entry in header.split(","):
        parts = [p.strip() for p in entry.split(";")]
        media = parts[0].lower()
        params = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        as_kind, group, version = params.get("as"), params.get("g"), params.get("v")
        if media in ("application/json", "application/*", "*/*", "application/yaml"):
            if as_kind is None:
                return Rendering("object", yaml=media == "application/yaml")
            if group == "meta.k8s.io" and version in ("v1", "v1beta1"):
                if as_kind == "Table":
                    return Rendering("Table", f"meta.k8s.io/{version}", yaml=media == "application/yaml")
                if as_kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
                    return Rendering("PartialObjectMetadata", f"meta.k8s.io/{version}", yaml=media == "application/yaml")
    raise errors.not_acceptable(_REPRESENTATIONS + (_STREAMS if collection else []))


def _dry_run_causes(values: list[str]) -> list[errors.Cause]:
    """ValidateDryRun: only "All"; the value is rendered as a JSON list (field.NotSupported of the []string)."""
    if all(v == "All" for v in values):
        return []
    listed = ",".join(orjson.dumps(v).decode() for v in values)
    return [errors.Cause("dryRun", "FieldValueNotSupported", f'Unsupported value: [{listed}]: supported values: "All"')]


def _validate_watch_options(send_initial: str | None, match: str) -> None:
    """ValidateListOptions for a watch: resourceVersionMatch only with sendInitialEvents, and then
    only NotOlderThan."""
    causes: list[errors.Cause] = []
    if send_initial is not None and match != "NotOlderThan":
        causes.append(errors.forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
    elif send_initial is None and match:
        detail = "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
        causes.append(errors.forbidden("resourceVersionMatch", detail))
    if match and match != "NotOlderThan":
        causes.append(errors.not_supported("resourceVersionMatch", match, ["NotOlderThan"]))
    if causes:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", causes)


def _list_items(resource: ResourceType, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items as a list carries them: a typed (built-in) list's items have no apiVersion/kind, an
    unstructured (custom resource) list's items keep theirs."""
    if resource.is_custom:
        return items
    return [{k: v for k, v in item.items() if k != "apiVersion" and k != "kind"} for item in items]


def _with_body_dry_run(opts: WriteOptions, options: dict[str, Any], *, from_body: bool) -> WriteOptions:
    """A DELETE's dryRun as kube-apiserver reads it: from the DeleteOptions body when there is one (kubectl
    and client libraries send it there: ``kubectl delete --dry-run=server``, ``V1DeleteOptions(dry_run=["All"])``),
    and then the query's ``dryRun`` is ignored like every other query option; from the query otherwise."""
    dry_run = bool(options.get("dryRun")) if from_body else opts.dry_run
    if dry_run == opts.dry_run:
        return opts
    return WriteOptions(opts.manager, dry_run, opts.field_validation, opts.subresource)


def _boolean(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


def _int_param(request: web.Request, name: str) -> int:
    raw = request.query.get(name, "")
    if not raw:
        return 0
    try:
        return int(raw)
    except ValueError as e:  # the query parameter codec's strconv error, verbatim
        raise errors.bad_request(f'strconv.ParseInt: parsing "{raw}": invalid syntax') from e

"""The ``/scale`` subresource: an ``autoscaling/v1`` Scale view of a Deployment or a custom resource.

A Deployment's replicas live at ``spec.replicas`` and its selector is its label selector; a custom
resource's come from its CRD's ``subresources.scale`` paths (``ResourceType.scale_paths``). Writes
through ``/scale`` change only the replicas, as an update of the parent recorded under the ``scale``
subresource in managedFields (so a later apply that sets ``spec.replicas`` conflicts with
"...with subresource scale"). Called by ``serving/``.
"""

from __future__ import annotations

from typing import Any

import orjson

from devcluster import errors
from devcluster.patching import PatchError, json_patch, merge_patch
from devcluster.resources import ResourceType
from devcluster.selectors import label_selector_from_dict
from devcluster.store import Store
from devcluster.writing import JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, WriteOptions, Writer, copy

_PATCH_TYPES = [JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH]


def _path(path: str) -> list[str]:
    return [p for p in path.split(".") if p]


def _read(obj: dict[str, Any], path: str) -> Any:
    value: Any = obj
    for part in _path(path):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _existing(store: Store, resource: ResourceType, namespace: str, name: str) -> dict[str, Any]:
    obj = store.get(resource.storage_key, namespace, name)
    if obj is None:
        raise errors.not_found(resource.plural, resource.group, name)
    return obj


def scale_of(resource: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The Scale of ``obj``."""
    meta = obj["metadata"]
    spec_path, status_path, selector_path = resource.scale_paths
    if resource.is_custom:
        selector = _read(obj, selector_path) if selector_path else None
        shown = selector if isinstance(selector, str) else ""
    else:
        shown = str(label_selector_from_dict((obj.get("spec") or {}).get("selector")))
    replicas = _read(obj, spec_path)
    status: dict[str, Any] = {"replicas": _read(obj, status_path) or 0}
    if shown:
        status["selector"] = shown
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta},
        "spec": {"replicas": replicas if isinstance(replicas, int) else 0},
        "status": status,
    }


def read_scale(store: Store, resource: ResourceType, namespace: str, name: str) -> dict[str, Any]:
    return scale_of(resource, _existing(store, resource, namespace, name))


def update_scale(writer: Writer, resource: ResourceType, namespace: str, name: str, body: Any, opts: WriteOptions) -> dict[str, Any]:
    """PUT ``/scale``: set the parent's replicas from ``body`` (a Scale)."""
    if isinstance(body, dict) and (body.get("metadata") or {}).get("name") not in (None, name):
        raise errors.bad_request(f"the name of the object ({body['metadata']['name']}) does not match the name on the URL ({name})")
    replicas = ((body or {}).get("spec") or {}).get("replicas") if isinstance(body, dict) else None
    spec_path = resource.scale_paths[0]
    if not isinstance(replicas, int) or replicas < 0:
        if resource.is_custom:
            shown = orjson.dumps(replicas).decode()
            cause = errors.Cause(spec_path, "FieldValueInvalid", f"Invalid value: {shown}: should be a non-negative integer")
            raise errors.invalid(resource.kind, resource.group, name, [cause])
        cause = errors.invalid_value("spec.replicas", replicas, "must be greater than or equal to 0")
        raise errors.invalid("Scale", "autoscaling", name, [cause])
    obj = _existing(writer.store, resource, namespace, name)
    requested = (body.get("metadata") or {}).get("resourceVersion")
    if requested and requested != obj["metadata"]["resourceVersion"]:
        raise errors.conflict(resource.plural, resource.group, name, errors.STALE)
    new = copy(obj)
    target = new
    parts = _path(spec_path)
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = replicas
    scale_opts = WriteOptions(opts.manager, opts.dry_run, "Ignore", "scale")
    result = writer.update(resource, namespace, name, new, scale_opts)
    return scale_of(resource, result.obj)


def patch_scale(
    writer: Writer, resource: ResourceType, namespace: str, name: str, content_type: str, raw: bytes, opts: WriteOptions
) -> dict[str, Any]:
    """PATCH ``/scale`` (JSON, merge or strategic merge patch of the Scale)."""
    if content_type not in _PATCH_TYPES:
        raise errors.unsupported_media_type(content_type, _PATCH_TYPES)
    current = read_scale(writer.store, resource, namespace, name)
    try:
        patch = orjson.loads(raw)
        patched = json_patch(current, patch) if content_type == JSON_PATCH else merge_patch(current, patch)
    except orjson.JSONDecodeError as e:
        raise errors.bad_request("invalid JSON patch") from e
    except PatchError as e:
        raise errors.bad_request(e.message) from e
    return update_scale(writer, resource, namespace, name, patched, opts)

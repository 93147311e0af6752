"""Where kube-apiserver keeps each resource in etcd (``/registry/<prefix>/...``): the storage keys
devcluster reports where kube reports them (its prefixes differ from the resource name for a few).
"""

from __future__ import annotations

from typing import Any

import orjson
import yaml

from devcluster import errors
from devcluster.resources import ResourceType
from devcluster.schemas import prune
from devcluster.writing.options import _OBJECT_META_FIELDS, _YAML_LOADER, copy

# Where kube-apiserver keeps each built-in resource in etcd (its storage prefixes differ from the resource
# name for a few); custom resources live under ``<group>/<plural>``.
_REGISTRY_PREFIXES = {
    ("", "services"): "services/specs",
    ("networking.k8s.io", "ingresses"): "ingress",
    ("apiextensions.k8s.io", "customresourcedefinitions"): "apiextensions.k8s.io/customresourcedefinitions",
}


def _registry_prefix(resource: ResourceType) -> str:
    if resource.is_custom:
        return f"{resource.group}/{resource.plural}"
    return _REGISTRY_PREFIXES.get((resource.group, resource.plural), resource.plural)


def _check_applied_fields(config: dict[str, Any], resource: ResourceType) -> None:
    """Server-side apply converts the configuration to a typed value first: a field the CRD's schema
    does not declare fails the request with a 500, whatever fieldValidation says (structured-merge-diff)."""
    meta = config.get("metadata") or {}
    unknown = sorted([f"metadata.{k}" for k in meta if k not in _OBJECT_META_FIELDS] + prune(copy(config), resource.schema or {})[1])
    if unknown:
        where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
        raise errors.internal(
            f"failed to create typed patch object ({where}; {resource.group_version}, Kind={resource.kind}): "
            f".{unknown[0]}: field not declared in schema"
        )


def _drop_empty_metadata(meta: dict[str, Any]) -> None:
    """ObjectMeta's collections are ``omitempty``: an empty (or null) one is not stored."""
    for key in ("labels", "annotations", "finalizers", "ownerReferences"):
        if key in meta and not meta[key]:
            del meta[key]


def _set_condition(obj: dict[str, Any], condition: dict[str, Any]) -> None:
    status = obj.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != condition["type"]]
    status["conditions"] = [*conditions, condition]


def _parse_apply_body(raw: bytes) -> Any:
    """An apply body: JSON (what clients send almost always; also valid YAML) or YAML.

    Like kube-apiserver (sigs.k8s.io/yaml), JSON is read with JSON semantics; only what is not JSON
    goes through the YAML parser. Parsing JSON first is also ~100x cheaper than YAML.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return yaml.load(raw.decode("utf-8"), Loader=_YAML_LOADER)  # a safe loader (CSafeLoader/SafeLoader)
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise errors.bad_request(f"error decoding YAML: {e}") from e


def _same_but_managed_times(new: dict[str, Any], old: dict[str, Any]) -> bool:
    def untimed(obj: dict[str, Any]) -> dict[str, Any]:
        meta = dict(obj["metadata"])
        meta["managedFields"] = [{k: v for k, v in entry.items() if k != "time"} for entry in meta.get("managedFields") or ()]
        return {**obj, "metadata": meta}

    return untimed(new) == untimed(old)

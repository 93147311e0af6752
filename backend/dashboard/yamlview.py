"""The YAML view of a detail page: an object and its child resources as YAML, rendered on the server.

Called by the detail pages (:mod:`.darkroompages`, :mod:`.taskpages`, :mod:`.pgpages`), whose template
shows the entries with ``ui.yaml_panel`` (``_macros.html``) at ``<detail url>#yaml`` or ``?view=yaml``.
What is never shown: ``metadata.managedFields`` (server bookkeeping, long and useless to a reader) and
anything of a Secret — a Secret child is listed by its name only, its object is never dumped (not even
the names of its keys), whatever the caller passes. PyYAML ``safe_dump``, keys in the server's order.

A child the API's cache holds trimmed (:data:`backend.core.trimming.TRIMMED`: a Deployment without its pod template...)
is read again, whole, from the API server as the person (:func:`whole`), so the YAML shown is the object as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml
from flask import request

from backend.core.trimming import TRIMMED
from cluster import ClusterError, thaw
from cluster.acting import ActingClient
from cluster.bodies import strip_managed_fields

SECRET_NOTE = "a Secret; its content is never shown here"
TRIMMED_KINDS = {resource.kind: resource for resource in TRIMMED}


def text(obj: Mapping[str, Any]) -> str | None:
    """``obj`` as YAML without ``metadata.managedFields``; None for a Secret (never dumped)."""
    if obj.get("kind") == "Secret":
        return None
    shown = strip_managed_fields(thaw(obj))  # the cache's frozen mappings as plain dicts and lists, for safe_dump
    return yaml.safe_dump(shown, sort_keys=False, allow_unicode=True, default_flow_style=False)


def entries(obj: Mapping[str, Any], children: Iterable[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The panel's entries: the object, then each child that exists and is its own (``child["object"]``)."""
    kind, name = obj.get("kind", ""), obj["metadata"]["name"]
    found = [{"id": "yaml-object", "kind": kind, "title": f"{kind} {name}", "text": text(obj)}]
    for index, child in enumerate(children):
        title = f"{child['kind']} {child['name']}"
        if child["kind"] == "Secret":
            found.append({"id": f"yaml-child-{index}", "kind": "Secret", "title": title, "text": None, "note": SECRET_NOTE})
        elif child.get("object") is not None:
            found.append({"id": f"yaml-child-{index}", "kind": child["kind"], "title": title, "text": text(child["object"])})
        elif child.get("note"):
            found.append({"id": f"yaml-child-{index}", "kind": child["kind"], "title": title, "text": None, "note": child["note"]})
    return found


def whole(client: ActingClient, children: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``children`` with each object the cache holds trimmed read again from the API server as the person; one that
    cannot be read now (gone, refused) is shown by its name with why."""
    found: list[Mapping[str, Any]] = []
    for child in children:
        obj, resource = child.get("object"), TRIMMED_KINDS.get(str(child.get("kind")))
        if obj is None or resource is None:
            found.append(child)
            continue
        meta = obj["metadata"]
        try:
            found.append({**child, "object": client.get(resource, meta["name"], namespace=meta.get("namespace"), fresh=True)})
        except ClusterError as e:
            found.append({**child, "object": None, "note": f"could not read it: {e.message}"})
    return found


def context(obj: Mapping[str, Any], children: Iterable[Mapping[str, Any]] = (), *, client: ActingClient | None = None) -> dict[str, Any]:
    """The detail template's YAML context: entries, whether ``?view=yaml`` opens the panel, where Close goes. With
    ``client``, trimmed children are read whole first (:func:`whole`)."""
    shown = whole(client, children) if client is not None else children
    return {"yaml_entries": entries(obj, shown), "yaml_open": request.args.get("view") == "yaml", "yaml_close": request.path}

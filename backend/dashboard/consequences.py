"""What deleting one object takes with it, said from that object's state — the text of every delete confirmation.

Used by the templates (global ``deletes_with(kind, obj)``, :func:`install`): a detail page's Delete… dialog and each
list row's (the row's Delete… button carries its sentence, ``data-note``, and static/dialogs.js puts it in the list's
one dialog). One sentence per object, never one per kind: what goes depends on the object.

- **Darkroom**: its Deployment, Service, Ingress and ConfigMap always go. S3 keys stored through the API live in the
  Secret ``<name>-s3-credentials``, owned by the Darkroom: they go too. A Secret of the user's that the spec only
  names is never deleted, and the dialog says it stays. A WebFolder Darkroom, or an S3 one reading a public bucket,
  has no credentials to mention.
- **Postgresql**: its StatefulSet, Services and ConfigMap go. With ``deletionPolicy: Delete`` the data volume and the
  password Secret the reconciler keeps with it go too; with ``Retain`` (the default) both stay, and a Postgresql of
  the same name would run on that data with that password (:mod:`kinds.postgresqls`). A ``passwordSecretRef`` names
  a Secret of the user's: it stays either way.
- **Task**: it and its lifecycle go; its Events expire on their own.

The sentences are plain text (the templates escape them); the object's names are part of them, so the dialog names
the very Secret and volume.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint

from kinds import postgresqls as pg_kind


def darkroom(obj: Mapping[str, Any]) -> str:
    """What goes with a Darkroom (``obj``: the friendly Darkroom, :func:`backend.core.kinds.darkrooms.to_friendly`)."""
    children = "Its Deployment, Service, Ingress and ConfigMap go with it"
    secret = (obj.get("source") or {}).get("credentialsSecret")
    if not secret:
        return children + "."
    if secret.get("owned"):
        return f"{children}, and so do the S3 credentials stored for it (Secret {secret['name']})."
    return f"{children}. Your Secret {secret['name']}, which holds its S3 credentials, stays."


def postgresql(obj: Mapping[str, Any]) -> str:
    """What goes with a Postgresql (``obj``: the friendly Postgresql)."""
    name = str(obj.get("name") or "")
    volume = (((obj.get("status") or {}).get("dataVolume")) or {}).get("claim") or pg_kind.claim_name(name)
    ref = obj.get("passwordSecretRef")
    parts = ["Its StatefulSet, Services and ConfigMap go with it."]
    if obj.get("deletionPolicy") == "Delete":
        if ref:
            parts.append(f"Its data volume ({volume}) is deleted too (deletion policy Delete).")
        else:
            secret = pg_kind.password_secret_name(name)
            parts.append(f"Its data volume ({volume}) and its password Secret ({secret}) are deleted too (deletion policy Delete).")
    elif ref:
        parts.append(f"Its data volume ({volume}) stays (deletion policy Retain): a database of the same name would run on that data.")
    else:
        secret = pg_kind.password_secret_name(name)
        parts.append(
            f"Its data volume ({volume}) and its password Secret ({secret}) stay (deletion policy Retain): a database of the"
            " same name would run on that data, with that password."
        )
    if ref:
        parts.append(f"Your Secret {ref.get('name')}, which holds its password, stays.")
    return " ".join(parts)


def task(_obj: Mapping[str, Any]) -> str:
    return "It and its lifecycle go; its Events expire on their own."


BY_KIND = {"Darkroom": darkroom, "Postgresql": postgresql, "Task": task}


def deletes_with(kind: str, obj: Mapping[str, Any]) -> str:
    """The sentence of ``kind``'s delete confirmation for ``obj``."""
    return BY_KIND[kind](obj)


def install(blueprint: Blueprint) -> None:
    blueprint.add_app_template_global(deletes_with, "deletes_with")

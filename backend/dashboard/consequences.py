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
the very Secret and volume. :func:`of_many` says the same of a bulk action's selection in one sentence, counting the
objects each case applies to ("3 Darkrooms, with their Deployments, Services, Ingresses and ConfigMaps; 1 with stored
S3 credentials"), from the same facts (:mod:`.bulk`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flask import Blueprint

from kinds import postgresqls as pg_kind

DARKROOM_CHILDREN = ("Deployment", "Service", "Ingress", "ConfigMap")
POSTGRESQL_CHILDREN = ("StatefulSet", "Services", "ConfigMap")


def listed(words: Sequence[str]) -> str:
    """``a, b and c``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _secret_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    secret: Mapping[str, Any] | None = (obj.get("source") or {}).get("credentialsSecret")
    return secret or None


def darkroom(obj: Mapping[str, Any]) -> str:
    """What goes with a Darkroom (``obj``: the friendly Darkroom, :func:`backend.core.kinds.darkrooms.to_friendly`)."""
    children = f"Its {listed(DARKROOM_CHILDREN)} go with it"
    secret = _secret_of(obj)
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
    parts = [f"Its {listed(POSTGRESQL_CHILDREN)} go with it."]
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


def counted(count: int, singular: str, plural: str = "") -> str:
    """``1 Darkroom``, ``3 Darkrooms``."""
    return f"{count:,} {singular if count == 1 else plural or singular + 's'}"


def _plural(word: str) -> str:
    """``Ingresses``, ``Deployments``; ``Services`` as it is."""
    return word + "es" if word.endswith("ss") else word if word.endswith("s") else word + "s"


def _cases(objs: Sequence[Mapping[str, Any]], cases: Sequence[tuple[str, Callable[[Mapping[str, Any]], bool]]]) -> list[str]:
    """``N <case>`` for each case that applies to N > 0 of ``objs``."""
    found = ((sum(1 for obj in objs if applies(obj)), text) for text, applies in cases)
    return [f"{number:,} {text}" for number, text in found if number]


def _owned_secret(obj: Mapping[str, Any]) -> bool | None:
    """Whether a Darkroom's credentials Secret is its own (None: it names none)."""
    secret = _secret_of(obj)
    return None if secret is None else bool(secret.get("owned"))


def _darkrooms(objs: Sequence[Mapping[str, Any]]) -> list[str]:
    return _cases(
        objs,
        (
            ("with stored S3 credentials (their Secret goes too)", lambda o: _owned_secret(o) is True),
            ("naming your own Secret of S3 credentials, which stays", lambda o: _owned_secret(o) is False),
        ),
    )


def _postgresqls(objs: Sequence[Mapping[str, Any]]) -> list[str]:
    return _cases(
        objs,
        (
            ("with deletion policy Delete: its data volume goes too", lambda o: o.get("deletionPolicy") == "Delete"),
            ("with deletion policy Retain: its data volume and password stay", lambda o: o.get("deletionPolicy") != "Delete"),
            ("naming your own password Secret, which stays", lambda o: bool(o.get("passwordSecretRef"))),
        ),
    )


MANY: Mapping[str, tuple[str, Callable[[Sequence[Mapping[str, Any]]], list[str]]]] = {
    "Darkroom": (f"with their {listed([_plural(c) for c in DARKROOM_CHILDREN])}", _darkrooms),
    "Postgresql": (f"with their {listed([_plural(c) for c in POSTGRESQL_CHILDREN])}", _postgresqls),
    "Task": ("with their lifecycle; their Events expire on their own", lambda _objs: []),
}


def of_many(kind: str, objs: Sequence[Mapping[str, Any]]) -> str:
    """What deleting all of ``objs`` (friendly objects of ``kind``) takes with them, in one sentence."""
    children, cases = MANY[kind]
    return "; ".join((f"{counted(len(objs), kind)}, {children}", *cases(objs))) + "."


def install(blueprint: Blueprint) -> None:
    blueprint.add_app_template_global(deletes_with, "deletes_with")

"""Deciding whether a child needs a server-side apply: "does the live object already say everything we would apply?"

Called by :mod:`darkroom_operator.darkrooms` for every child on every reconcile, with the desired
body from :mod:`darkroom_operator.darkroomchildren` and the live object from the informer cache. Applying
only when this says no is what makes a resync of converged objects issue zero write requests.

The rule has two parts.

1. **Containment** (:func:`contains`): every field of the desired body is present in the live object
   with an equal value. Dicts: each desired key is present and contained recursively; keys only the
   live object has (server defaults such as ``clusterIP``, ``terminationMessagePath``,
   ``revisionHistoryLimit``, other managers' labels) are fine. Lists: the same length and each
   element contained in the element at the same position — so an entry someone deleted, added or
   reordered in a list we write (env, ports, rules, ownerReferences) counts as drift. Scalars:
   equal (``1`` and ``1.0`` are equal, ``True`` and ``1`` are not). This catches every edit of a
   field we own (image, port, ConfigMap value, replicas).

2. **Fingerprint** (:func:`stamp`): containment cannot see a field we *stopped* wanting — a
   ConfigMap key of a source we switched away from, TLS turned off, an ``ingressClassName`` no
   longer configured — because the live object still has it and nothing in the desired body says
   otherwise. Server-side apply removes such fields (we own them and no longer apply them) but
   only if we apply. So every desired body carries the annotation :data:`APPLIED_DIGEST`: a digest
   of the body itself. Any change of what we want changes the digest, the live annotation no
   longer matches, containment fails, and the apply both sets the new fields and drops the old.

3. **Repair** (:func:`overlay`): server-side apply cannot remove list entries another field
   manager owns. ``kubectl edit`` of a Service port 80 → 8080 leaves the 8080 entry owned by
   ``kubectl-edit``; our forced apply brings 80 back but 8080 stays, and rule 1 (same length) still
   sees drift. The reconciler then replaces the object (PUT, optimistic concurrency) with
   ``overlay(live, desired)``: the live object with our dicts merged in and our lists taken
   wholesale, which removes the foreign entries. Entries another manager adds to maps (labels,
   ConfigMap keys) are not drift and are left alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

APPLIED_DIGEST = "deployments.example.com/applied-digest"


def digest(value: Any, *, length: int = 16) -> str:
    """A short, stable hex digest of a JSON-serialisable value (key order does not matter)."""
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()[:length]


def stamp(body: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` (not modified) plus the :data:`APPLIED_DIGEST` annotation, a digest of ``body`` itself."""
    meta = dict(body.get("metadata") or {})
    annotations = {k: v for k, v in (meta.pop("annotations", None) or {}).items() if k != APPLIED_DIGEST}
    if annotations:
        meta["annotations"] = annotations
    unstamped = {**body, "metadata": meta}
    return {**unstamped, "metadata": {**meta, "annotations": {**annotations, APPLIED_DIGEST: digest(unstamped)}}}


def contains(live: Any, desired: Any) -> bool:
    """Whether ``live`` already holds every field of ``desired`` with the same value (rule 1 above).

    Runs on every child of every reconcile: the exact types JSON gives (and the cache's dicts) are tested first, without
    the ``Mapping`` ABC's instance check; other mappings and sequences take the general path, by the same rule."""
    kind = type(desired)
    if kind is str or kind is int or kind is float or desired is None:
        return not isinstance(live, bool) and bool(live == desired)
    if isinstance(desired, dict) and isinstance(live, dict):
        for key, value in desired.items():  # noqa: SIM110  (loops: all() over a generator costs a frame per element)
            if key not in live or not contains(live[key], value):
                return False
        return True
    if isinstance(desired, list | tuple):
        if not isinstance(live, list | tuple) or len(live) != len(desired):
            return False
        for have, want in zip(live, desired, strict=True):  # noqa: SIM110  (as above)
            if not contains(have, want):
                return False
        return True
    if isinstance(desired, Mapping):
        if not isinstance(live, Mapping):
            return False
        return all(key in live and contains(live[key], value) for key, value in desired.items())
    if isinstance(desired, bool) or isinstance(live, bool):
        return type(desired) is type(live) and desired == live
    return bool(live == desired)


def up_to_date(live: Mapping[str, Any] | None, desired: Mapping[str, Any]) -> bool:
    """Whether applying ``desired`` (a :func:`stamp` ed body) would change nothing we care about."""
    return live is not None and contains(live, desired)


def overlay(live: Any, desired: Any) -> Any:
    """``live`` with ``desired`` written over it: dicts merged recursively, lists and scalars replaced by ``desired``.

    Lists are replaced wholesale (elements lose their server defaults, which the server fills in
    again) because element-wise merging could pair the wrong entries of a reordered list.
    """
    if isinstance(desired, Mapping) and isinstance(live, Mapping):
        merged = dict(live)
        for key, value in desired.items():
            merged[key] = overlay(live[key], value) if key in live else value
        return merged
    return desired


def differences(live: Any, desired: Any, path: str = "") -> list[str]:
    """Paths where ``live`` does not contain ``desired`` (for logs and test messages; same rule as :func:`contains`)."""
    if isinstance(desired, Mapping) and isinstance(live, Mapping):
        found: list[str] = []
        for key, value in desired.items():
            where = f"{path}.{key}" if path else str(key)
            found += differences(live[key], value, where) if key in live else [where]
        return found
    if isinstance(desired, list | tuple) and isinstance(live, list | tuple) and len(live) == len(desired):
        return [p for i, (have, want) in enumerate(zip(live, desired, strict=True)) for p in differences(have, want, f"{path}[{i}]")]
    return [] if contains(live, desired) else [path or "."]

"""Read-only object bodies: the form in which the cache stores and hands out Kubernetes objects.

Informers parse raw API responses with orjson, drop ``metadata.managedFields`` (large, and only the
server uses it) and :func:`freeze` the result: dicts become :class:`FrozenDict` (a ``dict`` subclass
whose mutating methods raise ``TypeError``) and lists become tuples. The cache can therefore hand
the same object to every reader with no copying — which is what makes cached lists cheap — while no
caller can change what other readers see. Callers that want to edit an object call :func:`thaw`
(or ``copy.deepcopy``) to get plain, mutable dicts and lists. Both serialise with orjson and json. Equal label
maps are one shared frozen map in the cache (:func:`share_labels`). A new version of a cached object keeps the frozen
parts of the version it replaces that did not change (:func:`freeze_over`): a status update freezes the status.
:func:`thaw` is :func:`mergepatch.copy_json` (the product's one deep copy of a JSON value) under the name
the cache's callers know.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, NoReturn

import orjson

from mergepatch import copy_json

# Short strings repeat across objects (apiVersion, kind, namespace, label values): interning shares them.
_INTERN_MAX_LEN = 64


class FrozenDict(dict[str, Any]):
    """A dict that refuses mutation. Equal to, and serialised like, the plain dict it wraps."""

    __slots__ = ()

    def _readonly(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("cached Kubernetes objects are read-only; use cluster.bodies.thaw(obj) for a mutable copy")

    __setitem__ = _readonly
    __delitem__ = _readonly
    __ior__ = _readonly
    clear = _readonly
    pop = _readonly
    popitem = _readonly
    setdefault = _readonly
    update = _readonly

    def __hash__(self) -> int:  # type: ignore[override]
        raise TypeError("unhashable type: 'FrozenDict'")

    def __copy__(self) -> FrozenDict:
        return self  # immutable: a shallow copy is the object itself

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        thawed: dict[str, Any] = thaw(self)  # a deep copy is for editing: hand out plain, mutable containers
        return thawed

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


def freeze(value: Any) -> Any:
    """``value`` with every dict made a :class:`FrozenDict` and every list a tuple (deep).

    Runs on every object an informer receives: the exact types JSON parsing gives are tested first (by identity,
    without isinstance's subclass walk); anything else (subclasses, tuples) takes the general path below."""
    kind = type(value)
    if kind is str:
        return sys.intern(value) if len(value) <= _INTERN_MAX_LEN else value
    if kind is dict:
        return FrozenDict({(sys.intern(k) if len(k) <= _INTERN_MAX_LEN else k): freeze(v) for k, v in value.items()})
    if kind is list:
        return tuple([freeze(v) for v in value])
    if kind is int or kind is bool or kind is float or value is None:
        return value
    return _freeze_other(value)


def freeze_over(value: dict[str, Any], previous: Mapping[str, Any] | None) -> FrozenDict:
    """``freeze(value)``, reusing the frozen parts of ``previous`` (the cached version ``value`` replaces) that are equal:
    each top-level value and each value in ``metadata``, compared as JSON text. Writing a part as text costs about a
    tenth of freezing it, so a Deployment whose status the controller manager updated keeps its frozen spec, labels and
    owner references, and freezes its status and resourceVersion."""
    if previous is None:
        frozen: FrozenDict = freeze(value)
        return frozen
    parts: dict[str, Any] = {}
    for key, part in value.items():
        if key == "metadata" and type(part) is dict and isinstance(previous.get(key), Mapping):
            parts[_intern(key)] = freeze_over(part, previous[key])
        else:
            parts[_intern(key)] = _reused(part, previous.get(key))
    return FrozenDict(parts)


def _reused(part: Any, before: Any) -> Any:
    """``before`` when it is the frozen form of ``part`` (a container written as the same JSON text), else ``part`` frozen."""
    if before is not None and (type(part) is dict or type(part) is list) and orjson.dumps(part) == orjson.dumps(before):
        return before
    return freeze(part)


def _freeze_other(value: Any) -> Any:
    if type(value) is FrozenDict:
        return value  # made by freeze (a shared label map, :func:`share_labels`): frozen all the way down
    if isinstance(value, dict):
        return FrozenDict({_intern(k): freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, str):
        return _intern(value)
    return value


def _intern(value: str) -> str:
    return sys.intern(value) if len(value) <= _INTERN_MAX_LEN else value


thaw = copy_json
"""A deep, mutable copy of a (frozen) body: plain dicts and lists all the way down (``FrozenDict`` is a dict)."""


# Equal label maps, frozen once: most objects share their label set with others (a Deployment's Pods, Darkrooms of one
# team), so the cache keeps one map per set (a map of two labels costs 184 bytes) and a label selector over the cache
# reads a few maps, not one per object. Bounded: when full the table starts again, so label sets that come and go (a
# Job's, a rollout's pod-template-hash) cannot crowd out the ones in use; objects keep the maps they hold.
_LABEL_SETS: dict[frozenset[tuple[str, str]], FrozenDict] = {}
LABEL_SETS_MAX = 16_384


def share_labels(obj: dict[str, Any]) -> dict[str, Any]:
    """Put the shared frozen copy of its ``metadata.labels`` in ``obj`` (before freezing, in place) and return it."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return obj
    labels = meta.get("labels")
    if type(labels) is not dict or not labels:
        return obj
    try:
        key = frozenset(labels.items())
    except TypeError:  # a value that is not a string: not a label map the server would serve; left to freeze
        return obj
    shared = _LABEL_SETS.get(key)
    if shared is None:
        shared = freeze(labels)
        if len(_LABEL_SETS) >= LABEL_SETS_MAX:
            _LABEL_SETS.clear()
        _LABEL_SETS[key] = shared
    meta["labels"] = shared
    return obj


def strip_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """Drop ``metadata.managedFields`` in place (before freezing) and return the object."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


def object_key(obj: Mapping[str, Any]) -> str:
    """The cache key: ``namespace/name``, or ``name`` for cluster-scoped objects (client-go's MetaNamespaceKey)."""
    meta = obj["metadata"]
    namespace = meta.get("namespace")
    return f"{namespace}/{meta['name']}" if namespace else str(meta["name"])


NO_LABELS: Mapping[str, str] = FrozenDict()


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """A stored object's label map (:data:`NO_LABELS` when it has none)."""
    found: Mapping[str, str] | None = obj["metadata"].get("labels")
    return found or NO_LABELS


def resource_version(obj: Mapping[str, Any]) -> str:
    return str(obj.get("metadata", {}).get("resourceVersion", ""))


def version_at_least(version: str, target: str) -> bool:
    """Whether resourceVersion ``version`` is ``target`` or newer.

    The API conventions call resourceVersions opaque; etcd-backed servers (and devcluster) issue
    increasing integers, and read-your-writes needs an order, so integers are compared as such.
    Anything else only counts as reached when equal.
    """
    if version == target:
        return True
    try:
        return int(version) >= int(target)
    except ValueError:
        return False

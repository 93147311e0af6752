"""Sort orders of cached objects, kept up to date as objects change, so that a sorted list costs no sort.

An :class:`Order` names a sort value (object → a comparable value, or None for none) and a direction. The rule is the
same everywhere: by value, ascending or (``reverse``) descending; ties in key (namespace/name) order both ways; objects
without a value last, in key order.

A :class:`cluster.stores.Store` keeps one :class:`SortedRows` per order name it has been asked for: made at the first
list in that order (one sort), then updated on each change by a binary search, a removal and an insertion, so a list
in that order is a copy of references (about as cheap as the key order's list), not an O(n log n) sort with a Python
key function per object (at 100,000 Darkrooms: ~0.5 s to sort by state). :func:`arrange` sorts objects that no store
keeps (a list read from the API server) by the same rule. The API's kinds declare their orders
(:attr:`backend.core.kinds.base.Kind.sorts`).

A value function must depend on the object alone (not on the clock): the row of a changed object is found again
through its previous version's value; a value that changed anyway is found by a linear search, never left behind.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, TypeVar

from cluster.bodies import object_key

Obj = TypeVar("Obj", bound=Mapping[str, Any])
ValueFunction = Callable[[Mapping[str, Any]], Any]
Row = tuple[bool, Any, str, Any]  # (no value, the value or "", key, the object): sorted, the order ascending
_VALUE = itemgetter(1)
_OBJECT = itemgetter(3)
_NO_VALUE_YET = (True,)  # sorts before every row without a value and after every row with one


@dataclass(frozen=True)
class Order:
    """A sort: ``name`` identifies the order among a store's (one value function per name), ``value`` gives each object's
    sort value (None: it has none), ``reverse`` sorts descending."""

    name: str
    value: ValueFunction
    reverse: bool = False


def row(value: ValueFunction, key: str, obj: Any) -> Row:
    found = value(obj)
    return (found is None, "" if found is None else found, key, obj)


def in_order(rows: Sequence[Row], reverse: bool) -> list[Any]:
    """The objects of ascending ``rows`` in the order's direction (ties in key order, no value last)."""
    if not reverse:
        return list(map(_OBJECT, rows))
    valued = bisect.bisect_left(rows, _NO_VALUE_YET)
    # a stable sort by value alone, descending, keeps the rows' key order among equal values; the rows are already
    # sorted the other way, so this is a linear pass in C
    descending = sorted(rows[:valued], key=_VALUE, reverse=True)
    return list(map(_OBJECT, descending)) + list(map(_OBJECT, rows[valued:]))


def arrange(objects: Iterable[Obj], order: Order) -> list[Obj]:
    """``objects`` sorted by ``order`` (for objects no store keeps in that order)."""
    return in_order(sorted(row(order.value, object_key(obj), obj) for obj in objects), order.reverse)


class SortedRows:
    """One order's rows of a store's objects, ascending. Not thread-safe: the store holds its lock around every call."""

    def __init__(self, value: ValueFunction, objects: Mapping[str, Any]) -> None:
        self.value = value
        self.rows: list[Row] = sorted(row(value, key, obj) for key, obj in objects.items())

    def add(self, key: str, obj: Any) -> None:
        bisect.insort(self.rows, row(self.value, key, obj))

    def remove(self, key: str, obj: Any) -> None:
        """Remove the row of ``key``, whose stored version is ``obj``."""
        at = bisect.bisect_left(self.rows, row(self.value, key, obj)[:3])  # (no value, value, key) comes just before its row
        if at < len(self.rows) and self.rows[at][2] == key:
            del self.rows[at]
            return
        for at, (_, _, other, _) in enumerate(self.rows):  # its value changed although the object did not
            if other == key:
                del self.rows[at]
                return

    def objects(
        self, reverse: bool, *, namespace: str | None = None, namespaces: Collection[str] | None = None, name_contains: str = ""
    ) -> list[Any]:
        """Every object in this order (``namespace``: only that namespace's; ``namespaces``, ``name_contains``: see
        :func:`chosen`)."""
        rows: Sequence[Row] = self.rows
        if namespace is not None:
            prefix = namespace + "/"
            rows = [r for r in rows if r[2].startswith(prefix)]
        if namespaces is not None or name_contains:
            wanted = set(chosen([r[2] for r in rows], namespaces=namespaces, name_contains=name_contains))
            rows = [r for r in rows if r[2] in wanted]
        return in_order(rows, reverse)


def name_has(key: str, part: str) -> bool:
    """Whether the name in ``key`` (``namespace/name`` or ``name``) contains ``part``."""
    return part in key.rpartition("/")[2]


def chosen(keys: list[str], *, namespaces: Collection[str] | None = None, name_contains: str = "") -> list[str]:
    """The ``keys`` (``namespace/name``) in one of ``namespaces`` (None: any) whose name contains ``name_contains``."""
    if namespaces is not None:
        keys = [k for k in keys if k.partition("/")[0] in namespaces]
    if name_contains:
        keys = [k for k in keys if name_contains in k and name_has(k, name_contains)]  # the whole key first: most fail there
    return keys

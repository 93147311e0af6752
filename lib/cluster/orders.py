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
# (no value, the value or "", key): sorted, the order ascending. A row is atoms only (str, number, datetime), which
# CPython's garbage collector stops tracking; the objects are in a list beside the rows (one tracked container), where
# 100,000 rows holding their objects made full collections of 80 ms during reads at 100,000 Darkrooms.
Row = tuple[bool, Any, str]
_VALUE = itemgetter(1)
_KEY = itemgetter(2)
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
    return (found is None, "" if found is None else found, key)


def in_order(rows: Sequence[Row], held: Sequence[Obj], reverse: bool) -> list[Obj]:
    """The objects ``held`` beside ascending ``rows``, in the order's direction (ties in key order, no value last)."""
    if not reverse:
        return list(held)
    valued = bisect.bisect_left(rows, _NO_VALUE_YET)
    # a stable sort by value alone, descending, keeps the rows' key order among equal values; the rows are already
    # sorted the other way, so this is a linear pass in C
    # (positions, not (value, object) pairs: ints are not tracked by the garbage collector, 100,000 new tuples are)
    values = list(map(_VALUE, rows[:valued]))
    descending = sorted(range(valued), key=values.__getitem__, reverse=True)
    return list(map(held.__getitem__, descending)) + list(held[valued:])


def arrange(objects: Iterable[Obj], order: Order) -> list[Obj]:
    """``objects`` sorted by ``order`` (for objects no store keeps in that order)."""
    pairs = sorted((row(order.value, object_key(obj), obj), obj) for obj in objects)  # rows are unique: objects never compared
    return in_order([r for r, _ in pairs], [obj for _, obj in pairs], order.reverse)


class SortedRows:
    """One order's rows of a store's objects, ascending, and the objects in the same order. Not thread-safe: the store
    holds its lock around every call."""

    def __init__(self, value: ValueFunction, objects: Mapping[str, Any]) -> None:
        self.value = value
        pairs = sorted((row(value, key, obj), obj) for key, obj in objects.items())
        self.rows: list[Row] = [r for r, _ in pairs]
        self.held: list[Any] = [obj for _, obj in pairs]

    def add(self, key: str, obj: Any) -> None:
        new = row(self.value, key, obj)
        at = bisect.bisect_left(self.rows, new)
        self.rows.insert(at, new)
        self.held.insert(at, obj)

    def remove(self, key: str, obj: Any) -> None:
        """Remove the row of ``key``, whose stored version is ``obj``."""
        at = bisect.bisect_left(self.rows, row(self.value, key, obj))
        if not (at < len(self.rows) and self.rows[at][2] == key):
            # its value changed although the object did not
            at = next((i for i, (_, _, other) in enumerate(self.rows) if other == key), -1)
            if at < 0:
                return
        del self.rows[at]
        del self.held[at]

    def objects(
        self, reverse: bool, *, namespace: str | None = None, namespaces: Collection[str] | None = None, name_contains: str = ""
    ) -> list[Any]:
        """Every object in this order (``namespace``: only that namespace's; ``namespaces``, ``name_contains``: as
        :func:`chosen` keeps keys)."""
        if namespace is None and namespaces is None and not name_contains:
            return in_order(self.rows, self.held, reverse)
        prefix = "" if namespace is None else namespace + "/"
        at = positions(list(map(_KEY, self.rows)), prefix=prefix, namespaces=namespaces, name_contains=name_contains)
        return in_order([self.rows[i] for i in at], [self.held[i] for i in at], reverse)


def name_has(key: str, part: str) -> bool:
    """Whether the name in ``key`` (``namespace/name`` or ``name``) contains ``part``."""
    return part in key.rpartition("/")[2]


def positions(keys: Sequence[str], *, prefix: str = "", namespaces: Collection[str] | None = None, name_contains: str = "") -> list[int]:
    """Where the ``keys`` (``namespace/name``) are that start with ``prefix``, lie in one of ``namespaces`` (None: any) and
    whose name contains ``name_contains``: one pass, the cheap tests first (most keys fail the name's, and the whole key
    is tested before its name is cut out)."""
    return [
        i
        for i, k in enumerate(keys)
        if k.startswith(prefix)
        and (not name_contains or (name_contains in k and name_has(k, name_contains)))
        and (namespaces is None or k.partition("/")[0] in namespaces)
    ]


def chosen(keys: list[str], *, namespaces: Collection[str] | None = None, name_contains: str = "") -> list[str]:
    """The ``keys`` (``namespace/name``) in one of ``namespaces`` (None: any) whose name contains ``name_contains``."""
    if namespaces is None and not name_contains:
        return keys
    return [keys[i] for i in positions(keys, namespaces=namespaces, name_contains=name_contains)]

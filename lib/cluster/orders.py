"""Sort orders of cached objects, kept up to date as objects change, so that a sorted list costs no sort.

An :class:`Order` names a sort value (object → a comparable value, or None for none) and a direction. The rule is the
same everywhere: by value, ascending or (``reverse``) descending; ties in key (namespace/name) order both ways; objects
without a value last, in key order.

A :class:`cluster.stores.Store` keeps one :class:`SortedRows` per order name it has been asked for: made at the first
list in that order (one sort), then updated on each change by a binary search, a removal and an insertion, so a list
in that order is a copy of references (about as cheap as the key order's list), not an O(n log n) sort with a Python
key function per object (at 100,000 Darkrooms: ~0.5 s to sort by state). A descending list is the ascending one
reversed, with each run of equal values put back in key order (:func:`descending`). :func:`arrange` sorts objects that no store
keeps (a list read from the API server) by the same rule. The API's kinds declare their orders
(:attr:`backend.core.kinds.base.Kind.sorts`).

A value function must depend on the object alone (not on the clock): the row of a changed object is found again
through its previous version's value; a value that changed anyway is found by a linear search, never left behind.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, islice
from typing import Any, TypeVar

from cluster.bodies import labels_of, object_key

Obj = TypeVar("Obj", bound=Mapping[str, Any])
Item = TypeVar("Item")
ValueFunction = Callable[[Mapping[str, Any]], Any]
KeyFilter = Callable[[str], bool]
"""Which objects a list keeps, told by their keys alone (``namespace/name``): a field selector on the metadata's name
and namespace (:meth:`cluster.fieldselectors.FieldSelector.on_keys`)."""


@dataclass(frozen=True)
class Order:
    """A sort: ``name`` identifies the order among a store's (one value function per name), ``value`` gives each object's
    sort value (None: it has none), ``reverse`` sorts descending."""

    name: str
    value: ValueFunction
    reverse: bool = False


def in_order(values: Sequence[Any], held: list[Obj], valued: int, reverse: bool) -> list[Obj]:
    """The objects ``held``, ascending by their ``values`` (the first ``valued`` of them have one) and in key order
    among equal values, in the order's direction (ties in key order, no value last)."""
    if not reverse:
        return list(held)
    out = descending(values, held, valued)
    out += held[valued:]
    return out


def descending(values: Sequence[Any], held: list[Item], count: int | None = None) -> list[Item]:
    """The first ``count`` (None: all) of ``held`` (ascending by ``values``, ties in key order) by value descending,
    ties still in key order.

    The reversed list is that order but for the runs of equal values, each of which it reverses too: those are put back
    one run at a time. Where equal neighbours are few (names) the loop walks them, where they are most (states, few
    values) it walks the runs, so it runs at most ``count / 2`` times; the rest is C, one pass over the values and one
    copy of the list (at 100,000 objects ~9 ms, where a sort by value took 20 to 28 ms: most of it is reaching 100,000
    objects spread over the heap, not the work on them)."""
    count = len(held) if count is None else count
    out = held[count - 1 :: -1] if count else []
    if count < 2:
        return out
    same = list(map(operator.eq, islice(values, 0, count - 1), islice(values, 1, count)))  # values[i] == values[i + 1]
    ties = same.count(True)
    if not ties:
        return out
    if 2 * ties <= count:
        runs: Iterable[tuple[int, int]] = _tied_runs(compress(range(count - 1), same))
    else:
        starts = [0, *compress(range(1, count), map(operator.not_, same)), count]
        runs = zip(starts, islice(starts, 1, None), strict=False)
    for start, stop in runs:
        if stop - start > 1:
            out[count - stop : count - start] = held[start:stop]  # ascending start..stop sits reversed at the mirror
    return out


def _tied_runs(tied: Iterable[int]) -> Iterable[tuple[int, int]]:
    """The runs [start, stop) of equal values, from the positions ``i`` whose value equals the next one's (ascending)."""
    start = last = -2
    for i in tied:
        if i != last + 1:
            if start >= 0:
                yield start, last + 2
            start = i
        last = i
    if start >= 0:
        yield start, last + 2


def arrange(objects: Iterable[Obj], order: Order) -> list[Obj]:
    """``objects`` sorted by ``order`` (for objects no store keeps in that order)."""
    by_key = sorted(objects, key=object_key)
    return SortedRows(order.value, [object_key(obj) for obj in by_key], by_key, list(map(labels_of, by_key))).objects(order.reverse)[0]


class SortedRows:
    """One order's rows of a store's objects: four lists side by side, ascending — each object's value (None: none),
    its key, the object and its label map (for selectors: :func:`cluster.selectors.selector_matching`); first the
    objects with a value, by value and in key order among equal values, then those without, in key order. A row costs
    four references (the value is most often the body's own string, the key the store's, the label map shared), where
    a row tuple cost 64 bytes, and no container of its own for the garbage collector to walk.

    A change finds its row by binary searches in C: the value's run among the values, then the key within the run (a
    run is in key order). Not thread-safe: the store holds its lock around every call."""

    def __init__(
        self,
        value: ValueFunction,
        keys: Sequence[str],
        held: Sequence[Any],
        labels: Sequence[Mapping[str, str]],
        *,
        values: Sequence[Any] | None = None,
    ) -> None:
        """Rows for the objects ``held`` under ``keys``, with ``labels`` (in key order, as the store keeps them): one stable
        sort. ``values``: the objects' values, when ``held`` are not the objects themselves (a packed store's texts:
        :mod:`cluster.packing`)."""
        self.value = value
        values = list(map(value, held)) if values is None else list(values)
        ranked = sorted((i for i, found in enumerate(values) if found is not None), key=values.__getitem__)  # stable: keys stay in order
        at = ranked + [i for i, found in enumerate(values) if found is None]
        self.values: list[Any] = [values[i] for i in at]
        self.keys: list[str] = [keys[i] for i in at]
        self.held: list[Any] = [held[i] for i in at]
        self.labels: list[Mapping[str, str]] = [labels[i] for i in at]
        self.valued = len(ranked)  # rows with a value: the first ones

    def _position(self, value: Any, key: str) -> int:
        """Where the row (``value``, ``key``) is or would go."""
        if value is None:
            return bisect.bisect_left(self.keys, key, self.valued)
        lo = bisect.bisect_left(self.values, value, 0, self.valued)
        hi = bisect.bisect_right(self.values, value, lo, self.valued)
        return bisect.bisect_left(self.keys, key, lo, hi)

    def add(self, key: str, obj: Any, held: Any = None) -> None:
        """A row for ``obj`` under ``key``, holding ``held`` (None: ``obj`` itself; a packed store: its text)."""
        found = self.value(obj)
        at = self._position(found, key)
        self.values.insert(at, found)
        self.keys.insert(at, key)
        self.held.insert(at, obj if held is None else held)
        self.labels.insert(at, labels_of(obj))
        if found is not None:
            self.valued += 1

    def change(self, key: str, previous: Any, obj: Any, held: Any = None) -> None:
        """Replace the row of ``key``, stored as ``previous``, by ``obj``'s (holding ``held``, as :meth:`add`): in place
        when the value is the same (most changes: a status under a name order), so nothing moves; else removed and added
        again."""
        found = self.value(obj)
        before = self.value(previous)
        if found == before:
            at = self._position(before, key)
            if at < len(self.keys) and self.keys[at] == key:
                self.values[at] = found  # the new body's value: the previous body is not kept alive by its row
                self.held[at] = obj if held is None else held
                self.labels[at] = labels_of(obj)
                return
        self.remove(key, previous)
        self.add(key, obj, held)

    def remove(self, key: str, obj: Any) -> None:
        """Remove the row of ``key``, whose stored version is ``obj``."""
        at = self._position(self.value(obj), key)
        if not (at < len(self.keys) and self.keys[at] == key):
            # its value changed although the object did not: look for the key
            try:
                at = self.keys.index(key)
            except ValueError:
                return
        if self.values[at] is not None:
            self.valued -= 1
        del self.values[at]
        del self.keys[at]
        del self.held[at]
        del self.labels[at]

    def objects(
        self,
        reverse: bool,
        *,
        namespace: str | None = None,
        namespaces: Collection[str] | None = None,
        name_contains: str = "",
        key_filter: KeyFilter | None = None,
        labelled: bool = False,
    ) -> tuple[list[Any], list[Mapping[str, str]] | None]:
        """Every object in this order (``namespace``: only that namespace's; ``namespaces``, ``name_contains``,
        ``key_filter``: as :func:`chosen` keeps keys), and (``labelled``) their label maps in the same order, else None."""
        if namespace is None and namespaces is None and not name_contains and key_filter is None:
            values, held, labels, valued = self.values, self.held, self.labels, self.valued
        else:
            prefix = "" if namespace is None else namespace + "/"
            at = positions(self.keys, prefix=prefix, namespaces=namespaces, name_contains=name_contains, key_filter=key_filter)
            valued = bisect.bisect_left(at, self.valued)
            values, held = list(map(self.values.__getitem__, at[:valued])), list(map(self.held.__getitem__, at))
            labels = list(map(self.labels.__getitem__, at)) if labelled else []
        return in_order(values, held, valued, reverse), (in_order(values, labels, valued, reverse) if labelled else None)


def name_has(key: str, part: str) -> bool:
    """Whether the name in ``key`` (``namespace/name`` or ``name``) contains ``part``."""
    return part in key.rpartition("/")[2]


def positions(
    keys: Sequence[str],
    *,
    prefix: str = "",
    namespaces: Collection[str] | None = None,
    name_contains: str = "",
    key_filter: KeyFilter | None = None,
) -> list[int]:
    """Where the ``keys`` (``namespace/name``) are that start with ``prefix``, lie in one of ``namespaces`` (None: any),
    whose name contains ``name_contains`` and that ``key_filter`` (None: any) keeps: one pass, the cheap tests first
    (most keys fail the name's, and the whole key is tested before its name is cut out)."""
    return [
        i
        for i, k in enumerate(keys)
        if k.startswith(prefix)
        and (not name_contains or (name_contains in k and name_has(k, name_contains)))
        and (namespaces is None or k.partition("/")[0] in namespaces)
        and (key_filter is None or key_filter(k))
    ]


def chosen(
    keys: list[str], *, namespaces: Collection[str] | None = None, name_contains: str = "", key_filter: KeyFilter | None = None
) -> list[str]:
    """The ``keys`` (``namespace/name``) in one of ``namespaces`` (None: any) whose name contains ``name_contains`` and
    that ``key_filter`` keeps."""
    if namespaces is None and not name_contains and key_filter is None:
        return keys
    return [keys[i] for i in positions(keys, namespaces=namespaces, name_contains=name_contains, key_filter=key_filter)]

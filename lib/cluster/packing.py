"""Packed cached objects: a store that keeps each object as its JSON text and decodes it when it is read.

A frozen body costs a dict per JSON object (a Darkroom has seven: ~1,200 bytes before a single value), where its JSON
text costs one ``bytes`` of about its length (a Darkroom without ``managedFields``: ~720 bytes). A process that keeps
many objects and reads few of them at a time — the API, which draws pages of 50 out of 100,000 Darkrooms — keeps them
packed (:class:`cluster.stores.Store` with ``packed=True``): each read decodes what it returns, each change encodes
the new version once. What a store needs of every object to answer a list without reading it (key, label map, the
values of its kept orders, its index values) is taken from the decoded object when it is stored, not from the text.
A process that reads every object it keeps, again and again (the reconciler), keeps frozen bodies.

:func:`pack` and :func:`unpack` are the two forms' converters; :class:`Bodies` is a list of stored objects handed out
without decoding any: an item is decoded when it is read, a slice is another :class:`Bodies`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import orjson

from cluster.bodies import FrozenDict, freeze, share_labels


def pack(obj: FrozenDict) -> bytes:
    """``obj``'s JSON text, in a ``bytes`` of its own length (orjson hands out its output buffer, of 4 KiB and more)."""
    return bytes(memoryview(orjson.dumps(obj)))


def unpack(packed: bytes) -> FrozenDict:
    """The frozen object ``packed`` is the text of (a new one at each call: equal, not identical), its label map the
    shared one (:func:`cluster.bodies.share_labels`: the store keeps it beside the text, and a selector tests each
    distinct map once)."""
    frozen: FrozenDict = freeze(share_labels(orjson.loads(packed)))
    return frozen


def packed_version(packed: bytes) -> str:
    """The resourceVersion in an object's text (parsed, not frozen: a relist asks it of every cached object)."""
    return str(orjson.loads(packed).get("metadata", {}).get("resourceVersion", ""))


class Bodies(Sequence[FrozenDict]):
    """Stored objects (packed, or as they are), each given out through ``open_`` when read. Two lists of the same
    stored versions are equal without decoding anything (the text of an unchanged object is the same ``bytes``): what
    lets :class:`backend.core.listing.Renderer` serve an unchanged list's page from its memo."""

    __slots__ = ("_held", "_open")

    def __init__(self, held: list[Any], open_: Callable[[Any], FrozenDict]) -> None:
        self._held = held
        self._open = open_

    def __len__(self) -> int:
        return len(self._held)

    @overload
    def __getitem__(self, index: int) -> FrozenDict: ...

    @overload
    def __getitem__(self, index: slice) -> Bodies: ...

    def __getitem__(self, index: int | slice) -> FrozenDict | Bodies:
        if isinstance(index, slice):
            return Bodies(self._held[index], self._open)
        return self._open(self._held[index])

    def __iter__(self) -> Iterator[FrozenDict]:
        return map(self._open, self._held)

    def __eq__(self, other: object) -> bool:
        """Equal to a list of the same stored versions (compared as stored: nothing decoded), or to a list or tuple of
        equal objects (each decoded)."""
        if isinstance(other, Bodies):
            return self._open is other._open and self._held == other._held
        if isinstance(other, list | tuple):
            return len(other) == len(self._held) and all(map(operator.eq, self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Bodies({len(self._held)} objects)"

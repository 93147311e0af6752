"""The corpus: named request sequences, each a function of one :class:`~fidelity.transcript.Side`.

A module per area registers its sequences with :func:`sequence`; :func:`load` imports them all and
returns the registry. A sequence must send the same requests (in meaning) whatever the server
answers — it may use values from responses, but should not branch on them — and give every step
a label unique within the sequence. It runs in ``side.ns`` (created for it, identical on both
servers); cluster-scoped objects it makes are named after ``side.ns`` and registered with
``side.cleanup``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from fidelity.transcript import Side

MODULES = (
    "writes",
    "patches",
    "deletes",
    "reads",
    "watches",
    "validation",
    "crds",
    "versions",
    "subresources",
    "lifecycle",
    "discovery",
    "builtins",
    "kubectl",
)


@dataclass(frozen=True)
class Sequence:
    name: str
    run: Callable[[Side], None]
    namespaced: bool = True


SEQUENCES: dict[str, Sequence] = {}


def sequence(name: str, *, namespaced: bool = True) -> Callable[[Callable[[Side], None]], Callable[[Side], None]]:
    def register(run: Callable[[Side], None]) -> Callable[[Side], None]:
        if name in SEQUENCES:
            raise ValueError(f"sequence {name} registered twice")
        SEQUENCES[name] = Sequence(name, run, namespaced)
        return run

    return register


def load() -> dict[str, Sequence]:
    for module in MODULES:
        importlib.import_module(f"fidelity.corpus.{module}")
    return SEQUENCES

"""What the fidelity suite's session fixtures hand to tests: the two endpoints and the running report.

Built by ``conftest.py``; filled by ``test_corpus.py``; summarised in the terminal by ``conftest.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fidelity.comparing import Difference
from fidelity.differences import Entry
from fidelity.wire import Endpoint


@dataclass(frozen=True)
class Servers:
    kube: Endpoint
    dev: Endpoint


@dataclass
class Report:
    """What the corpus found, across the session."""

    entries: list[Entry]
    sequences_run: set[str] = field(default_factory=set)
    requests: int = 0
    listed: dict[str, list[Difference]] = field(default_factory=dict)
    unlisted: list[Difference] = field(default_factory=list)

"""The known differences of ``devcluster/DIFFERENCES.md``, read so that the suite can match against them.

Each listed difference is a level-3 heading ``### D<nn> <title>`` followed by bullets; the suite
reads ``- match:`` (one or more backquoted regular expressions, searched in a difference's
:attr:`~fidelity.comparing.Difference.key`: ``<sequence>/<step> <path> kube=<value> dev=<value>``)
and ``- status:`` (``listed`` — devcluster keeps doing this, for the reason given — or ``pending`` —
work in progress elsewhere, expected to go away). Entries under ``F<nn>`` headings are differences
the suite found and devcluster fixed; they have no pattern. Used by ``test_corpus.py`` and
``test_differences_file.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from fidelity.comparing import Difference

DIFFERENCES_FILE = Path(__file__).resolve().parents[2] / "DIFFERENCES.md"  # devcluster/DIFFERENCES.md
_HEADING = re.compile(r"^###\s+([DF]\d{2,})\b\s*(.*)$")
_BULLET = re.compile(r"^-\s+(\w+):\s*(.*)$")
_CODE = re.compile(r"`([^`]+)`")


@dataclass
class Entry:
    id: str
    title: str
    fields: dict[str, str] = field(default_factory=dict)
    patterns: list[re.Pattern[str]] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.fields.get("status", "listed").split()[0] if self.fields.get("status") else "listed"

    @property
    def fixed(self) -> bool:
        return self.id.startswith("F")

    def matches(self, difference: Difference) -> bool:
        key = difference.key
        return any(p.search(key) for p in self.patterns)


def parse(text: str) -> list[Entry]:
    entries: list[Entry] = []
    current: Entry | None = None
    last_field = ""
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            current = Entry(heading.group(1), heading.group(2).strip())
            entries.append(current)
            last_field = ""
            continue
        if line.startswith("#"):
            current = None
            continue
        if current is None:
            continue
        bullet = _BULLET.match(line)
        if bullet:
            last_field = bullet.group(1)
            current.fields[last_field] = bullet.group(2).strip()
        elif line.startswith("  ") and last_field:
            current.fields[last_field] += " " + line.strip()
        else:
            last_field = ""
            continue
        if last_field == "match":
            current.patterns = [re.compile(p) for p in _CODE.findall(current.fields["match"])]
    return entries


def load(path: Path = DIFFERENCES_FILE) -> list[Entry]:
    return parse(path.read_text()) if path.exists() else []


def classify(differences: list[Difference], entries: list[Entry]) -> tuple[dict[str, list[Difference]], list[Difference]]:
    """Differences by the id of the first listed entry that matches them, and those no entry matches."""
    listed: dict[str, list[Difference]] = {}
    unlisted: list[Difference] = []
    candidates = [e for e in entries if not e.fixed and e.patterns]
    for difference in differences:
        entry = next((e for e in candidates if e.matches(difference)), None)
        if entry is None:
            unlisted.append(difference)
        else:
            listed.setdefault(entry.id, []).append(difference)
    return listed, unlisted

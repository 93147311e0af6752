"""``devcluster/DIFFERENCES.md`` stays machine-readable: unique ids, every listed difference with a pattern
that compiles and the kube / devcluster / why / status bullets, every fixed one saying what it was.

Runs without any server (the corpus tests need both).
"""

from __future__ import annotations

from fidelity.comparing import Difference
from fidelity.differences import DIFFERENCES_FILE, classify, load, parse


def test_entries_are_complete() -> None:
    entries = load()
    assert entries, f"{DIFFERENCES_FILE} lists nothing"
    ids = [e.id for e in entries]
    assert len(ids) == len(set(ids)), f"duplicate ids: {sorted(i for i in ids if ids.count(i) > 1)}"
    for entry in entries:
        if entry.fixed:
            assert entry.fields.get("was"), f"{entry.id}: a fixed difference says what it was"
            continue
        missing = [key for key in ("match", "kube", "devcluster", "why", "status") if not entry.fields.get(key)]
        assert not missing, f"{entry.id}: missing {missing}"
        assert entry.patterns, f"{entry.id}: no backquoted pattern in match"
        assert entry.status in ("listed", "pending"), f"{entry.id}: status {entry.status!r}"


def test_first_matching_entry_wins() -> None:
    entries = parse(
        "### D01 one\n- match: `seq/a http\\.status`\n- status: listed\n"
        "### D02 two\n- match: `seq/`\n  `other`\n- status: pending\n"
        "### F01 fixed\n- was: `seq/`\n"
    )
    a = Difference("seq", "a", "GET /", "http.status", 200, 404)
    b = Difference("seq", "b", "GET /", "http.body", 1, 2)
    c = Difference("more", "c", "GET /", "http.body", 1, 2)
    listed, unlisted = classify([a, b, c], entries)
    assert listed == {"D01": [a], "D02": [b]}
    assert unlisted == [c]
    assert entries[1].status == "pending" and len(entries[1].patterns) == 2

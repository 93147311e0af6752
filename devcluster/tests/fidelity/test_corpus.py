"""The differential fidelity suite: every corpus sequence, sent to devcluster and to the real kube-apiserver.

One test per sequence (``corpus/``): run on both servers (``running.py``), normalise and compare
field by field (``normalising.py``, ``comparing.py``), and fail on every difference that
``devcluster/DIFFERENCES.md`` does not list (``differences.py``). The failure message shows each
unlisted difference with the request that produced it and both servers' values.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fidelity import corpus
from fidelity.comparing import compare
from fidelity.differences import classify
from fidelity.running import run_pair
from fidelity.session import Report, Servers

SEQUENCES = corpus.load()


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_sequence(name: str, servers: Servers, report: Report, tmp_path: Path) -> None:
    sequence = SEQUENCES[name]
    kube_steps, dev_steps = run_pair(sequence, kube=servers.kube, dev=servers.dev, cache_dir=tmp_path)
    found = compare(name, kube_steps, dev_steps)
    listed, unlisted = classify(found, report.entries)
    report.sequences_run.add(name)
    report.requests += len(kube_steps)
    for entry_id, matched in listed.items():
        report.listed.setdefault(entry_id, []).extend(matched)
    report.unlisted.extend(unlisted)
    crashes = [s for s in (*kube_steps, *dev_steps) if s.label == "<crash>"]
    details = "\n".join(d.report() for d in unlisted)
    details += "".join(f"\n<crash>: {s.view['trace']}" for s in crashes)
    assert not unlisted, f"{len(unlisted)} difference(s) not listed in devcluster/DIFFERENCES.md:\n{details}"

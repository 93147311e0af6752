"""How the dashboard's namespace pickers cost as namespaces grow: ``python bench/namespaces.py [--counts 100,2000,20000]``.

For each count, a fresh devcluster (``tests/clusters.py``'s ``DevclusterProcess``, the product's CRDs) gets that many namespaces
(``ns-00000``…) and one Darkroom; the dashboard (``backend.app.create_app`` over its own informers, in this process,
served through Flask's test client: the server's work without a network) renders, ``--runs`` times each after a
warm-up render:

- the Darkrooms list (``GET /``) and the new-Darkroom form (``GET /ui/darkrooms/new``): bytes and p50/p99 ms;
- a typeahead's suggestions (``GET /ui/namespaces?namespace=ns-0001``): p50/p99 ms.

Two pickers side by side: ``typeahead`` (the default ``namespace_choices_max``, 500: a select up to it, a text input
with 20 suggestions above it) and ``select`` (the limit raised past the count: every namespace an ``<option>``, as
before the typeahead existed). The person is the local mode's (no access reviews); a person who may not list
namespaces is asked per namespace which they may see (``visible_namespaces``), which this does not measure.
Prints a table; the docs' performance page keeps the last one with this command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from common import Conn, install_crds, log, machine_summary, nearest_rank, wait_until

from tests.clusters import DevclusterProcess

PATHS = {"list": "/", "form": "/ui/darkrooms/new", "suggest": "/ui/namespaces?namespace=ns-0001"}


def populate(port: int, count: int) -> None:
    conn = Conn(port)
    try:
        install_crds(conn, namespace="ns-00000", probe_path="/apis/deployments.example.com/v1/darkrooms")
        for n in range(1, count):
            conn.expect(201, "POST", "/api/v1/namespaces", {"metadata": {"name": f"ns-{n:05}"}})
        darkroom = {
            "apiVersion": "deployments.example.com/v1",
            "kind": "Darkroom",
            "metadata": {"name": "photos"},
            "spec": {"source": {"type": "WebFolder", "baseUrl": "https://example.com/"}, "subDomains": ["photos"]},
        }
        conn.expect(201, "POST", "/apis/deployments.example.com/v1/namespaces/ns-00000/darkrooms", darkroom)
    finally:
        conn.close()


def measure(kubeconfig: Path, count: int, limit: int, runs: int) -> dict[str, tuple[int, float, float]]:
    """Per path: (bytes, p50 ms, p99 ms) over ``runs`` renders, on an app whose picker limit is ``limit``."""
    from backend.api.watch import watching
    from backend.app import create_app
    from backend.server import shutdown as serving
    from backend.settings import ApiSettings

    app = create_app(ApiSettings(kubeconfig=kubeconfig, namespace_choices_max=limit))
    try:
        client = app.test_client()
        last = f"ns-{count - 1:05}"
        wait_until(lambda: last in client.get(f"/ui/namespaces?namespace={last}").get_data(as_text=True), 120, "the cache")
        results = {}
        for name, path in PATHS.items():
            assert client.get(path).status_code == 200  # warm: the first render compiles the templates
            times, size = [], 0
            for _ in range(runs):
                started = time.perf_counter()
                answer = client.get(path)
                body = answer.get_data()
                times.append((time.perf_counter() - started) * 1000)
                assert answer.status_code == 200, (path, answer.status_code)
                size = len(body)
            ordered = sorted(times)
            results[name] = (size, statistics.median(ordered), nearest_rank(ordered, 99))
        return results
    finally:
        watching.close(app)
        serving.shutdown(app)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="100,2000,20000", help="namespace counts, comma-separated")
    parser.add_argument("--runs", type=int, default=30, help="renders per page and picker")
    args = parser.parse_args()
    os.environ.setdefault("DARKROOM_API_LOG_LEVEL", "WARNING")
    rows = []
    for count in (int(c) for c in args.counts.split(",")):
        with (
            tempfile.TemporaryDirectory(prefix="bench-namespaces-") as work,
            DevclusterProcess(Path(work) / "data", log_level="WARNING") as cluster,
        ):
            port, kubeconfig = cluster.port, cluster.kubeconfig
            started = time.perf_counter()
            populate(port, count)
            log(f"{count} namespaces created in {time.perf_counter() - started:.1f} s")
            for picker, limit in (("typeahead", 500), ("select", 10**9)):
                for name, (size, p50, p99) in measure(kubeconfig, count, limit, args.runs).items():
                    if name == "suggest" and picker == "select":
                        continue  # the select never asks
                    rows.append((count, picker, name, size, p50, p99))
                    log(f"{count} {picker} {name}: {size} B, p50 {p50:.1f} ms, p99 {p99:.1f} ms")
    print(f"# bench/namespaces.py --counts {args.counts} --runs {args.runs}; {machine_summary()}")
    print(f"{'namespaces':>10} {'picker':<10} {'page':<8} {'bytes':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for count, picker, name, size, p50, p99 in rows:
        print(f"{count:>10} {picker:<10} {name:<8} {size:>9} {p50:>8.1f} {p99:>8.1f}")


if __name__ == "__main__":
    main()

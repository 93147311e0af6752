"""Both API servers under ``kill -9`` during writes: no acknowledged write is lost, and a restart resumes.

Runs on devcluster and on the real control plane (``kill -9`` of ``realcluster up`` takes etcd down
with it and its children die with it). Four writer threads create ConfigMaps as fast as the server
answers; once a few hundred are acknowledged the server is killed mid-stream. After a restart on the
same data dir every acknowledged ConfigMap is there with its data, a new write succeeds with a
higher resourceVersion than any seen before the kill, and a watch from the resourceVersion of the
first list after the restart sees it.

Why the watch starts from that list and not from the highest version acknowledged before the kill:
kube-apiserver's watch cache starts at the newest revision it finds in etcd when it comes up, so a
watch from an older version may answer 410 Expired ("too old resource version: 592 (593)") whenever
anything (a lease renewal, a write that was never acknowledged) landed after the last acknowledged
create. That is the documented contract: after a 410 a client relists and watches from the list.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from kubernetes import client, config, watch

from tests.clusters import ClusterProcess
from tests.support import wait_for

WRITERS = 4


def test_kill_9_during_writes_loses_no_acknowledged_write(fresh_kube: Callable[..., ClusterProcess]) -> None:
    cluster = fresh_kube()
    api = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    api.configuration.retries = 0
    core = client.CoreV1Api(api)
    acknowledged: dict[str, str] = {}  # name -> resourceVersion the server answered
    lock = threading.Lock()
    stop = threading.Event()

    def writer(n: int) -> None:
        i = 0
        while not stop.is_set():
            name = f"w{n}-{i:05}"
            try:
                created = core.create_namespaced_config_map(
                    "default", {"metadata": {"name": name}, "data": {"n": name}}, _request_timeout=5
                )
            except Exception:  # the server died under us: what matters is what was acknowledged before
                return
            with lock:
                acknowledged[name] = created.metadata.resource_version
            i += 1

    threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    try:
        wait_for(lambda: len(acknowledged) >= 300, timeout_s=60, message="300 acknowledged creates")
        cluster.kill()
    finally:
        stop.set()
        for thread in threads:
            thread.join(15)
        api.close()
    with lock:
        acked = dict(acknowledged)
    highest = max(int(v) for v in acked.values())

    cluster.start()
    api = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    try:
        core = client.CoreV1Api(api)
        listing = core.list_namespaced_config_map("default")
        stored = {cm.metadata.name: cm for cm in listing.items}
        lost = sorted(set(acked) - set(stored))
        assert not lost, f"{len(lost)} of {len(acked)} acknowledged creates lost: {lost[:10]}"
        assert all(stored[name].data == {"n": name} for name in acked)
        after = core.create_namespaced_config_map("default", {"metadata": {"name": "after-restart"}})
        assert int(after.metadata.resource_version) > highest
        events: list[Any] = []
        for event in watch.Watch().stream(
            core.list_namespaced_config_map,
            "default",
            resource_version=listing.metadata.resource_version,
            timeout_seconds=10,
            field_selector="metadata.name=after-restart",
        ):
            events.append(event)
            break
        assert events and events[0]["type"] == "ADDED" and events[0]["object"].metadata.name == "after-restart"
    finally:
        api.close()

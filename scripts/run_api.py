"""`make api`: run the product on one machine.

Uses the cluster the user chose (``--kubeconfig FILE`` or ``KUBECONFIG``) or, by default, starts an
embedded devcluster with its data in ``.devcluster/``. Installs the CRDs from ``crds/`` with
server-side apply (official ``kubernetes`` client), prints a banner naming the cluster, and runs
until Ctrl-C, then stops everything it started.

The reconciler and the REST API + dashboard arrive with their own issues; until then this says
so plainly and serves the cluster with the CRDs installed.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def install_crds(kubeconfig: str) -> list[str]:
    """Server-side apply every CRD under crds/ (idempotent; our field manager owns the schema)."""
    from kubernetes import config
    from kubernetes.dynamic import DynamicClient

    api = config.new_client_from_config(config_file=kubeconfig)
    try:
        crd_api = DynamicClient(api).resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
        installed = []
        for path in sorted((ROOT / "crds").glob("*.yaml")):
            body = yaml.safe_load(path.read_text())
            name = body["metadata"]["name"]
            crd_api.server_side_apply(body=body, name=name, field_manager="darkroom-control-panel", force_conflicts=True)
            installed.append(name)
        return installed
    finally:
        api.close()


def main() -> int:
    parser = argparse.ArgumentParser(description="Run Darkroom Control Panel")
    parser.add_argument("--kubeconfig", help="use this cluster instead of the embedded devcluster (KUBECONFIG also works)")
    parser.add_argument("--data-dir", default=str(ROOT / ".devcluster"), help="embedded devcluster data (default .devcluster/)")
    parser.add_argument("--devcluster-port", type=int, default=int(os.environ.get("DEVCLUSTER_PORT", "6443")))
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s %(message)s")

    kubeconfig = args.kubeconfig or os.environ.get("KUBECONFIG")
    cluster = None
    if kubeconfig:
        where = f"the cluster of kubeconfig {kubeconfig}"
    else:
        from devcluster.server import DevCluster
        from devcluster.settings import ServerSettings

        data_dir = Path(args.data_dir)
        cluster = DevCluster(ServerSettings(port=args.devcluster_port, data_dir=data_dir, kubeconfig=data_dir / "kubeconfig")).start()
        kubeconfig = str(cluster.kubeconfig_path)
        where = f"embedded devcluster at {cluster.url} (data in {data_dir})"

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        crds = install_crds(kubeconfig)
        print("Darkroom Control Panel")
        print(f"  cluster:    {where}")
        print(f"  kubeconfig: {kubeconfig}")
        print(f"  CRDs:       {', '.join(crds)} (installed)")
        print("  reconciler: not built yet (issue: the reconciler)")
        print(f"  API + dashboard: not built yet (issue: REST API); will serve http://localhost:{os.environ.get('PORT', '5000')}")
        print(f"  try:        kubectl --kubeconfig {kubeconfig} apply -f crds/samples/ && kubectl --kubeconfig {kubeconfig} get dr")
        print("Ctrl-C stops everything.", flush=True)
        stop.wait()
    finally:
        if cluster is not None:
            cluster.stop()
    print("stopped.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

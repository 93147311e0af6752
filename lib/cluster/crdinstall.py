"""One-shot CRD installer: wait for a cluster, optionally re-point its kubeconfig, apply the CRDs, wait for Established.

``python -m cluster.crdinstall`` (``scripts/install_crds.py`` from a checkout). Called by docker-compose.yml's ``crds``
service (from the project image, which holds the product as an installed wheel), and usable by hand against any
cluster. k3s writes its kubeconfig for the host it runs on (``server: https://127.0.0.1:6443``); other containers reach
it by its service name, so ``--server https://k3s:6443 --write-kubeconfig FILE`` writes a copy with that server URL
(k3s's certificate covers the name through ``--tls-san k3s``) for the reconciler and the API.

Every CRD of the product (``crds/``, found by :mod:`productfiles`; ``--crds DIR`` names another folder) is server-side
applied (idempotent; field manager ``darkroom-control-panel``), then the installer waits until each one is Established.
Exit code 0 on success, 1 with one clear line on stderr otherwise. Uses only the official ``kubernetes`` client.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

import productfiles

FIELD_MANAGER = "darkroom-control-panel"


class InstallError(Exception):
    """The cluster did not come up, or a CRD could not be applied or did not become Established."""


def wait_for_file(path: Path, *, timeout_s: float, interval_s: float = 1.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.is_file():
        if time.monotonic() > deadline:
            raise InstallError(f"{path} did not appear within {timeout_s:.0f} s")
        time.sleep(interval_s)


def rewrite_server(kubeconfig: dict[str, Any], server: str) -> dict[str, Any]:
    """A copy of ``kubeconfig`` whose every cluster entry points at ``server``."""
    clusters = [{**entry, "cluster": {**entry.get("cluster", {}), "server": server}} for entry in kubeconfig.get("clusters") or []]
    if not clusters:
        raise InstallError("the kubeconfig has no clusters")
    return {**kubeconfig, "clusters": clusters}


def write_private(path: Path, text: str) -> None:
    """Write ``text`` atomically with mode 0600 (a kubeconfig holds credentials)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def crd_bodies(directory: Path) -> list[dict[str, Any]]:
    bodies = [yaml.safe_load(path.read_text()) for path in sorted(directory.glob("*.yaml"))]
    if not bodies:
        raise InstallError(f"no CRDs in {directory}")
    return bodies


def established(crd: Any) -> bool:
    conditions = ((crd.to_dict() if hasattr(crd, "to_dict") else crd).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def install(kubeconfig: Path, crds: list[dict[str, Any]], *, timeout_s: float) -> list[str]:
    """Apply ``crds`` once the API server answers; the names, once all are Established."""
    from kubernetes import config
    from kubernetes.client.exceptions import ApiException
    from kubernetes.dynamic import DynamicClient

    api = config.new_client_from_config(config_file=str(kubeconfig))
    api.user_agent = "darkroom-crd-installer/0.1.0"
    deadline = time.monotonic() + timeout_s
    try:
        last_error = ""
        while True:
            try:
                resource = DynamicClient(api).resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
                break
            except Exception as e:  # still starting: connection refused, 503, TLS or discovery not ready yet
                last_error = f"{type(e).__name__}: {e}".splitlines()[0]
            if time.monotonic() > deadline:
                raise InstallError(f"the API server did not answer within {timeout_s:.0f} s ({last_error})")
            time.sleep(2.0)
        names = []
        for body in crds:
            name = body["metadata"]["name"]
            try:
                resource.server_side_apply(body=body, name=name, field_manager=FIELD_MANAGER, force_conflicts=True)
            except ApiException as e:
                raise InstallError(f"cannot apply {name}: {e.status} {e.reason}") from e
            names.append(name)
        pending = set(names)
        while pending:
            pending = {name for name in pending if not established(resource.get(name=name))}
            if not pending:
                break
            if time.monotonic() > deadline:
                raise InstallError(f"not Established within {timeout_s:.0f} s: {', '.join(sorted(pending))}")
            time.sleep(0.5)
        return names
    finally:
        api.close()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m cluster.crdinstall",
        description="Wait for a cluster, optionally re-point its kubeconfig, apply crds/ and wait for Established.",
    )
    parser.add_argument("--kubeconfig", type=Path, default=os.environ.get("KUBECONFIG"), help="kubeconfig to read (default KUBECONFIG)")
    parser.add_argument("--server", help="rewrite the kubeconfig's server URL to this (e.g. https://k3s:6443)")
    parser.add_argument("--write-kubeconfig", type=Path, help="write the (rewritten) kubeconfig here, mode 0600, and use it")
    parser.add_argument("--crds", type=Path, help="directory of CRD YAML files (default: the product's own, crds/)")
    parser.add_argument("--timeout-s", type=float, default=300.0, help="how long to wait for the kubeconfig, the server and Established")
    args = parser.parse_args(argv)
    if args.kubeconfig is None:
        parser.error("--kubeconfig (or KUBECONFIG) is required")
    if args.server and not args.write_kubeconfig:
        parser.error("--server needs --write-kubeconfig (the source kubeconfig is never modified)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        wait_for_file(args.kubeconfig, timeout_s=args.timeout_s)
        kubeconfig: Path = args.kubeconfig
        if args.write_kubeconfig:
            loaded = yaml.safe_load(args.kubeconfig.read_text())
            if args.server:
                loaded = rewrite_server(loaded, args.server)
            write_private(args.write_kubeconfig, yaml.safe_dump(loaded, sort_keys=False))
            kubeconfig = args.write_kubeconfig
            print(f"install_crds: wrote {kubeconfig}" + (f" (server {args.server})" if args.server else ""), flush=True)
        names = install(kubeconfig, crd_bodies(args.crds or productfiles.crd_directory()), timeout_s=args.timeout_s)
    except (InstallError, OSError, yaml.YAMLError) as e:
        print(f"install_crds: {e}", file=sys.stderr, flush=True)
        return 1
    print(f"install_crds: established {', '.join(names)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

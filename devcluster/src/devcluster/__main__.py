"""``python -m devcluster serve``: run devcluster in the foreground until SIGTERM/SIGINT (one line and exit code 1 when
another devcluster serves the data directory)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from devcluster.datalock import DataDirInUse
from devcluster.server import DevCluster
from devcluster.settings import ServerSettings


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m devcluster", description="Embedded Kubernetes-compatible API server (SQLite-backed).")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the Kubernetes API until SIGTERM/SIGINT")
    defaults = ServerSettings()
    serve.add_argument("--host", default=defaults.host, help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=defaults.port, help="port (default 6443; 0 picks a free one)")
    serve.add_argument("--data-dir", type=Path, default=defaults.data_dir, help="where the SQLite database lives (default .devcluster)")
    serve.add_argument("--kubeconfig", type=Path, default=None, help="kubeconfig to write (default DATA_DIR/kubeconfig)")
    serve.add_argument("--history-size", type=int, default=defaults.history_size, help="changes kept for watch resume / list continue")
    serve.add_argument("--bookmark-interval", type=float, default=defaults.bookmark_interval_s, help="seconds between watch bookmarks")
    serve.add_argument(
        "--deployment-ready-delay", type=float, default=defaults.deployment_ready_delay_s, help="seconds until a Deployment becomes ready"
    )
    serve.add_argument("--sqlite-synchronous", choices=("NORMAL", "FULL"), default=defaults.sqlite_synchronous)
    serve.add_argument("--audit-log", type=Path, default=None, help="append one JSON line per resource request to this file")
    serve.add_argument("--log-level", default="INFO")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr)
    settings = ServerSettings(
        host=args.host,
        port=args.port,
        data_dir=args.data_dir,
        kubeconfig=args.kubeconfig,
        history_size=args.history_size,
        bookmark_interval_s=args.bookmark_interval,
        deployment_ready_delay_s=args.deployment_ready_delay,
        sqlite_synchronous=args.sqlite_synchronous,
        audit_log=args.audit_log,
    )
    cluster = DevCluster(settings)
    try:
        cluster.serve_forever()
    except DataDirInUse as e:
        print(f"devcluster cannot start: {e}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

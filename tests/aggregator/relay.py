"""A TCP relay for the network-namespace test (run as a script, no tests): ``relay.py LISTEN_HOST LISTEN_PORT TO_HOST TO_PORT``.

The aggregated server in its own network namespace reaches the real kube-apiserver (which listens on the
host's 127.0.0.1 only) through two of these: one inside the namespace on its 127.0.0.1 (so the server's
kubeconfig and the API server's certificate name stay the same), one on the host's veth address.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


def main() -> None:
    listen_host, listen_port, to_host, to_port = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    server = socket.create_server((listen_host, listen_port))
    print("listening", flush=True)
    while True:
        client, _ = server.accept()
        upstream = socket.create_connection((to_host, to_port))
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pipe, args=(a, b), daemon=True).start()


if __name__ == "__main__":
    main()

"""One devcluster per data directory: an exclusive lock on ``<data-dir>/devcluster.lock``.

Two servers on one SQLite database and one PKI would each keep their own watch caches and resource versions
over the same rows, so :class:`DevCluster <devcluster.server.DevCluster>` takes this lock before it opens
anything in the data directory and holds it while it serves. The file says who holds it (``pid <n> <url>``,
the URL once the server listens); a second server refuses with :class:`DataDirInUse` naming them. The lock is a
``fcntl.flock`` on the open file: the kernel drops it when the holder exits, however it exits, so a file left
by a dead process locks nothing (its stale text is overwritten by the next holder), and the file itself is
never removed (removing it would let a third server lock a new file while a second still holds the old one).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

LOCK_FILE = "devcluster.lock"


class DataDirInUse(RuntimeError):
    """Another process serves this data directory."""

    def __init__(self, data_dir: Path, holder: str) -> None:
        super().__init__(
            f"the data directory {data_dir} is in use by a running devcluster ({holder or 'pid unknown'}); "
            "stop that one first, or choose another data directory"
        )
        self.data_dir, self.holder = data_dir, holder


class DataDirLock:
    """The lock of one data directory; :meth:`acquire`, then :meth:`record` the URL, :meth:`release` on exit."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.path = data_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock (creating the data directory), or :class:`DataDirInUse` naming who holds it."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode(errors="replace").strip()
            os.close(fd)
            raise DataDirInUse(self.data_dir, holder) from None
        self._fd = fd
        self._write(f"pid {os.getpid()}")

    def record(self, url: str) -> None:
        """Say where the holder serves (once it listens)."""
        self._write(f"pid {os.getpid()} {url}")

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)  # nobody holds it: nothing to name
            os.close(self._fd)  # closing drops the lock
            self._fd = None

    def _write(self, text: str) -> None:
        assert self._fd is not None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"{text}\n".encode(), 0)

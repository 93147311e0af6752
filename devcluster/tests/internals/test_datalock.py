"""One devcluster per data directory (devcluster.datalock): a second one on the same data refuses, naming the first
(pid and URL), in-process and as ``python -m devcluster serve``; the lock goes with its holder, and a lock file a dead
process left behind locks nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from devcluster.datalock import LOCK_FILE, DataDirInUse, DataDirLock
from devcluster.server import DevCluster
from devcluster.settings import ServerSettings


def cluster(data_dir: Path) -> DevCluster:
    return DevCluster(ServerSettings(host="127.0.0.1", port=0, data_dir=data_dir))


def test_a_second_devcluster_on_the_same_data_is_refused_naming_the_first(tmp_path: Path) -> None:
    first = cluster(tmp_path).start()
    try:
        assert (tmp_path / LOCK_FILE).read_text() == f"pid {os.getpid()} {first.url}\n"
        with pytest.raises(DataDirInUse) as refused:
            cluster(tmp_path).start()
        assert str(refused.value) == (
            f"the data directory {tmp_path} is in use by a running devcluster (pid {os.getpid()} {first.url}); "
            "stop that one first, or choose another data directory"
        )
        other = cluster(tmp_path / "other").start()  # another data directory is no conflict
        other.stop()
    finally:
        first.stop()
    assert (tmp_path / LOCK_FILE).read_text() == ""  # released: nobody to name
    again = cluster(tmp_path).start()  # the lock went with its holder
    again.stop()


def test_a_lock_file_left_by_a_dead_process_locks_nothing(tmp_path: Path) -> None:
    (tmp_path / LOCK_FILE).write_text("pid 999999 http://127.0.0.1:6443\n")
    started = cluster(tmp_path).start()
    try:
        assert (tmp_path / LOCK_FILE).read_text() == f"pid {os.getpid()} {started.url}\n"
    finally:
        started.stop()


def test_the_lock_is_the_kernels_flock_not_the_files_text(tmp_path: Path) -> None:
    held = DataDirLock(tmp_path)
    held.acquire()
    held.record("http://127.0.0.1:1")
    try:
        with pytest.raises(DataDirInUse, match=r"\(pid \d+ http://127.0.0.1:1\)"):
            DataDirLock(tmp_path).acquire()
    finally:
        held.release()
    DataDirLock(tmp_path).acquire()  # free again (closing the descriptor at exit releases it)


def test_serve_says_it_in_one_line(tmp_path: Path) -> None:
    first = cluster(tmp_path).start()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "devcluster", "serve", "--port", "0", "--data-dir", str(tmp_path), "--log-level", "WARNING"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        first.stop()
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"devcluster cannot start: the data directory {tmp_path} is in use by a running devcluster (pid {os.getpid()} {first.url}); "
        "stop that one first, or choose another data directory"
    ]

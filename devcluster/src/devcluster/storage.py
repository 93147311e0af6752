"""SQLite persistence for devcluster: the durable copy of every object and of the revision counter.

The in-memory :class:`~devcluster.store.Store` is the working copy; every committed change is
written here first (one transaction per change) so that an acknowledged write survives a
``kill -9``. WAL mode with ``synchronous=NORMAL`` makes each commit an append to the WAL file,
which the OS keeps even when the process dies. Called only from the server's event-loop thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    resource TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    revision INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (resource, namespace, name)
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
"""


class Storage:
    """One SQLite file under the data dir; objects keyed by (storage key, namespace, name)."""

    def __init__(self, data_dir: Path, *, synchronous: str = "NORMAL") -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.path = data_dir / "devcluster.sqlite3"
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous}")
        self._db.executescript(_SCHEMA)

    def revision(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()
        return int(row[0]) if row else 1

    def load(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every stored object with its storage key."""
        for resource, body in self._db.execute("SELECT resource, body FROM objects ORDER BY resource, namespace, name"):
            yield resource, orjson.loads(body)

    def commit(self, revision: int, puts: list[tuple[str, str, str, dict[str, Any]]], deletes: list[tuple[str, str, str]]) -> None:
        """Atomically store ``puts`` (resource, namespace, name, body), drop ``deletes`` and set the revision."""
        db = self._db
        db.execute("BEGIN")
        try:
            for resource, namespace, name, body in puts:
                db.execute(
                    "INSERT OR REPLACE INTO objects (resource, namespace, name, revision, body) VALUES (?, ?, ?, ?, ?)",
                    (resource, namespace, name, revision, orjson.dumps(body)),
                )
            for resource, namespace, name in deletes:
                db.execute("DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?", (resource, namespace, name))
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('revision', ?)", (revision,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._db.close()

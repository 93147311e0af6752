"""Normalisation of one side's transcript: server-chosen values become placeholders, nothing else moves.

What a server chooses on its own and may choose differently without being wrong is replaced, in
the whole transcript of one side, consistently:

- uids → ``<uid:NAME#K>`` (the K-th object named NAME the side saw; object names are the same on
  both sides), also inside messages; a uid of no object seen → ``<uid:?N>``;
- an object's ``metadata.resourceVersion`` → ``<rv:NAME#K.N>`` (N counts that object's distinct
  resourceVersions in order of appearance): "a no-op update keeps the resourceVersion" and "dry-run
  does not advance it" stay visible, while the cluster-wide numbering (which the real cluster's own
  controllers advance all the time) does not. A list's, a bookmark's or a continue token's
  resourceVersion → ``<rv>``; known resourceVersions inside messages → their placeholder;
- timestamps (RFC 3339, anywhere) → ``<time>``; Table age cells → ``<age>`` (in a Table watch,
  also in the events after the first, which carry no columnDefinitions);
- names made from ``generateName`` → ``prefix<gen:N>``; ``kube-api-access-xxxxx`` volume names;
- the managedFields manager of control-plane components → ``<control-plane>`` (realcluster's
  components all write as ``realcluster``, the name of the binary they are built into);
- ClusterIPs → ``<ip>``, nodePorts → ``<nodePort>``; the server address in ``/api`` → ``<address>``;
  kubectl's temporary directories (``kubectl diff``) and OpenAPI document hashes;
- continue tokens are decoded (they are base64 JSON in both servers) and only their resourceVersion
  is replaced, so where the next page starts is still compared.

Everything else — status codes, reasons, messages, defaulted fields, labels, list order, which
fields exist — is compared as sent. Called by ``comparing.py`` on each side's steps.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import orjson

from fidelity.transcript import Step

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?(?: \+\d{4} UTC)?")
API_ACCESS = re.compile(r"kube-api-access-[a-z0-9]{5}")
KUBECTL_TMP = re.compile(r"/tmp/(LIVE|MERGED)-\d+")
OPENAPI_HASH = re.compile(r"hash=[0-9A-Fa-f]{16,}")
IP = re.compile(r"^\d+\.\d+\.\d+\.\d+$")
MESSAGE_RVS = (
    (re.compile(r"too old resource version: (\d+) \((\d+)\)"), r"too old resource version: \1 (<rv>)"),
    (re.compile(r"Too large resource version: \d+, current: \d+"), "Too large resource version: <rv>, current: <rv>"),
)
# realcluster builds every component into one binary, so they all write as "realcluster": the
# control plane's own managers cannot be told apart there.
CONTROL_PLANE_MANAGERS = frozenset({"realcluster", "kube-controller-manager", "kube-apiserver"})
AGE_COLUMNS = frozenset({"Age", "Last Seen", "First Seen", "Created At"})


def _is_object(value: Any) -> bool:
    return (
        isinstance(value, dict) and isinstance(value.get("metadata"), dict) and ("name" in value["metadata"] or "uid" in value["metadata"])
    )


class Normaliser:
    """Placeholders for one side's transcript (see the module docstring)."""

    def __init__(self) -> None:
        self.uids: dict[str, str] = {}
        self.uids_per_name: dict[str, int] = {}
        self.generated: dict[str, str] = {}
        self.rvs: dict[str, dict[str, str]] = {}  # object key -> rv -> placeholder
        self.known_rvs: dict[str, str] = {}
        self.prefixes: set[str] = set()
        # A Table watch sends columnDefinitions with its first event only: later events' rows are read with these.
        self.table_columns: list[Any] = []

    # -- pass 1: learn -----------------------------------------------------------------------

    def learn(self, value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("generateName"), str) and value["generateName"]:
                self.prefixes.add(value["generateName"])
            if _is_object(value):
                meta = value["metadata"]
                prefix, name = meta.get("generateName"), meta.get("name")
                if isinstance(prefix, str) and isinstance(name, str) and name.startswith(prefix) and name != prefix:
                    self.generated.setdefault(name, f"{prefix}<gen:{len(self.generated) + 1}>")
                uid = meta.get("uid")
                if isinstance(uid, str) and uid:
                    self._uid(uid, name if isinstance(name, str) else "")
                rv = meta.get("resourceVersion")
                if isinstance(rv, str) and rv and value.get("type") != "BOOKMARK":
                    self._rv(value, rv)
            elif value.get("kind") == "Status" and isinstance(value.get("details"), dict):
                details = value["details"]
                if isinstance(details.get("uid"), str) and isinstance(details.get("name"), str):
                    self._uid(details["uid"], details["name"])
            for item in value.values():
                self.learn(item)
        elif isinstance(value, list):
            for item in value:
                self.learn(item)
        elif isinstance(value, str):
            for uid in UUID.findall(value):
                self._uid(uid)

    def _uid(self, uid: str, name: str = "") -> str:
        """``<uid:NAME#K>`` (the K-th object called NAME), ``<uid:?N>`` for a uid of no object seen."""
        if uid in self.uids:
            return self.uids[uid]
        if name:
            shown = self.generated.get(name, name)
            count = self.uids_per_name[shown] = self.uids_per_name.get(shown, 0) + 1
            placeholder = f"<uid:{shown}#{count}>"
        else:
            placeholder = f"<uid:?{sum(1 for p in self.uids.values() if p.startswith('<uid:?')) + 1}>"
        self.uids[uid] = placeholder
        return placeholder

    def _owner_key(self, obj: dict[str, Any]) -> str:
        meta = obj["metadata"]
        uid, name = meta.get("uid"), str(meta.get("name", ""))
        if isinstance(uid, str) and uid:
            return self._uid(uid, name)[5:-1]
        return self.generated.get(name, name)

    def _rv(self, obj: dict[str, Any], rv: str) -> str:
        owner = self._owner_key(obj)
        versions = self.rvs.setdefault(owner, {})
        placeholder = versions.setdefault(rv, f"<rv:{owner}.{len(versions) + 1}>")
        self.known_rvs.setdefault(rv, placeholder)
        return placeholder

    # -- pass 2: rewrite ---------------------------------------------------------------------

    def text(self, value: str) -> str:
        if UUID.search(value):
            value = UUID.sub(lambda m: self._uid(m.group(0)), value)
        if TIMESTAMP.search(value):
            value = TIMESTAMP.sub("<time>", value)
        for name, placeholder in self.generated.items():
            if name in value:
                value = value.replace(name, placeholder)
        for prefix in self.prefixes:  # names made from a generateName that no object carried (a failed create)
            value = re.sub(re.escape(prefix) + r"[a-z0-9]{5}\b", prefix + "<gen>", value)
        value = API_ACCESS.sub("kube-api-access-<random>", value)
        value = OPENAPI_HASH.sub("hash=<hash>", value)
        value = KUBECTL_TMP.sub(r"/tmp/\1-<n>", value)
        for pattern, replacement in MESSAGE_RVS:
            value = pattern.sub(replacement, value)
        return value

    def message(self, value: str) -> str:
        """A human-readable message: known resourceVersions inside it become placeholders too."""
        value = self.text(value)
        return re.sub(r"\b\d{2,}\b", lambda m: self.known_rvs.get(m.group(0), m.group(0)), value)

    def rewrite(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return self._rewrite_dict(value)
        if isinstance(value, list):
            return [self.rewrite(item, key) for item in value]
        if key == "manager" and value in CONTROL_PLANE_MANAGERS:
            return "<control-plane>"
        if key == "nodePort" and isinstance(value, int):
            return "<nodePort>"
        if isinstance(value, str):
            if key in ("clusterIP", "clusterIPs") and IP.match(value):
                return "<ip>"
            if key == "serverAddress":
                return "<address>"
            if key == "continue" and value:
                return self._continue(value)
            if key in ("message", "stdout", "stderr", "text"):
                return self.message(value)
            return self.text(value)
        return value

    def _rewrite_dict(self, value: dict[str, Any]) -> dict[str, Any]:
        out = {(UUID.sub(lambda m: self._uid(m.group(0)), k) if "-" in k else k): self.rewrite(v, k) for k, v in value.items()}
        meta = value.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("resourceVersion"), str) and meta["resourceVersion"]:
            if _is_object(value) and value.get("kind") != "Status":
                out["metadata"]["resourceVersion"] = self._rv(value, meta["resourceVersion"])
            else:  # a list's, a bookmark's (no name), a Table's: the cluster-wide revision
                out["metadata"]["resourceVersion"] = "<rv>"
        if value.get("type") == "BOOKMARK" and isinstance(out.get("object"), dict):
            bookmark_meta = out["object"].get("metadata")
            if isinstance(bookmark_meta, dict) and "resourceVersion" in bookmark_meta:
                bookmark_meta["resourceVersion"] = "<rv>"
        if value.get("kind") == "Table" and isinstance(value.get("rows"), list):
            if value.get("columnDefinitions"):
                self.table_columns = list(value["columnDefinitions"])
            out["rows"] = self._table_rows(value.get("columnDefinitions") or self.table_columns, out["rows"])
        return out

    @staticmethod
    def _table_rows(definitions: list[Any], rows: list[Any]) -> list[Any]:
        columns = [c.get("name") if isinstance(c, dict) else None for c in definitions]
        ages = {i for i, name in enumerate(columns) if name in AGE_COLUMNS} | {
            i for i, c in enumerate(definitions) if isinstance(c, dict) and c.get("type") == "date"
        }
        for row in rows:
            cells = row.get("cells") if isinstance(row, dict) else None
            if isinstance(cells, list):
                for i in ages:
                    if i < len(cells) and cells[i] not in (None, "<unknown>", ""):
                        cells[i] = "<age>"
        return rows

    def _continue(self, token: str) -> str:
        try:
            data = orjson.loads(base64.b64decode(token + "=" * (-len(token) % 4), validate=False))
        except (binascii.Error, orjson.JSONDecodeError, ValueError):
            return "<continue:opaque>"
        if isinstance(data, dict) and "rv" in data:
            data["rv"] = "<rv>"
            return "<continue:" + orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode() + ">"
        return "<continue:opaque>"


def normalise(steps: list[Step]) -> list[dict[str, Any]]:
    """The comparable views of one side's steps, in order."""
    normaliser = Normaliser()
    for step in steps:
        normaliser.learn(step.view)
    return [normaliser.rewrite(step.view) for step in steps]

"""Bundle the real kube-apiserver's OpenAPI v3 documents for devcluster's built-in kinds.

devcluster serves these documents at ``/openapi/v3/...`` and decodes built-in objects against
them (``devcluster/decoding.py``). The source is the real Kubernetes API server of realcluster/
(v1.37.2), asked directly:

1. ``realcluster up`` on a free port (built by ``scripts/build_realcluster.sh``), or a running
   server named by ``--kubeconfig``;
2. ``/openapi/v3`` and the document of every group/version in ``devcluster.resources.BUILTINS``;
3. each document trimmed to the paths devcluster routes for those resources (collection, item,
   all-namespaces list, legacy watch paths, its subresources) and the ``components.schemas``
   reachable from them, descriptions kept (``kubectl explain`` shows them);
4. the Go types behind the schemas: the OpenAPI documents do not name them, but kube's decoding
   errors do (``json: cannot unmarshal bool into Go struct field ContainerPort.spec.template.spec.
   containers.ports.protocol of type v1.Protocol``). For every field of every reachable struct the
   script sends one dry-run create carrying a wrongly typed value there (and inside it, for lists
   and maps) and records the struct and type names the server reports.

Output, committed: ``devcluster/src/devcluster/builtin_openapi/<api_v1|apis_apps_v1|...>.json.gz``,
``go_types.json.gz`` and ``README.md``. Usage::

    python devcluster/scripts/gen_builtin_openapi.py [--kubeconfig FILE] [--out DIR]

Standard library plus PyYAML (for the kubeconfig) and devcluster itself (for BUILTINS: this checkout's, src/ first
on the path).
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import gzip
import json
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

PROJECT = Path(__file__).resolve().parent.parent  # devcluster/
ROOT = PROJECT.parent
sys.path.insert(0, str(PROJECT / "src"))

from devcluster.openapi import served_paths  # noqa: E402
from devcluster.resources import BUILTINS, ResourceType  # noqa: E402

OUT = PROJECT / "src" / "devcluster" / "builtin_openapi"
REALCLUSTER = ROOT / "realcluster" / "bin" / "realcluster"
REF_PREFIX = "#/components/schemas/"
# Types whose JSON form is their own (custom UnmarshalJSON): the decoder knows them by name.
SPECIAL = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
}
_TYPE_ERROR = re.compile(r"json: cannot unmarshal \S+ into Go struct field (\w*)\.(\S+) of type (.+)$")


# --------------------------------------------------------------------------------------------
# talking to the server


class Server:
    def __init__(self, kubeconfig: Path) -> None:
        config = yaml.safe_load(kubeconfig.read_text())
        cluster = config["clusters"][0]["cluster"]
        self.url = cluster["server"].rstrip("/")
        self.token = config["users"][0]["user"].get("token", "")
        ca = cluster.get("certificate-authority-data")
        self.context = ssl.create_default_context(cadata=base64.b64decode(ca).decode()) if ca else None

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, context=self.context, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def get(self, path: str) -> Any:
        code, body = self.request("GET", path)
        if code != 200:
            raise RuntimeError(f"GET {path}: {code} {body}")
        return body


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RealCluster:
    """``realcluster up`` in a temporary data dir; ready once it wrote its kubeconfig."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="gen-openapi-"))
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Path:
        subprocess.run([str(ROOT / "scripts" / "build_realcluster.sh")], check=True)
        log = (self.dir / "realcluster.log").open("wb")
        argv = [str(REALCLUSTER), "up", "--data-dir", str(self.dir), "--port", str(_free_port())]
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        kubeconfig = self.dir / "kubeconfig"
        deadline = time.monotonic() + 180
        while not kubeconfig.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"realcluster did not start: {(self.dir / 'realcluster.log').read_text()[-2000:]}")
            time.sleep(0.2)
        return kubeconfig

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(60)
        shutil.rmtree(self.dir, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# trimming


def openapi_key(group_version: str) -> str:
    return f"apis/{group_version}" if "/" in group_version else f"api/{group_version}"


def file_name(group_version: str) -> str:
    return openapi_key(group_version).replace("/", "_") + ".json.gz"


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF_PREFIX):
            yield ref[len(REF_PREFIX) :]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def trim(document: dict[str, Any], resources: list[ResourceType]) -> dict[str, Any]:
    wanted: set[str] = set()
    for resource in resources:
        wanted |= served_paths(resource)
    missing = sorted(p for p in wanted if p not in document["paths"])
    if missing:
        raise RuntimeError(f"the server does not document {missing}")
    paths = {p: item for p, item in document["paths"].items() if p in wanted}
    schemas = document["components"]["schemas"]
    keep: set[str] = set()
    todo = list(_refs(paths))
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep.add(name)
        todo.extend(_refs(schemas[name]))
    trimmed = dict(document)
    trimmed["paths"] = paths
    trimmed["components"] = {**document["components"], "schemas": {k: v for k, v in schemas.items() if k in keep}}
    return trimmed


# --------------------------------------------------------------------------------------------
# Go type names


def resolve(node: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(schema name or "", schema)`` of a property/items node (``$ref`` or ``allOf: [$ref]``)."""
    ref = node.get("$ref")
    if ref is None and isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
        ref = node["allOf"][0].get("$ref")
    if isinstance(ref, str):
        return ref[len(REF_PREFIX) :], {}
    return "", node


def wrong_value(name: str, schema: dict[str, Any]) -> Any:
    """A JSON value the field cannot hold (None: no probe, the type decodes anything or is special)."""
    if name in SPECIAL:
        return None
    t = schema.get("type")
    if t == "string":
        return True
    if t in ("integer", "number", "boolean", "array"):
        return "x"
    if t == "object" and ("properties" in schema or "additionalProperties" in schema):
        return "x"
    return None


class Prober:
    """Finds the Go struct and type names of every field reachable from the served kinds."""

    def __init__(self, server: Server, schemas: dict[str, dict[str, Any]]) -> None:
        self.server = server
        self.schemas = schemas
        # schema name -> (resource to post to, steps to reach it: ("f", name) | ("i",) | ("v",))
        self.routes: dict[str, tuple[ResourceType, tuple[tuple[str, ...], ...]]] = {}

    def schema(self, node: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        name, inline = resolve(node)
        return (name, self.schemas[name]) if name else ("", inline)

    def discover(self, resource: ResourceType, root: str) -> None:
        queue: list[tuple[str, tuple[tuple[str, ...], ...]]] = [(root, ())]
        while queue:
            name, steps = queue.pop(0)
            if name in self.routes or name in SPECIAL:
                continue
            self.routes[name] = (resource, steps)
            for field, prop in (self.schemas[name].get("properties") or {}).items():
                queue.extend(self._nested(prop, (*steps, ("f", field))))

    def _nested(self, node: dict[str, Any], steps: tuple[tuple[str, ...], ...]) -> list[tuple[str, tuple[tuple[str, ...], ...]]]:
        name, schema = self.schema(node)
        if name and name not in SPECIAL and "properties" in schema:
            return [(name, steps)]
        if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
            return self._nested(schema["items"], (*steps, ("i",)))
        if schema.get("type") == "object" and isinstance(schema.get("additionalProperties"), dict):
            return self._nested(schema["additionalProperties"], (*steps, ("v",)))
        return []

    def probes(self) -> Iterator[tuple[str, str, int, ResourceType, Any, str]]:
        """``(schema, field, depth, resource, body, expected Go field path)`` per probe."""
        for name, (resource, steps) in sorted(self.routes.items()):
            for field, prop in sorted((self.schemas[name].get("properties") or {}).items()):
                if not steps and field in ("apiVersion", "kind"):
                    continue  # TypeMeta is read before decoding, with errors of its own
                inner: tuple[tuple[str, ...], ...] = (("f", field),)
                node, depth = prop, 0
                go_path = ".".join(s[1] for s in (*steps, ("f", field)) if s[0] == "f")
                while True:
                    wrong = wrong_value(*self.schema(node))
                    if wrong is None:
                        break
                    yield name, field, depth, resource, _build((*steps, *inner), wrong), go_path
                    _, schema = self.schema(node)
                    if schema.get("type") == "array":
                        node, inner = schema["items"], (*inner, ("i",))
                    elif schema.get("type") == "object" and isinstance(schema.get("additionalProperties"), dict):
                        node, inner = schema["additionalProperties"], (*inner, ("v",))
                    else:
                        break
                    depth += 1

    def run(self) -> dict[str, dict[str, list[str]]]:
        probes = list(self.probes())
        print(f"probing {len(probes)} field types on the real server", file=sys.stderr)
        found: dict[str, dict[str, list[str]]] = {}

        def one(probe: tuple[str, str, int, ResourceType, Any, str]) -> tuple[str, str, int, str, str]:
            name, field, depth, resource, body, go_path = probe
            namespace = "/namespaces/default" if resource.namespaced else ""
            path = f"{resource.path_prefix()}{namespace}/{resource.plural}?dryRun=All&fieldValidation=Ignore"
            body = {"apiVersion": resource.group_version, "kind": resource.kind, **body}
            code, answer = self.server.request("POST", path, body)
            message = (answer or {}).get("message", "") if isinstance(answer, dict) else ""
            match = _TYPE_ERROR.search(message)
            reported = match.group(2).split(".") if match else []
            # Go names embedded (inlined) structs in the path: "volumes.VolumeSource.configMap".
            if code != 400 or match is None or ".".join(p for p in reported if not p[:1].isupper()) != go_path:
                raise RuntimeError(f"probe {name}.{field} (depth {depth}) got {code}: {message!r}")
            segment = [reported[-1]]
            for part in reversed(reported[:-1]):
                if not part[:1].isupper():
                    break
                segment.insert(0, part)
            return name, field, depth, f"{match.group(1)}:{'.'.join(segment)}", match.group(3)

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            for name, field, depth, struct, go_type in pool.map(one, probes):
                entry = found.setdefault(name, {}).setdefault(field, [struct])
                while len(entry) <= depth + 1:
                    entry.append("")
                entry[depth + 1] = go_type
        return {name: dict(sorted(fields.items())) for name, fields in sorted(found.items())}


def _build(steps: tuple[tuple[str, ...], ...], leaf: Any) -> Any:
    value = leaf
    for step in reversed(steps):
        if step[0] == "f":
            value = {step[1]: value}
        elif step[0] == "i":
            value = [value]
        else:
            value = {"k": value}
    return value


# --------------------------------------------------------------------------------------------
# main


def _write_gz(path: Path, document: Any) -> None:
    data = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
    path.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))


README = """\
# Bundled Kubernetes OpenAPI v3 documents

GENERATED by `devcluster/scripts/gen_builtin_openapi.py` - do not edit; re-run the script instead.

Source: the real kube-apiserver **{version}** of realcluster/ (`realcluster/bin/realcluster up`,
built from the Kubernetes Go modules by `scripts/build_realcluster.sh`), asked for `/openapi/v3`
and the documents of the group/versions devcluster serves built-in kinds in.

- `<api_v1|apis_GROUP_VERSION>.json.gz` ({group_versions}): the server's document for that
  group/version, trimmed to the paths devcluster routes for its kinds ({kinds}) and the component
  schemas reachable from them, descriptions kept. devcluster serves them at `/openapi/v3/...`
  (`devcluster/openapi/`) and decodes built-in objects against their schemas (`devcluster/decoding.py`).
- `go_types.json.gz`: schema name -> field -> `["<Go struct>:<Go field path segment>", <Go type of
  the field>, <of its items/values>, ...]`, as the same server names them in its decoding errors
  (`json: cannot unmarshal ... into Go struct field ContainerPort.spec...protocol of type v1.Protocol`),
  found by sending one wrongly typed value per field with `dryRun=All`.

Loaded lazily by `devcluster/bundled_openapi.py`; shipped as package data (devcluster/pyproject.toml).
"""


def generate(server: Server, out: Path) -> None:
    version = server.get("/version")["gitVersion"]
    index = server.get("/openapi/v3")["paths"]
    by_gv: dict[str, list[ResourceType]] = {}
    for resource in BUILTINS:
        by_gv.setdefault(resource.group_version, []).append(resource)
    out.mkdir(parents=True, exist_ok=True)
    all_schemas: dict[str, dict[str, Any]] = {}
    roots: list[tuple[ResourceType, str]] = []
    for group_version, resources in sorted(by_gv.items()):
        url = index[openapi_key(group_version)]["serverRelativeURL"]
        document = trim(server.get(url), resources)
        _write_gz(out / file_name(group_version), document)
        schemas = document["components"]["schemas"]
        all_schemas.update(schemas)
        for resource in resources:
            gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
            names = [n for n, s in schemas.items() if gvk in (s.get("x-kubernetes-group-version-kind") or [])]
            if len(names) != 1:
                raise RuntimeError(f"{gvk}: {len(names)} schemas")
            roots.append((resource, names[0]))
        print(f"{group_version}: {len(document['paths'])} paths, {len(schemas)} schemas", file=sys.stderr)
    prober = Prober(server, all_schemas)
    for resource, root in roots:
        prober.discover(resource, root)
    _write_gz(out / "go_types.json.gz", prober.run())
    kinds = ", ".join(sorted({r.kind for r in BUILTINS}))
    group_versions = ", ".join(f"`{openapi_key(gv)}`" for gv in sorted(by_gv))
    (out / "README.md").write_text(README.format(version=version, kinds=kinds, group_versions=group_versions))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", type=Path, help="use this running server instead of starting realcluster")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.kubeconfig:
        generate(Server(args.kubeconfig), args.out)
        return 0
    with RealCluster() as kubeconfig:
        generate(Server(kubeconfig), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Storage-version migration: re-encode every object of our CRDs at its storage version, then let the CRD forget the old.

Run it after an upgrade that changed a CRD's storage version (0.1.0 → 0.2.0: Darkroom ``v1alpha1`` → ``v1``), once the
new CRDs are applied (docs/operations/upgrading.md). For each CRD (by default every one under ``crds/``):

1. read the CRD: its storage version and ``status.storedVersions``; nothing to do when they are the same one version;
2. list every object (all namespaces, in pages) at the storage version and write each back unchanged (a PUT of the
   object as read, with its resourceVersion): kube-apiserver writes an object whose stored encoding differs from the
   new one, so each one stored at an old version is re-encoded at the storage version (a new resourceVersion; nothing
   else changes, not its generation, and no controller sees a change of spec); one already stored at it is a no-op.
   A conflict (someone wrote the object in between) or a 404 (deleted in between) is fine: that write stored it at the
   storage version already, or it is gone;
3. set the CRD's ``status.storedVersions`` to the storage version alone (a write of the status subresource at the
   CRD's resourceVersion: if the CRD changed meanwhile, nothing is written and the script says to run it again).

Only then may a later release stop serving the old version: kube-apiserver refuses a CRD whose spec drops a version
``storedVersions`` still lists. ``--dry-run`` reads and counts but writes nothing. Uses only the official
``kubernetes`` client; the kubeconfig's credentials need get/list/update of the custom resources and get/update of
``customresourcedefinitions/status``. Exit code 0 when every CRD is migrated, 1 otherwise (one line on stderr each).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config

ROOT = Path(__file__).resolve().parent.parent
FIELD_MANAGER = "migrate-storage-versions"
PAGE_SIZE = 250


@dataclass
class Outcome:
    """What the migration of one CRD did."""

    crd: str
    storage_version: str
    stored_before: list[str]
    objects: int = 0
    rewritten: int = 0  # re-encoded: a new resourceVersion
    skipped: int = 0  # written or deleted by someone else in between
    stored_after: list[str] | None = None

    def line(self, *, dry_run: bool) -> str:
        if self.stored_before == [self.storage_version]:
            return f"{self.crd}: storedVersions already [{self.storage_version}], nothing to do"
        if dry_run:
            return (
                f"{self.crd}: would rewrite {self.objects} object(s) at {self.storage_version} and set storedVersions "
                f"{self.stored_before} -> [{self.storage_version}]"
            )
        return (
            f"{self.crd}: {self.objects} object(s) read at {self.storage_version}, {self.rewritten} re-encoded, "
            f"{self.skipped} changed or deleted meanwhile; storedVersions {self.stored_before} -> {self.stored_after}"
        )


class MigrationError(Exception):
    """A step failed; the message says which and what to do."""


def crd_names(directory: Path) -> list[str]:
    """The names of the CRDs under ``directory`` (``crds/``)."""
    names = []
    for path in sorted(directory.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                names.append(str(doc["metadata"]["name"]))
    return names


def _as_dict(answer: object) -> dict[str, Any]:
    """A CustomObjectsApi answer: the client types it ``object``; it is the decoded JSON object."""
    if not isinstance(answer, dict):
        raise MigrationError(f"the API server answered {type(answer).__name__}, not an object")
    return answer


def _objects(custom: client.CustomObjectsApi, group: str, version: str, plural: str) -> Iterator[dict[str, Any]]:
    token = None
    while True:
        page = _as_dict(custom.list_cluster_custom_object(group, version, plural, limit=PAGE_SIZE, _continue=token))
        yield from page.get("items") or []
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return


def _write_back(custom: client.CustomObjectsApi, group: str, version: str, plural: str, obj: dict[str, Any]) -> bool | None:
    """PUT ``obj`` unchanged; whether its resourceVersion changed (None: written or deleted by someone else meanwhile)."""
    meta = obj["metadata"]
    try:
        if meta.get("namespace"):
            written = custom.replace_namespaced_custom_object(
                group, version, meta["namespace"], plural, meta["name"], obj, field_manager=FIELD_MANAGER
            )
        else:
            written = custom.replace_cluster_custom_object(group, version, plural, meta["name"], obj, field_manager=FIELD_MANAGER)
    except client.ApiException as e:
        if e.status in (404, 409):
            return None
        where = f"{meta.get('namespace')}/{meta['name']}" if meta.get("namespace") else meta["name"]
        raise MigrationError(f"{plural}.{group} {where}: the write back failed ({e.status} {e.reason}): {e.body}") from e
    return bool(_as_dict(written)["metadata"]["resourceVersion"] != meta["resourceVersion"])


def migrate(api: client.ApiClient, name: str, *, dry_run: bool = False) -> Outcome:
    """Migrate the objects of CRD ``name`` to its storage version and clear the others from ``storedVersions``."""
    extensions, custom = client.ApiextensionsV1Api(api), client.CustomObjectsApi(api)
    try:
        crd = api.sanitize_for_serialization(extensions.read_custom_resource_definition(name))
    except client.ApiException as e:
        raise MigrationError(f"{name}: cannot read the CRD ({e.status} {e.reason})") from e
    spec = crd["spec"]
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    outcome = Outcome(name, storage, list((crd.get("status") or {}).get("storedVersions") or []))
    if outcome.stored_before == [storage]:
        return outcome
    for obj in _objects(custom, spec["group"], storage, spec["names"]["plural"]):
        outcome.objects += 1
        if dry_run:
            continue
        changed = _write_back(custom, spec["group"], storage, spec["names"]["plural"], obj)
        if changed is None:
            outcome.skipped += 1
        elif changed:
            outcome.rewritten += 1
    if dry_run:
        return outcome
    # The status write carries the resourceVersion read before the objects: a CRD changed since (another storage
    # version?) is a conflict, and nothing is cleared that an object might still be stored at.
    crd["status"]["storedVersions"] = [storage]
    try:
        written = api.sanitize_for_serialization(
            extensions.replace_custom_resource_definition_status(name, crd, field_manager=FIELD_MANAGER)
        )
    except client.ApiException as e:
        if e.status == 409:
            raise MigrationError(f"{name}: the CRD changed while its objects were migrated; run the script again") from e
        raise MigrationError(f"{name}: setting status.storedVersions failed ({e.status} {e.reason}): {e.body}") from e
    outcome.stored_after = list(written["status"]["storedVersions"])
    return outcome


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")
    parser.add_argument("--crd", action="append", default=[], help="a CRD name (repeatable; default: every CRD under crds/)")
    parser.add_argument("--dry-run", action="store_true", help="read and count, write nothing")
    args = parser.parse_args(argv)
    names = args.crd or crd_names(ROOT / "crds")
    api = config.new_client_from_config(config_file=args.kubeconfig, context=args.context)
    failed = 0
    try:
        for name in names:
            try:
                print(migrate(api, name, dry_run=args.dry_run).line(dry_run=args.dry_run))
            except MigrationError as e:
                failed += 1
                print(f"migrate_storage_versions: {e}", file=sys.stderr)
    finally:
        api.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

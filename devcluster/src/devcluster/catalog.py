"""Which resources devcluster serves right now: the built-ins plus every Established CRD's versions.

The CRD controller (``controllers.py``) calls :meth:`Catalog.install` when a CRD becomes
Established and :meth:`Catalog.remove` once it is gone; routing, discovery and OpenAPI read
:meth:`Catalog.lookup` / :meth:`Catalog.all`. ``generation`` bumps on every change so cached
discovery/OpenAPI documents know when to rebuild.
"""

from __future__ import annotations

from typing import Any

from devcluster.resources import BUILTINS, ResourceType, from_crd, storage_version


class Catalog:
    def __init__(self) -> None:
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._crds: dict[str, list[ResourceType]] = {}
        self._crd_storage_version: dict[str, str] = {}
        self.generation = 0
        for resource in BUILTINS:
            self._by_gvr[(resource.group, resource.version, resource.plural)] = resource

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, plural))

    def builtin(self, group: str, plural: str) -> ResourceType:
        for resource in BUILTINS:
            if resource.group == group and resource.plural == plural:
                return resource
        raise KeyError(f"{group}/{plural}")

    def all(self) -> list[ResourceType]:
        return list(self._by_gvr.values())

    def group_versions(self) -> dict[str, list[ResourceType]]:
        out: dict[str, list[ResourceType]] = {}
        for resource in self._by_gvr.values():
            out.setdefault(resource.group_version, []).append(resource)
        return out

    def preferred_versions(self) -> dict[str, str]:
        """Preferred version per group: the CRD storage version, else the only built-in version."""
        preferred = {r.group: r.version for r in BUILTINS if r.group}
        for name, resources in self._crds.items():
            if resources:
                preferred[resources[0].group] = self._crd_storage_version[name]
        return preferred

    def storage_version_of(self, resource: ResourceType) -> str:
        return self._crd_storage_version.get(resource.crd_name, resource.version)

    def install(self, crd: dict[str, Any]) -> None:
        name = crd["metadata"]["name"]
        self._drop(name)
        resources = from_crd(crd)
        self._crds[name] = resources
        self._crd_storage_version[name] = storage_version(crd)
        for resource in resources:
            self._by_gvr[(resource.group, resource.version, resource.plural)] = resource
        self.generation += 1

    def remove(self, crd_name: str) -> None:
        self._drop(crd_name)
        self.generation += 1

    def crd_resources(self, crd_name: str) -> list[ResourceType]:
        return list(self._crds.get(crd_name, []))

    def _drop(self, name: str) -> None:
        for resource in self._crds.pop(name, []):
            self._by_gvr.pop((resource.group, resource.version, resource.plural), None)
        self._crd_storage_version.pop(name, None)

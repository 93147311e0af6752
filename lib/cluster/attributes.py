"""What an authorization decision is about: :class:`ResourceAttributes` and :class:`NonResourceAttributes`.

The attributes of a SubjectAccessReview (``spec.resourceAttributes`` / ``spec.nonResourceAttributes``),
exactly as kube-apiserver's RequestInfo derives them from a request: for a namespaced resource the
namespace (empty: every namespace), for the Namespace object itself ``namespace`` = ``name`` = its name.
Built by :mod:`cluster.acting` (reads served from the cache, writes refused by the server), the aggregated
API server's request parser and the dashboard's "may I" questions; reviewed by :mod:`cluster.reviewing`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cluster.resources import NAMESPACES, Resource


@dataclass(frozen=True)
class ResourceAttributes:
    """One verb on a resource (optionally a subresource, one namespace, one name)."""

    verb: str
    resource: str
    group: str = ""
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    version: str = ""

    @classmethod
    def of(
        cls, verb: str, resource: Resource, *, namespace: str | None = None, name: str = "", subresource: str = ""
    ) -> ResourceAttributes:
        """The attributes of ``verb`` on ``resource`` as kube derives them (a Namespace is its own namespace)."""
        if resource == NAMESPACES and name:
            namespace = name
        return cls(
            verb=verb,
            resource=resource.plural,
            group=resource.group,
            namespace=(namespace or "") if resource.namespaced or resource == NAMESPACES else "",
            name=name,
            subresource=subresource or "",
        )

    def review_fields(self) -> dict[str, Any]:
        fields = {
            "namespace": self.namespace,
            "verb": self.verb,
            "group": self.group,
            "version": self.version,
            "resource": self.resource,
            "subresource": self.subresource,
            "name": self.name,
        }
        return {"resourceAttributes": {k: v for k, v in fields.items() if v}}

    @property
    def qualified_resource(self) -> str:
        """``darkrooms.deployments.example.com`` (core resources bare, a subresource after a slash)."""
        resource = f"{self.resource}.{self.group}" if self.group else self.resource
        return f"{resource}/{self.subresource}" if self.subresource else resource

    def describe(self) -> str:
        """``list darkrooms.deployments.example.com in namespace "team-a"``: what was asked, for messages."""
        what = f"{self.verb} {self.qualified_resource}" + (f' "{self.name}"' if self.name and self.resource != NAMESPACES.plural else "")
        if self.namespace:
            return f'{what} in namespace "{self.namespace}"'
        return f"{what} in every namespace" if self.verb in ("list", "watch") else what

    def refused(self) -> str:
        """``you may not list darkrooms in namespace "team-b"``: a refusal as the person reads it (resources by plural)."""
        what = self.resource + (f"/{self.subresource}" if self.subresource else "")
        name = f' "{self.name}"' if self.name and self.resource != NAMESPACES.plural else ""
        where = f' in namespace "{self.namespace}"' if self.namespace else (" in every namespace" if self.verb in ("list", "watch") else "")
        return f"you may not {self.verb} {what}{name}{where}"

    def fields(self) -> dict[str, str]:
        """The non-empty attributes, for machine-readable answers (a problem's extension members)."""
        return {
            k: v
            for k, v in (
                ("verb", self.verb),
                ("group", self.group),
                ("resource", self.resource),
                ("subresource", self.subresource),
                ("namespace", self.namespace),
                ("name", self.name),
            )
            if v or k == "group"
        }

    def kube_message(self, user: str) -> str:
        """kube-apiserver's wording of a refusal (what ``kubectl`` users know)."""
        scope = f'in the namespace "{self.namespace}"' if self.namespace else "at the cluster scope"
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        name = f' "{self.name}"' if self.name else ""
        return (
            f'{self.qualified_resource}{name} is forbidden: User "{user}" cannot {self.verb} resource "{resource}" '
            f'in API group "{self.group}" {scope}'
        )


@dataclass(frozen=True)
class NonResourceAttributes:
    """A verb on a path that is no resource (``/apis``, ``/openapi/v3``, ``/metrics``)."""

    path: str
    verb: str

    def review_fields(self) -> dict[str, Any]:
        return {"nonResourceAttributes": {"path": self.path, "verb": self.verb}}

    def describe(self) -> str:
        return f'{self.verb} path "{self.path}"'


Attributes = ResourceAttributes | NonResourceAttributes

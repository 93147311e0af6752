"""Apply conflicts: which fields another manager owns, and the 409 text and causes kube sends for them
(``printManager``'s quoting, grouping by manager).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from devcluster import gofmt
from devcluster.errors import Cause

# --------------------------------------------------------------------------------------------
# Conflicts


@dataclass(frozen=True)
class FieldConflict:
    """One field the apply would change that another manager owns."""

    manager: str
    api_version: str
    field: str
    operation: str = "Update"
    subresource: str = ""

    def manager_text(self) -> str:
        """The manager as kube prints it (``printManager``): ``"m"``, ``"m" using v1``, ..."""
        text = gofmt.quote(self.manager)
        if self.subresource:
            text += f" with subresource {gofmt.quote(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text

    def _identifier(self) -> str:
        """Sort key: the JSON manager identifier kube sorts conflicts by."""
        ident: dict[str, str] = {"manager": self.manager, "operation": self.operation}
        if self.operation == "Update" and self.api_version:
            ident["apiVersion"] = self.api_version
        if self.subresource:
            ident["subresource"] = self.subresource
        return orjson.dumps(ident).decode()


class ApplyConflict(Exception):
    """Apply would change fields other managers own (kube answers 409 Conflict)."""

    def __init__(self, conflicts: list[FieldConflict]) -> None:
        self.conflicts = list(conflicts)
        super().__init__(self.message())

    def message(self) -> str:
        """kube's ``Apply failed with N conflict(s): ...`` text."""
        if len(self.conflicts) == 1:
            c = self.conflicts[0]
            return f"Apply failed with 1 conflict: conflict with {c.manager_text()}: {c.field}"
        grouped: dict[str, list[FieldConflict]] = {}
        for c in self.conflicts:
            grouped.setdefault(c._identifier(), []).append(c)
        lines: list[str] = []
        for ident in sorted(grouped):
            group = grouped[ident]
            lines.append(f"conflicts with {group[0].manager_text()}:")
            lines.extend(f"- {c.field}" for c in group)
        return f"Apply failed with {len(self.conflicts)} conflicts: " + "\n".join(lines)

    def causes(self) -> list[Cause]:
        return [Cause(c.field, "FieldManagerConflict", f"conflict with {c.manager_text()}") for c in self.conflicts]

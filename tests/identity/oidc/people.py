"""The people of the identity tests and their ID tokens (helpers and constants, no tests, no fixtures).

:data:`PEOPLE` are the ``teams`` of :mod:`identityfixtures` (alice edits team-a; bob views team-a and edits team-b;
carol has nothing) in :data:`NAMESPACES`; :data:`MORE_PEOPLE` are the ones the conftest's ``more_people`` adds to
the provider (erin with :data:`DARKROOM_MAKER_ROLE` in team-a, mallory of ``system:masters`` at the provider, dave
with no bindings). :class:`Tokens` holds the panel client's ID token per person (the conftest's ``tokens``);
:func:`wait_until_epoch` waits until the wall clock passes a moment such as a token's ``exp``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from tests.identityfixtures import GROUP_PREFIX, TEAM_A, TEAM_B, Panel
from tests.identityprovider import User
from tests.support import wait_for

PEOPLE = ("alice", "bob", "carol")
NAMESPACES = (TEAM_A, TEAM_B)
MORE_PEOPLE = {
    "erin": User("erin", "erin-password", ("darkroom-makers",)),
    "mallory": User("mallory", "mallory-password", ("system:masters",)),
    "dave": User("dave", "dave-password", ("revocable",)),
}
DARKROOM_MAKER_ROLE = f"""\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: darkroom-maker, namespace: {TEAM_A}}}
rules:
  - apiGroups: [deployments.example.com, database.db.example.com]
    resources: [darkrooms, postgresqls]
    verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {{name: darkroom-makers, namespace: {TEAM_A}}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: darkroom-maker}}
subjects: [{{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "{GROUP_PREFIX}darkroom-makers"}}]
"""


@dataclass
class Tokens:
    """ID tokens of the panel client per person, signed in once each (an hour's lifetime: the session's)."""

    panel: Panel
    _tokens: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __getitem__(self, person: str) -> str:
        with self._lock:
            if person not in self._tokens:
                self._tokens[person] = self.panel.id_token(person)
            return self._tokens[person]

    def bearer(self, person: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self[person]}", "Accept": "application/json"}


def wait_until_epoch(moment: float, *, message: str) -> None:
    """Until the wall clock passes ``moment`` (a token's ``exp``: what the test waits for is time itself)."""
    wait_for(lambda: time.time() > moment or None, timeout_s=max(1.0, moment - time.time() + 5), interval_s=0.1, message=message)

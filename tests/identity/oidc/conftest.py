"""What the identity suites share: the control plane as its admin and as each person, its audit log, more people,
ID tokens per person, an impersonating panel, and a reader of Server-Sent Events streams.

Everything runs on the ``oidc_realcluster`` (real kube-apiserver trusting the session's ORY Hydra) with the ``teams``
of :mod:`identityfixtures` (alice edits team-a; bob views team-a and edits team-b; carol has nothing) and these people
added to the provider (:func:`more_people`):

- **erin** (group ``darkroom-makers``): a custom Role in team-a that may do everything with Darkrooms and Postgresqls
  and nothing with Secrets;
- **mallory** (group ``system:masters`` at the provider): kube and the panel must make that ``oidc:system:masters``,
  which has no rights at all;
- **dave** (group ``revocable``): no bindings; a test grants and revokes his rights.

The fixtures are here; what tests import lives beside them, one module each: control_plane.py (:class:`ControlPlane`
asks kube-apiserver directly — as its admin or with a person's own token —, :class:`AuditLog` reads its audit log:
``oidc_audit_log``, access reviews with their bodies), people.py (the people, :class:`Tokens`), kinds_and_bodies.py
(our kinds, fresh names, valid bodies), panel_http.py (a panel as a browser meets it: ``loopback``, ``problem``, the
stored login session) and event_stream.py (:class:`EventStream` reads one SSE stream — ``/watch`` or a dashboard live
list — in a thread, keeping every frame and the id the stream has reached).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
import requests

from tests.identityfixtures import Panel, Teams
from tests.identityprovider import HydraProcess, User

from .control_plane import AuditLog, ControlPlane
from .event_stream import EventStream
from .people import DARKROOM_MAKER_ROLE, MORE_PEOPLE, Tokens

# --- the control plane, asked directly, and its audit log ---------------------------------------------------------


@pytest.fixture(scope="session")
def control_plane(teams: Teams) -> Iterator[ControlPlane]:
    found = ControlPlane(teams.cluster)
    yield found
    found.http.close()


@pytest.fixture(scope="session")
def audit(oidc_audit_log: Path) -> AuditLog:
    return AuditLog(oidc_audit_log)


# --- people --------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def more_people(teams: Teams, identity_provider: HydraProcess) -> Mapping[str, User]:
    """erin, mallory and dave at the provider, erin's Role in team-a (see the module docstring)."""
    identity_provider.users.update(MORE_PEOPLE)
    teams.kubectl("apply", "-f", "-", input_text=DARKROOM_MAKER_ROLE)
    return MORE_PEOPLE


@pytest.fixture(scope="session")
def tokens(panel: Panel, more_people: Mapping[str, User]) -> Tokens:
    return Tokens(panel)


@pytest.fixture(scope="session")
def impersonating_panel(panel_factory: Callable[..., Panel]) -> Panel:
    """A control panel that verifies ID tokens itself and impersonates their people (``identity=impersonate``)."""
    return panel_factory("impersonate")


# --- Server-Sent Events --------------------------------------------------------------------------------------------


@pytest.fixture
def open_streams() -> Iterator[Callable[..., EventStream]]:
    """Factory of :class:`EventStream` (``open(http, url, headers)``); every one closed at teardown."""
    opened: list[EventStream] = []

    def open_stream(http: requests.Session, url: str, headers: Mapping[str, str] | None = None) -> EventStream:
        stream = EventStream(http, url, headers)
        opened.append(stream)
        return stream

    yield open_stream
    for stream in opened:
        stream.close()

"""A Postgresql's password Secret and its data (darkroom_operator.pgpasswords): the pure rules.

Behaviours: a new Postgresql takes back only the Secret the product kept with *this* data volume (our
managed-by label, its instance label, an ownerReference to the live data PVC, no controller but a former
Postgresql) — a Secret owned by another PVC, by something else, unlabelled or already someone's is not
taken; the owners it then gets put the Postgresql first (where the API's password write tests for it), keep
the data PVC and whatever else someone added, and drop the former Postgresql. ``status.dataVolume``: a PVC
older than the Postgresql holds reused data, a newer one fresh data; in the same second, what was seen at
first hand (the PVC was there before our StatefulSet) or remembered decides. Whose password reused data has:
Kept when the kept Secret was taken back, New when it was generated (or written by the API) now, Referenced
with a passwordSecretRef, remembered once recorded, and judged by age when the record was lost.
"""

from __future__ import annotations

from typing import Any

from darkroom_operator.pgpasswords import GENERATED, OURS, REFERENCED, TAKEN_BACK, Outcome, data_volume, kept_for, owners

from kinds import postgresqls as kind

NOW = "2027-03-31T17:00:05Z"
EARLIER = "2027-03-31T16:00:00Z"
LATER = "2027-03-31T17:00:09Z"


def postgresql(created: str = NOW, uid: str = "pg-2", **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "database.db.example.com/v1",
        "kind": "Postgresql",
        "metadata": {"name": "shop", "namespace": "ns", "uid": uid, "creationTimestamp": created},
        "spec": {},
        "status": status,
    }


def claim(created: str = EARLIER, uid: str = "pvc-1") -> dict[str, Any]:
    return {"metadata": {"name": "data-shop-0", "namespace": "ns", "uid": uid, "creationTimestamp": created}}


def secret(*refs: dict[str, Any], created: str = EARLIER, **labels: str) -> dict[str, Any]:
    given = {"app.kubernetes.io/managed-by": "darkroom-control-panel", "app.kubernetes.io/instance": "shop", **labels}
    meta = {"name": "shop-credentials", "uid": "s-1", "creationTimestamp": created, "labels": given, "ownerReferences": list(refs)}
    return {"metadata": meta}


FORMER = {"apiVersion": "database.db.example.com/v1", "kind": "Postgresql", "name": "shop", "uid": "pg-1", "controller": True}
DATA = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": "data-shop-0", "uid": "pvc-1"}


def test_only_the_secret_kept_with_this_data_is_taken_back() -> None:
    pg, data = postgresql(), claim()
    assert kept_for(secret(FORMER, DATA), pg, data)
    assert kept_for(secret(DATA), pg, data)  # garbage collection dropped the former Postgresql's reference
    assert not kept_for(secret(FORMER, DATA), pg, None)  # no data volume: nothing to keep it for
    assert not kept_for(secret(FORMER, {**DATA, "uid": "pvc-other"}), pg, data)  # another volume of that name
    assert not kept_for(secret(FORMER), pg, data)  # not kept with the data: a former Postgresql's leftover at most
    assert not kept_for(secret(DATA, **{"app.kubernetes.io/managed-by": "someone"}), pg, data)
    assert not kept_for(secret(DATA, **{"app.kubernetes.io/instance": "other"}), pg, data)
    assert not kept_for(secret({**FORMER, "kind": "Deployment"}, DATA), pg, data)  # controlled by something else


def test_the_owners_put_the_postgresql_first_and_keep_the_data() -> None:
    foreign = {"apiVersion": "v1", "kind": "ConfigMap", "name": "backup", "uid": "cm-1"}
    result = owners(secret(FORMER, DATA, foreign), postgresql(), claim())
    assert [(r["kind"], r["uid"], r.get("controller", False)) for r in result] == [
        ("Postgresql", "pg-2", True),
        ("PersistentVolumeClaim", "pvc-1", False),
        ("ConfigMap", "cm-1", False),
    ]
    assert "blockOwnerDeletion" not in result[1]  # never holds the volume's deletion back


def test_which_data_a_volume_holds() -> None:
    kept = Outcome(None, TAKEN_BACK)
    assert data_volume(postgresql(), None, kept, before_statefulset=True) is None
    assert data_volume(postgresql(), claim(created=LATER), kept, before_statefulset=False) == {"claim": "data-shop-0", "reused": False}
    assert data_volume(postgresql(), claim(created=EARLIER), kept, before_statefulset=False) == {
        "claim": "data-shop-0",
        "reused": True,
        "password": kind.KEPT,
    }
    # The same second: seen at first hand, or remembered.
    assert data_volume(postgresql(), claim(created=NOW), kept, before_statefulset=True)["reused"] is True  # type: ignore[index]
    assert data_volume(postgresql(), claim(created=NOW), kept, before_statefulset=False)["reused"] is False  # type: ignore[index]
    remembered = postgresql(dataVolume={"claim": "data-shop-0", "reused": True, "password": kind.KEPT})
    assert data_volume(remembered, claim(created=NOW), Outcome(None, OURS), before_statefulset=False) == {
        "claim": "data-shop-0",
        "reused": True,
        "password": kind.KEPT,
    }


def test_whose_password_reused_data_has() -> None:
    def origin(pg: dict[str, Any], outcome: Outcome | None) -> Any:
        return (data_volume(pg, claim(), outcome, before_statefulset=False) or {}).get("password")

    assert origin(postgresql(), Outcome(None, TAKEN_BACK)) == kind.KEPT
    assert origin(postgresql(), Outcome(None, GENERATED)) == kind.NEW
    assert origin(postgresql(), None) is None  # not looked at yet (an invalid spec)
    referenced = {**postgresql(), "spec": {"passwordSecretRef": {"name": "mine"}}}
    assert origin(referenced, Outcome(None, REFERENCED)) == kind.REFERENCED
    # Remembered once recorded; judged by age when the record was lost.
    assert origin(postgresql(dataVolume={"claim": "data-shop-0", "reused": True, "password": kind.NEW}), Outcome(None, OURS)) == kind.NEW
    assert origin(postgresql(), Outcome(None, OURS, secret(created=EARLIER))) == kind.KEPT
    assert origin(postgresql(), Outcome(None, OURS, secret(created=NOW))) == kind.NEW  # written by the API with this Postgresql

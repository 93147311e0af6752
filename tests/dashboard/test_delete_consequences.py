"""What a delete confirmation says goes with an object (backend.dashboard.consequences): from the object's state."""

from __future__ import annotations

from typing import Any

import pytest

from backend.dashboard.consequences import deletes_with


def darkroom(**source: Any) -> dict[str, Any]:
    return {"name": "web", "source": {"type": "S3", "credentialsSet": "credentialsSecret" in source, "credentialsSecret": None, **source}}


@pytest.mark.parametrize(
    ("obj", "said", "unsaid"),
    [
        (darkroom(type="WebFolder"), "Its Deployment, Service, Ingress and ConfigMap go with it.", "credentials"),
        (darkroom(), "Its Deployment, Service, Ingress and ConfigMap go with it.", "credentials"),  # a public bucket
        (
            darkroom(credentialsSecret={"name": "web-s3-credentials", "owned": True}),
            "go with it, and so do the S3 credentials stored for it (Secret web-s3-credentials).",
            "stays",
        ),
        (
            darkroom(credentialsSecret={"name": "my-keys", "owned": False}),
            "go with it. Your Secret my-keys, which holds its S3 credentials, stays.",
            "so do",
        ),
    ],
    ids=["webfolder", "public-bucket", "stored-keys", "users-secret"],
)
def test_a_darkroom_names_the_credentials_that_go_or_stay(obj: dict[str, Any], said: str, unsaid: str) -> None:
    sentence = deletes_with("Darkroom", obj)
    assert said in sentence and unsaid not in sentence


def postgresql(policy: str, ref: dict[str, str] | None = None, claim: str | None = None) -> dict[str, Any]:
    status = {"dataVolume": {"claim": claim, "reused": True}} if claim else {"dataVolume": None}
    return {"name": "shop", "deletionPolicy": policy, "passwordSecretRef": ref, "status": status}


def test_a_retained_postgresql_keeps_its_volume_and_the_password_of_its_data() -> None:
    sentence = deletes_with("Postgresql", postgresql("Retain"))
    assert sentence == (
        "Its StatefulSet, Services and ConfigMap go with it. Its data volume (data-shop-0) and its password Secret"
        " (shop-credentials) stay (deletion policy Retain): a database of the same name would run on that data, with that"
        " password."
    )


def test_a_postgresql_with_policy_delete_takes_its_volume_and_password_secret() -> None:
    sentence = deletes_with("Postgresql", postgresql("Delete", claim="data-shop-0"))
    assert "Its data volume (data-shop-0) and its password Secret (shop-credentials) are deleted too (deletion policy Delete)." in sentence
    assert "stay" not in sentence


@pytest.mark.parametrize("policy", ["Retain", "Delete"])
def test_a_referenced_password_secret_always_stays(policy: str) -> None:
    sentence = deletes_with("Postgresql", postgresql(policy, ref={"name": "my-pw", "key": "password"}))
    assert sentence.endswith("Your Secret my-pw, which holds its password, stays.")
    assert "shop-credentials" not in sentence
    assert ("is deleted too" in sentence) == (policy == "Delete")


def test_a_task() -> None:
    assert deletes_with("Task", {"name": "t"}) == "It and its lifecycle go; its Events expire on their own."

"""What the comparison leaves out because the clusters' shared use decides it, not the servers (comparing.py's
docstring): the product's API groups in discovery lists, and the order of managedFields entries of one operation.
Everything else in those lists is still compared."""

from __future__ import annotations

from typing import Any

from fidelity.comparing import PRODUCT_GROUPS, compare_values


def differences(kube: Any, dev: Any, subset: tuple[str, ...] = ()) -> list[tuple[str, Any, Any]]:
    out: list[tuple[str, Any, Any]] = []
    compare_values("body", kube, dev, out, subset)
    return out


def group(name: str) -> dict[str, Any]:
    return {"name": name, "versions": [{"groupVersion": f"{name}/v1", "version": "v1"}]}


def entry(manager: str, operation: str) -> dict[str, Any]:
    return {"manager": manager, "operation": operation, "apiVersion": "v1", "time": "<time>"}


def test_the_products_groups_are_the_crds_groups() -> None:
    assert {"deployments.example.com", "database.db.example.com", "example.example.com"} == PRODUCT_GROUPS


def test_a_product_group_on_one_side_only_is_no_difference() -> None:
    kube = {"groups": [group("apps"), group("widgets.fidelity.example.com")]}
    dev = {"groups": [group("apps"), group("deployments.example.com"), group("widgets.fidelity.example.com")]}
    assert differences(kube, dev, subset=("body.groups",)) == []


def test_any_other_group_on_one_side_only_is_one() -> None:
    kube = {"groups": [group("apps")]}
    dev = {"groups": [group("apps"), group("widgets.fidelity.example.com")]}
    assert [path for path, _, _ in differences(kube, dev, subset=("body.groups",))] == ["body.groups[name=widgets.fidelity.example.com]"]


def test_managed_fields_of_one_operation_in_either_order_are_no_difference() -> None:
    kube = {"managedFields": [entry("two", "Apply"), entry("one", "Apply"), entry("three", "Update")]}
    dev = {"managedFields": [entry("one", "Apply"), entry("two", "Apply"), entry("three", "Update")]}
    assert differences(kube, dev) == []


def test_an_update_entry_before_an_apply_entry_is_one() -> None:
    kube = {"managedFields": [entry("one", "Apply"), entry("three", "Update")]}
    dev = {"managedFields": [entry("three", "Update"), entry("one", "Apply")]}
    assert differences(kube, dev) == [("body.managedFields.<order>", ["Apply", "Update"], ["Update", "Apply"])]

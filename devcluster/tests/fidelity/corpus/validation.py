"""fieldValidation Strict / Warn / Ignore (and the default) on custom resources and on built-in kinds:
unknown fields (top level, nested, in metadata), duplicate JSON keys, wrong types, on create,
update, every patch type and apply."""

from __future__ import annotations

from fidelity.corpus import sequence
from fidelity.corpus.common import group_of, install_crd, widget, widget_crd
from fidelity.transcript import APPLY, JSON_PATCH, MERGE, Side

MODES = ("Strict", "Warn", "Ignore")


@sequence("validation.custom-resources")
def custom_resources(s: Side) -> None:
    path = install_crd(s, widget_crd(s), record=False)
    group = group_of(s)
    for mode in MODES:
        body = widget(f"u-{mode.lower()}", {"size": 1, "bogus": True, "nested": {"deep": {"extra": 1}}}, group)
        body["metadata"]["bogusMeta"] = "x"
        body["topLevel"] = 1
        s.post(f"create-unknown-{mode}", path, body, query={"fieldValidation": mode})
    s.post("create-unknown-default", path, {**widget("u-default", {"size": 1, "bogus": True}, group), "topLevel": 1})
    for mode in MODES:
        name = f"dup-{mode.lower()}"
        duplicate = f'{{"apiVersion": "{group}/v1", "kind": "Widget", "metadata": {{"name": "{name}"}}, "spec": {{"size": 1, "size": 2}}}}'
        s.post(f"create-duplicate-{mode}", path, duplicate.encode(), query={"fieldValidation": mode})
    s.post("create-ok", path, widget("ok", {"size": 2}, group))
    for mode in MODES:
        s.patch(f"merge-unknown-{mode}", f"{path}/ok", {"spec": {"unknownByMerge": 1}}, MERGE, query={"fieldValidation": mode})
        s.patch(
            f"json-unknown-{mode}",
            f"{path}/ok",
            [{"op": "add", "path": "/spec/unknownByJson", "value": 1}],
            JSON_PATCH,
            query={"fieldValidation": mode},
        )
        s.patch(
            f"apply-unknown-{mode}",
            f"{path}/ok",
            {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "ok"}, "spec": {"size": 2, "unknownByApply": 1}},
            APPLY,
            query={"fieldValidation": mode, "fieldManager": "v"},
        )
    s.post("create-bad-mode", path, widget("bad-mode", {"size": 1}, group), query={"fieldValidation": "Loud"})
    s.get("final", f"{path}/ok")


@sequence("validation.builtin-configmap")
def builtin_configmap(s: Side) -> None:
    base = f"/api/v1/namespaces/{s.ns}/configmaps"
    for mode in MODES:
        s.post(
            f"create-unknown-{mode}",
            base,
            {"metadata": {"name": f"c-{mode.lower()}", "bogusMeta": 1}, "data": {"a": "b"}, "bogus": 1},
            query={"fieldValidation": mode},
        )
    s.post("create-unknown-default", base, {"metadata": {"name": "c-default"}, "bogus": 1})
    for mode in MODES:
        s.post(
            f"create-duplicate-{mode}",
            base,
            f'{{"metadata": {{"name": "d-{mode.lower()}"}}, "data": {{"a": "1"}}, "data": {{"b": "2"}}}}'.encode(),
            query={"fieldValidation": mode},
        )
    for mode in MODES:
        s.patch(f"merge-unknown-{mode}", f"{base}/c-ignore", {"bogusByMerge": 1}, MERGE, query={"fieldValidation": mode})
        s.patch(
            f"apply-unknown-{mode}",
            f"{base}/c-ignore",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c-ignore"}, "bogusByApply": 1},
            APPLY,
            query={"fieldValidation": mode, "fieldManager": "v"},
        )
    s.post("create-wrong-type", base, {"metadata": {"name": "wt"}, "data": {"a": 1}})
    s.post("create-wrong-type-meta", base, {"metadata": {"name": "wt2", "labels": "x"}})


@sequence("validation.builtin-deployment")
def builtin_deployment(s: Side) -> None:
    base = f"/apis/apps/v1/namespaces/{s.ns}/deployments"
    template = {"metadata": {"labels": {"app": "v"}}, "spec": {"containers": [{"name": "c", "image": "nginx", "bogusContainerField": 1}]}}
    for mode in MODES:
        body = {
            "metadata": {"name": f"d-{mode.lower()}"},
            "spec": {"selector": {"matchLabels": {"app": "v"}}, "template": template, "bogusSpec": 1},
        }
        s.post(f"create-unknown-{mode}", base, body, query={"fieldValidation": mode, "dryRun": "All"})
    wrong = {"metadata": {"name": "wt"}, "spec": {"replicas": "two", "selector": {"matchLabels": {"app": "v"}}, "template": template}}
    s.post("create-wrong-type", base, wrong, query={"dryRun": "All"})

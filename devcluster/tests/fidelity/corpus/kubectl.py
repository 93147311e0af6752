"""kubectl (v1.32, the one on PATH) as an independent client against both servers: server-side
dry-run deletes (the data-loss case), server-side apply with conflicts, explain of nested fields,
printing, api-resources. Outputs are compared after the same normalisation as HTTP bodies."""

from __future__ import annotations

import time

from devcluster.resources import BUILTINS
from fidelity.corpus import sequence
from fidelity.corpus.common import group_of, install_crd, openapi_published, widget_crd
from fidelity.transcript import Side

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
data:
  owner: {value}
"""


@sequence("kubectl.dry-run-deletes")
def dry_run_deletes(s: Side) -> None:
    ns = s.ns
    s.kubectl("create-cm", "create", "configmap", "keep", "-n", ns, "--from-literal=a=b")
    s.kubectl("delete-cm-dry-run", "delete", "configmap", "keep", "-n", ns, "--dry-run=server")
    s.kubectl("cm-still-there", "get", "configmap", "keep", "-n", ns, "-o", "jsonpath={.data.a}")
    s.kubectl("delete-all-dry-run", "delete", "configmaps", "--all", "-n", ns, "--dry-run=server", "--selector=!nothing")
    s.kubectl("cm-still-there-2", "get", "configmap", "keep", "-n", ns, "-o", "name")
    s.kubectl("delete-ns-dry-run", "delete", "namespace", ns, "--dry-run=server")
    s.kubectl("ns-still-active", "get", "namespace", ns, "-o", "jsonpath={.status.phase}")
    s.kubectl("cm-still-there-3", "get", "configmap", "keep", "-n", ns, "-o", "name")


@sequence("kubectl.apply-and-create")
def apply_and_create(s: Side) -> None:
    ns = s.ns
    s.kubectl("apply-a", "apply", "--server-side", "--field-manager=a", "-n", ns, "-f", "-", input_text=CONFIGMAP.format(value="a"))
    s.kubectl(
        "apply-b-conflict", "apply", "--server-side", "--field-manager=b", "-n", ns, "-f", "-", input_text=CONFIGMAP.format(value="b")
    )
    s.kubectl(
        "apply-b-force",
        "apply",
        "--server-side",
        "--field-manager=b",
        "--force-conflicts",
        "-n",
        ns,
        "-f",
        "-",
        input_text=CONFIGMAP.format(value="b"),
    )
    s.kubectl("get-value", "get", "configmap", "applied", "-n", ns, "-o", "jsonpath={.data.owner}")
    s.kubectl(
        "managers", "get", "configmap", "applied", "-n", ns, "--show-managed-fields", "-o", "jsonpath={.metadata.managedFields[*].manager}"
    )
    s.kubectl("client-apply", "apply", "-n", ns, "-f", "-", input_text=CONFIGMAP.format(value="c").replace("applied", "client"))
    s.kubectl("client-apply-again", "apply", "-n", ns, "-f", "-", input_text=CONFIGMAP.format(value="d").replace("applied", "client"))
    s.kubectl("create-dry-run-yaml", "create", "configmap", "dry", "-n", ns, "--from-literal=x=y", "--dry-run=server", "-o", "yaml")
    s.kubectl("create-existing", "create", "configmap", "applied", "-n", ns)
    s.kubectl("get-missing", "get", "configmap", "missing", "-n", ns)
    s.kubectl("label", "label", "configmap", "applied", "-n", ns, "tier=x")
    s.kubectl("annotate-overwrite-refused", "annotate", "configmap", "applied", "-n", ns, "a=1")
    s.kubectl("get-by-label", "get", "configmaps", "-n", ns, "-l", "tier=x", "-o", "name")
    s.kubectl("scale-missing", "scale", "deployment", "nothing", "-n", ns, "--replicas=2")
    s.kubectl(
        "patch-json",
        "patch",
        "configmap",
        "applied",
        "-n",
        ns,
        "--type=json",
        "-p",
        '[{"op":"add","path":"/data/p","value":"q"}]',
        "-o",
        "jsonpath={.data}",
    )
    s.kubectl("diff", "diff", "-n", ns, "-f", "-", input_text=CONFIGMAP.format(value="z"))


@sequence("kubectl.explain")
def explain(s: Side) -> None:
    for target in (
        "deployment.spec.replicas",
        "configmap.data",
        "service.spec.type",
        "namespace.status.phase",
        "pods.spec.containers.image",
    ):
        s.kubectl(f"explain-{target}", "explain", target)
    s.kubectl("explain-recursive", "explain", "lease.spec", "--recursive")
    install_crd(s, widget_crd(s), record=False)
    group = group_of(s)
    published = openapi_published(s, f"apis/{group}/v1")
    # kube-apiserver publishes a new CRD's discovery and OpenAPI documents a moment after the CRD is
    # Established, and kubectl caches both: wait, unrecorded, until kubectl can explain the kind at all.
    deadline = time.monotonic() + 30
    while not s.kubectl_output("explain", f"widgets.{group}") and time.monotonic() < deadline:
        time.sleep(0.5)
    s.kubectl("explain-crd", "explain", f"widgets.{group}.spec.ports.protocol")
    s.kubectl("explain-crd-root", "explain", f"widgets.{group}")
    s.kubectl("explain-unknown-field", "explain", "configmap.nothing")
    s.fact("crd-openapi-published", published)


@sequence("kubectl.printing", namespaced=True)
def printing(s: Side) -> None:
    ns = s.ns
    served = {(r.plural, r.group_version) for r in BUILTINS}
    listing = s.kubectl_output("api-resources", "--no-headers")
    rows = [line.split() for line in listing.splitlines()]
    s.fact("api-resources-served", sorted(row for row in rows if len(row) >= 4 and (row[0], row[-3]) in served))
    s.kubectl("create-cm", "create", "configmap", "p", "-n", ns, "--from-literal=a=b")
    s.kubectl("get-cm-wide", "get", "configmap", "p", "-n", ns, "-o", "custom-columns=NAME:.metadata.name,DATA:.data.a")
    s.kubectl("get-cm-json-items", "get", "configmaps", "p", "-n", ns, "-o", "jsonpath={.kind} {.metadata.name} {.data}")
    s.kubectl("get-unknown-kind", "get", "nothings", "-n", ns)
    s.kubectl("get-short-name", "get", "cm", "p", "-n", ns, "-o", "name")
    s.kubectl("get-category-all", "get", "all", "-n", ns, "-o", "name")

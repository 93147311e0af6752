"""OpenAPI v3 documents: ``/openapi/v3`` and ``/openapi/v3/api/v1``, ``/openapi/v3/apis/{group}/{version}``.

Group/versions of built-in kinds serve the real kube-apiserver's documents (Kubernetes v1.37.2,
bundled by ``scripts/gen_builtin_openapi.py``, read by ``bundled_openapi.py``), trimmed to the
paths devcluster routes (:func:`served_paths`) and the schemas they reach, descriptions included.
Custom resources get documents generated here, shaped as kube-apiserver shapes CRD documents; the
meta/v1 and autoscaling/v1 schemas they refer to are the bundled definitions (no copy of their text here).

kubectl 1.32 reads these for three things, and both kinds of document serve them:

* field-validation support (``k8s.io/cli-runtime/pkg/resource/query_param_verifier_v3.go``): for a
  GVK it walks the paths of the GVK's group/version document and takes the *first* PATCH operation
  whose ``x-kubernetes-group-version-kind`` equals the GVK; that operation must carry an
  ``in: query`` ``fieldValidation`` parameter. Go map order is random, so every PATCH operation
  tagged with a GVK (the item path and the ``/status`` path alike) carries it - in the real
  documents too.
* ``kubectl apply``'s patch type (``k8s.io/kubectl/pkg/cmd/apply/patcher.go``,
  ``gvkSupportsPatchOpenAPIV3``): strategic merge patch is computed from these schemas if the
  first matching PATCH operation accepts ``application/strategic-merge-patch+json``. The real
  documents list it for built-ins, so kubectl computes strategic merge patches from their
  ``x-kubernetes-patch-strategy``/``-merge-key``; generated CR documents do not, so kubectl
  sends JSON merge patches for custom resources, as with kube-apiserver.
* ``kubectl explain`` (``k8s.io/kubectl/pkg/explain/v2/templates/plaintext.tmpl``): finds the GVK
  on an operation of ``/<prefix>/<resource>``, ``.../{name}``, ``.../namespaces/{namespace}/<resource>``
  or ``.../{name}`` and then the ``components.schemas`` entry whose
  ``x-kubernetes-group-version-kind`` list contains it, and follows ``$ref``s down to any field
  (``kubectl explain deployment.spec.replicas``). Custom resources get their CRD's openAPIV3Schema.

Names mirror kube-apiserver: schema keys ``io.k8s.api.core.v1.ConfigMap`` /
``com.example.deployments.v1alpha1.Darkroom``, operation ids ``patchCoreV1NamespacedConfigMap``,
``x-kubernetes-action`` values ``get``/``list``/``post``/``put``/``patch``/``delete``/``deletecollection``.

The package, in dependency order: ``names`` (constants, schema names, refs), ``parameters``,
``operations`` (a resource's paths), ``schemas`` (components), ``documents`` (whole documents).
"""

from __future__ import annotations

from devcluster.openapi.documents import document_hash, group_version_document, root_document, served_paths
from devcluster.openapi.names import (
    DELETE_OPTIONS,
    INFO,
    LIST_META,
    LIST_RESPONSE_CONTENT_TYPES,
    META,
    OBJECT_META,
    OPENAPI_VERSION,
    PATCH,
    PATCH_CONTENT_TYPES,
    RESPONSE_CONTENT_TYPES,
    SCALE,
    STATUS,
    group_version_for_path,
    openapi_path,
    schema_name,
)
from devcluster.openapi.operations import resource_paths
from devcluster.openapi.schemas import kind_schema, list_schema, meta_schemas, scale_schemas

__all__ = [
    "DELETE_OPTIONS",
    "INFO",
    "LIST_META",
    "LIST_RESPONSE_CONTENT_TYPES",
    "META",
    "OBJECT_META",
    "OPENAPI_VERSION",
    "PATCH",
    "PATCH_CONTENT_TYPES",
    "RESPONSE_CONTENT_TYPES",
    "SCALE",
    "STATUS",
    "document_hash",
    "group_version_document",
    "group_version_for_path",
    "kind_schema",
    "list_schema",
    "meta_schemas",
    "openapi_path",
    "resource_paths",
    "root_document",
    "scale_schemas",
    "schema_name",
    "served_paths",
]

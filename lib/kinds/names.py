"""Label names and values every kind's objects share (the Kubernetes recommended labels).

``app.kubernetes.io/managed-by`` says who writes an object: the reconciler's children carry its
configurable ``managed_by`` (default ``darkroom-operator``, the label its informers select on); the
Secrets that hold credentials or passwords carry :data:`PRODUCT_MANAGED_BY`, whoever of the API or
the reconciler wrote them, because the API's admission policy (deploy/base/secrets-policy.yaml) lets
the API change only Secrets with that label. :data:`DNS_SUBDOMAIN` is the rule of an object's name (a Secret's, a
StorageClass's) that the API states in its own words (:data:`SUBDOMAIN_MESSAGE`).
"""

from __future__ import annotations

NAME_LABEL = "app.kubernetes.io/name"
INSTANCE_LABEL = "app.kubernetes.io/instance"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
PRODUCT_MANAGED_BY = "darkroom-control-panel"

DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
SUBDOMAIN_MESSAGE = (
    "must be a DNS subdomain: at most 253 characters of lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
)

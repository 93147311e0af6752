"""ClusterRole rules to read what the dashboard's pages show (constants, no tests, no fixtures).

:data:`READ_RULES` reads every kind the pages show but Pods; :data:`POD_RULES` adds Pods. The conftest's ``deleter``
gives its person the first; tests that make people of their own on the real control plane use both.
"""

from __future__ import annotations

# A ClusterRole's rules to read all the pages show but Pods — for people of the real control plane with less than
# that (the ``deleter``'s person sees in a resource tree that they may not list Pods). An app whose own account is such a
# person adds POD_RULES: it needs every kind the API caches, as deploy/base's API role allows (without one, its start
# waits out the cache sync).
READS = ["get", "list", "watch"]
READ_RULES = [
    {"apiGroups": ["deployments.example.com", "example.example.com", "database.db.example.com"], "resources": ["*"], "verbs": READS},
    {"apiGroups": [""], "resources": ["events", "namespaces", "configmaps", "services", "persistentvolumeclaims"], "verbs": READS},
    {"apiGroups": ["apps"], "resources": ["statefulsets", "deployments", "replicasets"], "verbs": READS},
    {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses"], "verbs": READS},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": READS},
]
POD_RULES = [{"apiGroups": [""], "resources": ["pods"], "verbs": READS}]

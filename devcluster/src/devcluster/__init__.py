"""devcluster: an embedded, SQLite-backed Kubernetes-compatible API server.

It stands in for kube-apiserver (plus the bits of kube-controller-manager the product relies on:
garbage collection, namespace cleanup, CRD establishing, Deployment rollouts) so the whole product
runs and is tested with no cluster. It imports nothing else of ours but the two leaves it shares with the product
(``labelselectors``, ``mergepatch``; lib/shared). Entry points:
``python -m devcluster serve`` and :class:`devcluster.server.DevCluster`.
"""

"""aggregator: the aggregated API server of ``search.task.example.example.com/v1`` (``combinedtasks``).

A Kubernetes-native, read-only API: each Task with its Events as a
``CombinedTask``, served to kubectl and every Kubernetes client behind an APIService, with delegated
authentication and authorization as kube's own aggregated servers do it. Reads Tasks and Events from
the informer cache of :mod:`cluster` (a list makes no API call); imports neither ``backend`` nor the
reconciler. Entry point: ``python -m aggregator`` (:mod:`aggregator.__main__`); see docs/components/aggregator.md.
"""

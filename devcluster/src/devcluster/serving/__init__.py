"""The HTTP face of devcluster: kube-apiserver's URL layout, verbs, query parameters, content
negotiation (JSON, YAML, Table, PartialObjectMetadata) and streaming watches, on aiohttp.

One catch-all route parses the path the way kube-apiserver's router does and hands the request
to the verb functions of ``reading.py`` / ``writing/`` / ``watching.py`` (``/scale``:
``scaling.py``). Every failure is a :class:`~devcluster.errors.StatusError` rendered as
``metav1.Status`` (or, outside any served group, the mux's plain-text 404). Built by
:func:`build_app`; run by ``server.py``.

The package: ``negotiation`` (targets, Accept negotiation, query options), ``api`` (the Api's
routing and resource handlers), ``discovering`` (discovery and OpenAPI documents) and ``app`` (the
aiohttp application).
"""

from __future__ import annotations

from devcluster.serving.api import Api
from devcluster.serving.app import build_app
from devcluster.serving.negotiation import JSON, Rendering, Target

__all__ = ["JSON", "Api", "Rendering", "Target", "build_app"]

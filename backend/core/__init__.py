"""The core: what the API does with the kinds' objects, knowing nothing of HTTP.

No Flask, werkzeug, markupsafe, flask-wtf or flask-cors here (a ``forbidden`` import contract says so). The kind
services (:mod:`.services`), writes with owned objects (:mod:`.writing`, :mod:`.credentials`), the cluster access
(:mod:`.access`), the kinds (:mod:`.kinds`, their schemas in :mod:`.schemas`, shared conversions in
:mod:`.conversions`), validation (:mod:`.validation`), paging and memoized rendering (:mod:`.listing`). Failures are
the domain errors of :mod:`.errors`; the HTTP API (:mod:`backend.api`) and the dashboard answer them.
"""

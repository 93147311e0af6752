"""The HTTP JSON API: views, request reading, problem+json, read-your-writes, operations, OpenAPI and ``/watch``.

Each part is wired by :func:`backend.app.create_app`: the per-kind views (:mod:`.endpoints`), ``/combinedtasks``
(:mod:`.combinedtasks`), ``/namespaces`` (:mod:`.namespaces`), the one mapping of errors to problem+json answers
(:mod:`.problems`), request bodies and query parameters (:mod:`.bodies`, :mod:`.queries`), web hardening of every
response, the dashboard's too (:mod:`.hardening`), the consistency token
(:mod:`.consistency`), ``/healthz`` ``/readyz`` ``/metrics`` (:mod:`.operations`), ``/openapi.json`` and ``/docs``
(:mod:`.openapi`, :mod:`.apidocs`, :mod:`.docspage`) and the live changes of ``/watch`` (:mod:`.watch`).
Below it sits only :mod:`backend.core`.
"""

"""Live changes: ``GET /watch`` as Server-Sent Events, and the streams the dashboard's live rows share with it.

By concern: the event bus (:mod:`.broadcasting`: informers publish each change once into a ring buffer), the SSE wire
format (:mod:`.sse`), one client's stream and how a server streams it (:mod:`.streams`), the caps on open streams
(:mod:`.limits`), the view (:mod:`.watching`) and its OpenAPI text (:mod:`.docs`).
"""

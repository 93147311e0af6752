"""The OpenAPI operation of ``GET /watch``, naming every registered kind (:mod:`backend.api.openapi` reads the YAML
after ``---`` of the view's docstring, which :func:`.watching.register` sets to :data:`WATCH_DOC`)."""

from __future__ import annotations

from string import Template

from backend.core.kinds.registry import TITLES, listed

WATCH_DOC = Template("""\
Live changes of $plurals (Server-Sent Events).
---
get:
  tags: [live]
  summary: Stream changes as Server-Sent Events
  description: >
    Named events $events (data: a WatchEvent), ``ready`` first, ``reset`` when the
    requested resume point is gone (reload, then keep listening), heartbeat comments when idle.
    Resume with the ``Last-Event-ID`` header or ``lastEventId``.
  parameters:
    - {name: kind, in: query, required: false, schema: {type: string, example: "Darkroom,Task"},
       description: "Comma-separated kinds: $kinds (default: all)."}
    - {name: namespace, in: query, required: false, schema: {type: string}, description: Only this namespace.}
    - {name: lastEventId, in: query, required: false, schema: {type: string}, description: Resume after this event id.}
    - {name: Last-Event-ID, in: header, required: false, schema: {type: string}, description: Resume after this event id.}
  responses:
    "200":
      description: An endless event stream (ends when the server shuts down); each event is a ServerSentEvent.
      content:
        text/event-stream:
          schema:
            allOf:
              - {$$ref: "#/components/schemas/ServerSentEvent"}
              - properties: {event: {type: string, enum: [ready, reset, $names]}}
    "400":
      description: Unknown kind or invalid namespace.
      content:
        application/problem+json:
          schema: {$$ref: "#/components/schemas/Problem"}
    "503":
      description: >
        Too many open streams (from this client, or in total); try again after ``Retry-After`` seconds.
      content:
        application/problem+json:
          schema: {$$ref: "#/components/schemas/Problem"}
""").substitute(
    plurals=listed([f"{title}s" for title in TITLES]),
    events=listed([f"``{title.lower()}``" for title in TITLES]),
    kinds=", ".join(TITLES),
    names=", ".join(title.lower() for title in TITLES),
)

"""Who is calling, and what they may do: every request acts as the person who makes it.

- :mod:`.authenticating` resolves each request's caller (a bearer token, a login session, or the local
  one-person mode) before any view; :mod:`.callers` holds it for the request.
- :mod:`.login`: ``/login`` (a pasted Kubernetes token, or the identity provider: :mod:`.oidc`, Authlib),
  ``/logout``.
- :mod:`.sessions`: login sessions kept server-side, one Secret each; :mod:`.cookies`: the signed cookie that
  carries only a session's id (and the CSRF value).
- :mod:`.permissions`: what the caller may do, for the dashboard to show (SelfSubjectAccessReviews).

It answers with the API's problems (:mod:`backend.api.problems`) and uses its cross-site check
(:mod:`backend.api.hardening`), so it sits above :mod:`backend.api`; the API reads only the resulting actor
(:mod:`backend.api.actors`).
"""

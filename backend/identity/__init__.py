"""Who is calling: bearer and session authentication, ``/login`` and ``/logout`` (:mod:`.authentication`), the
signed session cookie (:mod:`.sessions`) and the list of logged-out sessions every replica checks (:mod:`.revocation`).

It answers with the API's problems (:mod:`backend.api.problems`) and uses its cross-site check
(:mod:`backend.api.hardening`), so it sits above :mod:`backend.api`; the API never asks who is calling.
"""

"""Who is calling: bearer and session authentication, ``/login`` and ``/logout`` (:mod:`.authentication`), and the
list of logged-out sessions every replica checks (:mod:`.revocation`)."""

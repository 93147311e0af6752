"""``GET /watch``: live changes of every registered kind as Server-Sent Events (see :mod:`.watching`)."""

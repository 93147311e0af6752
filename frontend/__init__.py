"""Package data, no code: the dashboard's templates (``templates/``) and static files (``static/``, the vendored htmx too).

A package only so that the wheel ships these files and the product finds them with :mod:`importlib.resources`
wherever it is installed (:mod:`productfiles` is the one module that looks them up).
"""

"""What our programs do first, before anything imports the official Kubernetes client: :func:`skip_kubernetes_validate`.

Called by the entry points only (``python -m darkroom_operator``, ``python -m aggregator``, gunicorn's configuration
as it starts, ``make api``), never at import: a test that imports our modules keeps its process as it found it.
"""

from __future__ import annotations

import sys


def skip_kubernetes_validate() -> None:
    """Make ``import kubernetes_validate`` raise ImportError in this process (and the processes it forks).

    The official client's package imports its dynamic client, which imports ``kubernetes_validate`` whenever that is
    installed: the dev toolchain has it (tests/deploy validate manifests with it), the image does not. The import
    costs ~1.4 s of CPU at every start (jsonschema's format checkers build ``rfc3987_syntax``'s grammar) and ~20 MiB,
    for a validator the product never calls; without it the client treats validation as unavailable. An earlier
    import (the module already loaded) is left alone.
    """
    sys.modules.setdefault("kubernetes_validate", None)  # type: ignore[arg-type]  # None: "import" raises ImportError

"""``python -m aggregator [flags]``: run the combinedtasks aggregated API server (flags: ``--help``, docs/reference/configuration.md)."""

from __future__ import annotations

import sys

from envsettings.startup import skip_kubernetes_validate

if __name__ == "__main__":
    skip_kubernetes_validate()  # before the official client's package is imported (below)

from aggregator.serving import run
from aggregator.settings import from_args


def main() -> int:
    return run(from_args(sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())

"""The CRD installer from a checkout: ``python scripts/install_crds.py`` is ``python -m cluster.crdinstall``.

The installer is part of the product (:mod:`cluster.crdinstall`), so the image, which holds only the installed wheel,
runs it as a module; this script keeps the checkout's old command working.
"""

from __future__ import annotations

import sys

from cluster.crdinstall import main

if __name__ == "__main__":
    sys.exit(main())

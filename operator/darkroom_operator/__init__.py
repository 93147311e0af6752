"""darkroom_operator: the reconciler process of Darkroom Control Panel.

Watches our kinds (Darkroom, Task) and their children through :mod:`cluster` informers, feeds keys
into a rate-limited workqueue (:mod:`darkroom_operator.workqueues`) and runs level-based
reconcilers (:mod:`darkroom_operator.darkrooms`, :mod:`darkroom_operator.tasks`) on worker threads,
only while this replica holds the leader Lease. Entry point: ``python -m darkroom_operator``.

The package lives in ``operator/darkroom_operator`` and is never importable as ``operator`` (that
would shadow the standard library module).
"""

__version__ = "0.1.0"

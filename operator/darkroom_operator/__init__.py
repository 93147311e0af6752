"""darkroom_operator: the reconciler process of Darkroom Control Panel.

Watches our kinds (Darkroom, Task, Postgresql) and their children through :mod:`cluster` informers, feeds keys
into a rate-limited workqueue and runs level-based reconcilers on worker threads, only while this replica holds
the leader Lease. Entry point: ``python -m darkroom_operator`` (:mod:`darkroom_operator.__main__` builds the
runtime and the reconcilers from :mod:`darkroom_operator.settings`).

Two halves, one direction: :mod:`darkroom_operator.runtime` is everything kind-agnostic (workqueues, rate
limiting, controllers, leader election, the process's life, probes, metrics, logs, Events, conditions, owned
children); the reconcilers of each kind sit beside it and import it, never the reverse — Darkrooms
(:mod:`.darkrooms`, their children in :mod:`.darkroomchildren`, host claims in :mod:`.hosts`, Ready in
:mod:`.readiness`), Tasks (:mod:`.tasks`) and Postgresqls (:mod:`.postgresqls`, their children in
:mod:`.pgchildren`). The reconcilers of one kind never import another kind's (import-linter contracts).

The package lives in ``operator/darkroom_operator`` and is never importable as ``operator`` (that
would shadow the standard library module).
"""

__version__ = "0.1.0"

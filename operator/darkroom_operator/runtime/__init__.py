"""The reconciler's runtime: everything that drives reconcilers and knows no kind.

Informer events become keys in a rate-limited workqueue (:mod:`.workqueues`, :mod:`.ratelimiting`); controllers
run workers that call a reconciler per key (:mod:`.controllers`, under the contract of :mod:`.reconciling`:
``Reconciler``, ``Result``, ``Context``); one process leads or stands by (:mod:`.leading`) and lives and stops
as :mod:`.running` says; probes and metrics are served by :mod:`.serving` and :mod:`.metrics`, logs by
:mod:`.logs`, Events written by :mod:`.recording`. The machinery reconcilers share for their objects is here too:
status conditions (:mod:`.conditions`), "is this child up to date?" (:mod:`.comparing`) and the children a
primary object owns (:mod:`.owning`).

The reconcilers of each kind (``darkroom_operator.darkrooms``, ``.tasks``, ``.postgresqls`` and the modules
they build on) import this package; nothing here imports them (an import-linter contract in pyproject.toml).
Only :mod:`darkroom_operator.settings` sits below it. ``darkroom_operator.__main__`` puts the two together.
"""

"""Each kind of the product described once: names, field rules, conditions and what an object's state is.

A leaf package: no Flask, no I/O, no cluster access, and it imports nothing else of ours. The backend
(schemas, conversions, forms, dashboard), the reconciler and the tests import it, so a field rule, a
label name or what "Ready" means is written in exactly one place:

- :mod:`kinds.states` — the shape of a state (:class:`State`) and of a condition's meaning
  (:class:`ConditionMeaning`), and the tones the dashboard colours them with.
- :mod:`kinds.darkrooms` — the Darkroom: API names, the per-source-type field table, reasons,
  conditions, and :func:`kinds.darkrooms.state`.
- :mod:`kinds.tasks` — the Task: API names, labels, finalizer, the Overdue condition and
  :func:`kinds.tasks.state`.
"""

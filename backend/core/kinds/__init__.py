"""The kinds the API serves: the :class:`.base.Kind` base, one module per kind (its friendly ↔ CR conversion and
checks), and :mod:`.registry`, where each kind is registered once."""

"""Marshmallow schemas of the API's payloads: :mod:`.common` (shared pieces) and one module per kind.

Each module ends with ``SCHEMAS``, the schemas of it the OpenAPI document names (nested ones first);
a kind's backend module names its module's ``SCHEMAS`` (:attr:`backend.core.kinds.base.Kind.schemas`), and
:data:`backend.core.kinds.registry.SCHEMAS` joins the common ones with every registered kind's — nothing here
is edited for a new kind. View docstrings reference these names (``$ref: '#/components/schemas/<name>'``);
the OpenAPI builder (:mod:`backend.api.openapi`) registers each entry under its key.
"""

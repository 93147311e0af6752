"""Settings dataclasses built from environment variables, each variable declared once on its field.

The API (``backend.settings.ApiSettings``), the reconciler (``darkroom_operator.settings.OperatorSettings``) and the
aggregated API server (``aggregator.settings.AggregatorSettings``) are configured the same way: one frozen dataclass
whose every field says, in its metadata, which variable sets it, what it means, and (when its type does not say) how
to parse it::

    port: int = field(default=5000, metadata=variable("DARKROOM_API_PORT", "PORT", doc="TCP port to serve on."))

:func:`from_environ` builds the dataclass from an environ mapping; :func:`variables` lists the declarations
(what docs/reference/configuration.md is generated from). A leaf package: it imports nothing else of ours
(the standard library only). Backend, the reconciler and the aggregator are independent and all sit above
``cluster/``, whose job is Kubernetes access, not process configuration; so the one helper they may all import is a
leaf of its own. Beside it, :mod:`envsettings.startup`: what each of those programs does first, before it imports the
official client.

Parsing, by the field's type (``X | None`` is optional ``X``):

* ``str``: the value as it is; ``int``, ``float``: a number; ``bool``: ``true/false``, ``yes/no``, ``on/off``,
  ``1/0`` (any case); ``Path``: a path; anything else needs a ``parse`` function in the declaration.
* An empty value: ``""`` for ``str``; ``None`` for an optional field; for the other types it counts as unset
  (the default stays), so ``PORT=`` from a compose file's ``${PORT:-}`` means "no port given".
* Several names: the first one set wins (``DARKROOM_API_PORT`` before ``PORT``). A ``deprecated`` old name is
  still read when no current name is set, with a ``FutureWarning`` (meant for whoever runs the product) saying to
  rename it; when a current name is set too, the old one is ignored, with a warning saying so.

A value that does not parse raises :class:`SettingError` (a ``ValueError``) naming the variable and why, e.g.
``DARKROOM_OPERATOR_WORKERS: invalid literal for int() with base 10: 'four'`` or ``DARKROOM_OPERATOR_LOG_JSON:
'maybe' is not a boolean (true/false, yes/no, on/off, 1/0)``. Only numbers and booleans are quoted back (strings,
which may be secrets, never fail to parse). Keyword overrides (command-line flags) win over the environment;
a ``None`` override means "not given".

Command-line flags come from the same declarations: :func:`add_flags` gives an ``argparse`` parser one
``--field-name`` option per field (``resync_s`` -> ``--resync-s``), parsed as the variable is (a boolean as
``--name``/``--no-name``), defaulting to ``None`` (so the environment or the field's default applies), with the
field's doc, variable and default as its help; ``vars(parser.parse_args())`` are then :func:`from_environ`'s overrides.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["SettingError", "Variable", "add_flags", "from_environ", "variable", "variables"]

_KEY = "envsettings"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})

T = TypeVar("T")


class SettingError(ValueError):
    """An environment variable whose value cannot be used; the message names the variable and says why."""


@dataclass(frozen=True)
class Variable:
    """How one field is set from the environment: its variable names (first set wins), doc, parser, old names."""

    names: tuple[str, ...]
    doc: str
    parse: Callable[[str], Any] | None = None
    deprecated: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The variable's name (the first of :attr:`names`)."""
        return self.names[0]


def variable(*names: str, doc: str, parse: Callable[[str], Any] | None = None, deprecated: tuple[str, ...] = ()) -> dict[str, Variable]:
    """Field metadata: the field is set by ``names`` (first set wins), documented by ``doc``."""
    if not names or not doc.strip():
        raise TypeError("a setting needs at least one variable name and a doc")
    return {_KEY: Variable(tuple(names), doc, parse, tuple(deprecated))}


def variables(cls: type[Any]) -> list[tuple[dataclasses.Field[Any], Variable]]:
    """Every field of the settings dataclass ``cls`` with its :class:`Variable` (TypeError when one has none)."""
    declared = []
    for f in dataclasses.fields(cls):
        declaration = f.metadata.get(_KEY)
        if not isinstance(declaration, Variable):
            raise TypeError(f"{cls.__name__}.{f.name} declares no environment variable (metadata=variable(...))")
        declared.append((f, declaration))
    return declared


def from_environ(cls: type[T], environ: Mapping[str, str], **overrides: Any) -> T:
    """An instance of the settings dataclass ``cls`` from ``environ``, then the non-``None`` ``overrides``."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f, declaration in variables(cls):
        found = _lookup(declaration, environ)
        if found is None:
            continue
        name, raw = found
        optional, kind = _unwrap(hints[f.name])
        if raw == "" and (optional or kind is not str):
            if optional:
                values[f.name] = None
            continue
        values[f.name] = _parse(declaration, kind, name, raw, cls)
    values.update({k: v for k, v in overrides.items() if v is not None})
    return cls(**values)


def _lookup(declaration: Variable, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(name, value) of the first variable set, old names last (with their warning)."""
    chosen = next((n for n in declaration.names if n in environ), None)
    for old in (n for n in declaration.deprecated if n in environ):
        if chosen is not None:
            message = f"{old} is deprecated and ignored because {chosen} is set: remove {old}"
        else:
            message, chosen = f"{old} is deprecated: rename it {declaration.name} (the old name will stop working)", old
        warnings.warn(message, FutureWarning, stacklevel=4)  # the caller of the settings class's from_environ
    return (chosen, environ[chosen]) if chosen is not None else None


def _unwrap(hint: Any) -> tuple[bool, Any]:
    """(optional, type) of a field's annotation: ``int | None`` -> (True, int)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(members) == 1:
            return len(members) < len(typing.get_args(hint)), members[0]
    return False, hint


def _parse(declaration: Variable, kind: Any, name: str, raw: str, cls: type[Any]) -> Any:
    try:
        return _parser(declaration, kind, cls)(raw)
    except ValueError as e:
        raise SettingError(f"{name}: {e}") from None


def _parser(declaration: Variable, kind: Any, cls: type[Any]) -> Callable[[str], Any]:
    parse = declaration.parse or _PARSERS.get(kind)
    if parse is None:
        raise TypeError(f"{cls.__name__}: {declaration.name} has a field of type {kind!r}: declare variable(..., parse=...)")
    return parse


def add_flags(parser: argparse.ArgumentParser, cls: type[Any], names: Iterable[str] | None = None) -> None:
    """Add a ``--field-name`` option to ``parser`` for each field of ``cls`` named in ``names`` (None: every field)."""
    hints = typing.get_type_hints(cls)
    declared = {f.name: (f, declaration) for f, declaration in variables(cls)}
    for name in declared if names is None else names:
        f, declaration = declared[name]
        kind = _unwrap(hints[name])[1]
        flag = "--" + name.replace("_", "-")
        text = _help(f, declaration).replace("%", "%%")  # argparse %-formats help texts
        if kind is bool and declaration.parse is None:
            parser.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=text)
        else:
            parse = _flag_type(_parser(declaration, kind, cls))
            parser.add_argument(flag, dest=name, type=parse, default=None, metavar=_metavar(name, kind), help=text)


def _metavar(name: str, kind: Any) -> str:
    if kind is float and name.endswith("_s"):
        return "SECONDS"
    return {int: "N", float: "NUMBER", Path: "PATH"}.get(kind, "VALUE")


def _help(f: dataclasses.Field[Any], declaration: Variable) -> str:
    default = "" if f.default is None or f.default is dataclasses.MISSING else f", default {_shown(f.default)}"
    return f"{declaration.doc} (env {declaration.name}{default})"


def _shown(default: Any) -> str:
    if isinstance(default, bool):
        return "on" if default else "off"
    return repr(default) if isinstance(default, str) else str(default)  # a word in quotes: "default 'default'"


def _flag_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` for argparse: its ValueError's message becomes the usage error (``argument --workers: ...``)."""

    def flag_value(raw: str) -> Any:
        try:
            return parse(raw)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return flag_value


def _boolean(raw: str) -> bool:
    if raw.strip().lower() in _TRUE:
        return True
    if raw.strip().lower() in _FALSE:
        return False
    raise ValueError(f"{raw!r} is not a boolean (true/false, yes/no, on/off, 1/0)")


# int and float keep Python's messages ("invalid literal for int() with base 10: 'many'"): run_api's one-line refusal
# quotes them (tests/e2e/test_run_api.py), and they say what is wrong with the value.
_PARSERS: dict[Any, Callable[[str], Any]] = {str: str, int: int, float: float, bool: _boolean, Path: Path}

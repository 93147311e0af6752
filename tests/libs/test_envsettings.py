"""The shared settings helper (``envsettings``) builds a settings dataclass from an environ mapping.

Behaviours covered:

- each field is parsed by its type: ``str`` as is, ``int``, ``float``, ``bool`` (true/false, yes/no, on/off,
  1/0, any case), ``Path``; ``X | None`` is optional ``X``; a field may bring its own parser;
- an empty value is ``""`` for ``str``, ``None`` for an optional field, and unset (the default) otherwise;
- unset variables keep the defaults; of several names the first one set wins;
- a deprecated name is read, with a FutureWarning saying to rename it, when no current name is set, and
  ignored, with a FutureWarning saying so, when one is;
- a value that does not parse raises SettingError (a ValueError) naming the variable and why;
- keyword overrides win over the environment, ``None`` overrides are "not given";
- a field without a declaration, a declaration without a name or doc, and a type without a parser are
  programming errors (TypeError); :func:`variables` lists the declarations in field order;
- :func:`add_flags` gives a parser one ``--field-name`` per field (or per named field): parsed as the variable is
  (a boolean as ``--name``/``--no-name``), ``None`` when not given (so the flags are from_environ's overrides), a bad
  value a usage error (exit 2) in the parser's words, the help the field's doc, variable and default.
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from envsettings import SettingError, add_flags, from_environ, variable, variables


def _upper(raw: str) -> str:
    if not raw.isalpha():
        raise ValueError(f"{raw!r} is not a word")
    return raw.upper()


@dataclass(frozen=True)
class Example:
    name: str = field(default="n", metadata=variable("X_NAME", doc="A string."))
    count: int = field(default=3, metadata=variable("X_COUNT", "COUNT", doc="An integer; COUNT is its short name."))
    ratio: float = field(default=0.5, metadata=variable("X_RATIO", doc="A number."))
    enabled: bool = field(default=True, metadata=variable("X_ENABLED", doc="A boolean."))
    path: Path | None = field(default=None, metadata=variable("X_PATH", doc="An optional path."))
    label: str | None = field(default="kept", metadata=variable("X_LABEL", doc="An optional string."))
    secret: str | None = field(default=None, metadata=variable("X_SECRET", deprecated=("X_OLD_SECRET",), doc="Renamed once."))
    word: str = field(default="w", metadata=variable("X_WORD", parse=_upper, doc="Parsed by its own function."))


def test_unset_variables_keep_the_defaults() -> None:
    assert from_environ(Example, {"UNRELATED": "1"}) == Example()


def test_each_type_is_parsed() -> None:
    environ = {
        "X_NAME": " spaced ",
        "X_COUNT": "12",
        "X_RATIO": "2.5",
        "X_ENABLED": "Off",
        "X_PATH": "/etc/kube",
        "X_LABEL": "l",
        "X_SECRET": "s3",
        "X_WORD": "abc",
    }
    assert from_environ(Example, environ) == Example(" spaced ", 12, 2.5, False, Path("/etc/kube"), "l", "s3", "ABC")
    for raw, value in [("1", True), ("TRUE", True), ("yes", True), ("on", True), ("0", False), ("false", False), ("No", False)]:
        assert from_environ(Example, {"X_ENABLED": raw}).enabled is value


def test_an_empty_value_is_empty_none_or_unset_by_type() -> None:
    empty = {name: "" for name in ("X_NAME", "X_COUNT", "X_RATIO", "X_ENABLED", "X_PATH", "X_LABEL")}
    settings = from_environ(Example, empty)
    assert settings.name == ""
    assert (settings.count, settings.ratio, settings.enabled) == (3, 0.5, True)
    assert (settings.path, settings.label) == (None, None)


def test_the_first_name_set_wins() -> None:
    assert from_environ(Example, {"COUNT": "7"}).count == 7
    assert from_environ(Example, {"COUNT": "7", "X_COUNT": "8"}).count == 8
    assert from_environ(Example, {"COUNT": "", "X_COUNT": "8"}).count == 8
    assert from_environ(Example, {"COUNT": ""}).count == 3


def test_a_deprecated_name_still_works_with_a_future_warning() -> None:
    with pytest.warns(FutureWarning, match=r"^X_OLD_SECRET is deprecated: rename it X_SECRET \(the old name will stop working\)$"):
        assert from_environ(Example, {"X_OLD_SECRET": "old"}).secret == "old"
    with pytest.warns(FutureWarning, match=r"^X_OLD_SECRET is deprecated and ignored because X_SECRET is set: remove X_OLD_SECRET$"):
        assert from_environ(Example, {"X_OLD_SECRET": "old", "X_SECRET": "new"}).secret == "new"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert from_environ(Example, {"X_SECRET": "new"}).secret == "new"


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"X_COUNT": "twelve"}, "X_COUNT: invalid literal for int() with base 10: 'twelve'"),
        ({"COUNT": "1.5"}, "COUNT: invalid literal for int() with base 10: '1.5'"),
        ({"X_RATIO": "half"}, "X_RATIO: could not convert string to float: 'half'"),
        ({"X_ENABLED": "maybe"}, "X_ENABLED: 'maybe' is not a boolean (true/false, yes/no, on/off, 1/0)"),
        ({"X_WORD": "a1"}, "X_WORD: 'a1' is not a word"),
    ],
)
def test_a_bad_value_names_the_variable_and_why(environ: dict[str, str], message: str) -> None:
    with pytest.raises(SettingError) as caught:
        from_environ(Example, environ)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


def test_overrides_win_and_none_is_not_given() -> None:
    settings = from_environ(Example, {"X_COUNT": "12", "X_NAME": "env"}, count=99, name=None)
    assert (settings.count, settings.name) == (99, "env")


def test_declarations_are_listed_in_field_order() -> None:
    declared = [(f.name, v.names, v.doc) for f, v in variables(Example)]
    assert declared[:2] == [("name", ("X_NAME",), "A string."), ("count", ("X_COUNT", "COUNT"), "An integer; COUNT is its short name.")]
    assert [v.name for _, v in variables(Example)][-2:] == ["X_SECRET", "X_WORD"]


def test_programming_errors_are_type_errors() -> None:
    @dataclass(frozen=True)
    class Undeclared:
        plain: int = 1

    @dataclass(frozen=True)
    class Unparsable:
        items: list[str] = field(default_factory=list, metadata=variable("X_ITEMS", doc="No parser for a list."))

    with pytest.raises(TypeError, match=r"Undeclared.plain declares no environment variable"):
        from_environ(Undeclared, {})
    with pytest.raises(TypeError, match=r"X_ITEMS has a field of type"):
        from_environ(Unparsable, {"X_ITEMS": "a,b"})
    with pytest.raises(TypeError, match="needs at least one variable name and a doc"):
        variable("X_UNDOCUMENTED", doc=" ")


def _flags(names: list[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="example")
    add_flags(parser, Example, names)
    return parser


def test_flags_are_parsed_like_the_variables_and_none_when_not_given() -> None:
    parser = _flags()
    given = vars(parser.parse_args(["--count", "12", "--no-enabled", "--path", "/k", "--word", "abc", "--ratio", "2.5"]))
    assert given == {
        "name": None,
        "count": 12,
        "ratio": 2.5,
        "enabled": False,
        "path": Path("/k"),
        "label": None,
        "secret": None,
        "word": "ABC",
    }
    assert vars(parser.parse_args(["--enabled"]))["enabled"] is True
    assert from_environ(Example, {"X_COUNT": "5", "X_NAME": "env"}, **given) == Example(
        "env", 12, 2.5, False, Path("/k"), "kept", None, "ABC"
    )
    assert set(vars(_flags(["count", "enabled"]).parse_args([]))) == {"count", "enabled"}


def test_a_bad_flag_is_a_usage_error_in_the_parsers_words(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in [
        (["--count", "twelve"], "argument --count: invalid literal for int() with base 10: 'twelve'"),
        (["--word", "a1"], "argument --word: 'a1' is not a word"),
    ]:
        with pytest.raises(SystemExit) as exited:
            _flags().parse_args(argv)
        assert exited.value.code == 2
        assert capsys.readouterr().err.splitlines()[-1] == f"example: error: {message}"


def test_a_flags_help_is_its_doc_variable_and_default() -> None:
    helps = {a.dest: a.help for a in _flags()._actions if a.dest != "help"}
    assert helps["count"] == "An integer; COUNT is its short name. (env X_COUNT, default 3)"
    assert helps["enabled"] == "A boolean. (env X_ENABLED, default on)"
    assert helps["path"] == "An optional path. (env X_PATH)"
    assert helps["name"] == "A string. (env X_NAME, default 'n')"  # text in quotes: "default 'default'" reads as a value

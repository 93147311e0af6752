"""The API's, the reconciler's and the aggregator's settings: every variable declared on its field (the docs' configuration
page is generated from those declarations: tests/project/test_docs_pages.py).

Behaviours covered:

- every field of ``ApiSettings``, ``OperatorSettings`` and ``AggregatorSettings`` declares its variable and a doc
  (``envsettings.variable``), the API's under ``DARKROOM_API_`` (the port also under ``PORT``), the reconciler's as
  ``DARKROOM_OPERATOR_<FIELD>``, the aggregator's as ``AGGREGATOR_<FIELD>``;
- the reconciler's flags are its settings' overrides: ``--<field>`` for the fields in ``FLAGS``, ``--no-leader-election``,
  ``--log-format text`` for ``log_json``, nothing when not given;
- an empty environment gives the defaults; ``DARKROOM_API_PORT`` wins over ``PORT``;
- a bad value stops with the variable's name and why (an integer, a number, a boolean), as a ValueError the
  entry points report (``bad settings: ...``, ``cannot start: ...``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from darkroom_operator.__main__ import FLAGS, parse_args
from darkroom_operator.settings import OperatorSettings

from aggregator.settings import AggregatorSettings, from_args
from backend.settings import ApiSettings
from envsettings import variables


def test_every_field_declares_its_variable_and_a_doc() -> None:
    for cls, prefix in ((ApiSettings, "DARKROOM_API_"), (OperatorSettings, "DARKROOM_OPERATOR_"), (AggregatorSettings, "AGGREGATOR_")):
        for f, v in variables(cls):
            assert v.doc.strip().endswith("."), f"{cls.__name__}.{f.name}: a one-sentence doc"
            assert v.name.startswith(prefix), (f.name, v.name)
    for cls, prefix in ((OperatorSettings, "DARKROOM_OPERATOR_"), (AggregatorSettings, "AGGREGATOR_")):
        assert {f.name: v.names for f, v in variables(cls)} == {f.name: (f"{prefix}{f.name.upper()}",) for f, _ in variables(cls)}
    api = {f.name: v.names for f, v in variables(ApiSettings)}
    assert api["port"] == ("DARKROOM_API_PORT", "PORT")
    assert "api_token" not in api  # the shared token is gone (from_environ refuses it, naming what replaces it)
    assert {name for name, names in api.items() if names != (f"DARKROOM_API_{name.upper()}",)} == {"port"}


def test_an_empty_environment_gives_the_defaults() -> None:
    assert ApiSettings.from_environ({}) == ApiSettings()
    defaults = OperatorSettings(identity="me")
    assert OperatorSettings.from_environ({}, identity="me") == defaults
    assert ApiSettings.from_environ({"PORT": "8080"}).port == 8080
    assert ApiSettings.from_environ({"PORT": "8080", "DARKROOM_API_PORT": "9090"}).port == 9090
    assert ApiSettings.from_environ({"PORT": ""}).port == 5000


@pytest.mark.parametrize(
    ("build", "environ", "message"),
    [
        (ApiSettings.from_environ, {"PORT": "http"}, "PORT: invalid literal for int() with base 10: 'http'"),
        (
            ApiSettings.from_environ,
            {"DARKROOM_API_SSE_HEARTBEAT_S": "15s"},
            "DARKROOM_API_SSE_HEARTBEAT_S: could not convert string to float: '15s'",
        ),
        (
            OperatorSettings.from_environ,
            {"DARKROOM_OPERATOR_WORKERS": "four"},
            "DARKROOM_OPERATOR_WORKERS: invalid literal for int() with base 10: 'four'",
        ),
        (
            OperatorSettings.from_environ,
            {"DARKROOM_OPERATOR_LOG_JSON": "maybe"},
            "DARKROOM_OPERATOR_LOG_JSON: 'maybe' is not a boolean (true/false, yes/no, on/off, 1/0)",
        ),
        (OperatorSettings.from_environ, {"DARKROOM_OPERATOR_WORKERS": "0"}, "workers must be at least 1"),
    ],
)
def test_a_bad_value_names_the_variable_and_why(
    build: Callable[[Mapping[str, str]], object], environ: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        build(environ)
    assert str(caught.value) == message


def test_the_aggregator_reads_its_flags_and_variables() -> None:
    settings = from_args(
        ["--history-size", "5", "--cert-dir", "/certs"], {"AGGREGATOR_SECURE_PORT": "9443", "AGGREGATOR_HISTORY_SIZE": "7"}
    )
    assert (settings.history_size, settings.cert_dir, settings.secure_port) == (5, Path("/certs"), 9443)


def test_the_reconcilers_flags_are_its_settings_overrides() -> None:
    assert set(FLAGS) <= {f.name for f, _ in variables(OperatorSettings)}
    assert parse_args([]) == dict.fromkeys([*FLAGS, "log_json"])
    given = parse_args(["--workers", "8", "--resync-s", "1.5", "--no-leader-election", "--log-format", "text", "--kubeconfig", "/k"])
    assert {k: v for k, v in given.items() if v is not None} == {
        "workers": 8,
        "resync_s": 1.5,
        "leader_election": False,
        "log_json": False,
        "kubeconfig": Path("/k"),
    }
    settings = OperatorSettings.from_environ({"DARKROOM_OPERATOR_WORKERS": "2", "DARKROOM_OPERATOR_DOMAIN": "d.example"}, **given)
    assert (settings.workers, settings.domain, settings.leader_election, settings.log_json) == (8, "d.example", False, False)

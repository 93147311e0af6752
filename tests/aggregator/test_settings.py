"""``python -m aggregator`` settings (aggregator.settings): flags beat AGGREGATOR_* variables, which beat the
defaults; values are typed; the TLS pair goes together; bad values are a usage error naming the flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from aggregator.settings import AggregatorSettings, from_args


def test_flags_environment_and_defaults() -> None:
    env = {"AGGREGATOR_SECURE_PORT": "9443", "AGGREGATOR_AUTHZ_DENY_TTL_S": "2.5", "AGGREGATOR_LOG_LEVEL": "DEBUG"}
    settings = from_args(["--secure-port", "7443", "--kubeconfig", "/k"], env)
    assert settings.secure_port == 7443 and settings.authz_deny_ttl_s == 2.5 and settings.log_level == "DEBUG"
    assert settings.kubeconfig == Path("/k") and settings.authz_allow_ttl_s == AggregatorSettings().authz_allow_ttl_s == 10.0
    assert from_args([], {}) == AggregatorSettings()


def test_bad_settings_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--secure-port", "abc"], ["--tls-cert-file", "/c"], ["--history-size", "0"]):
        with pytest.raises(SystemExit) as exited:
            from_args(argv, {})
        assert exited.value.code == 2
    assert "history_size must be positive" in capsys.readouterr().err

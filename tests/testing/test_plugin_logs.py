"""The pytest plugin's broker logs in the console format, and pytest's capture is no terminal: what a
failing (or `-rP`) report shows of it is plain text, with no ANSI escape."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_a_plugin_brokers_captured_log_is_plain_text(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    pytester.makepyfile(test_user="def test_x(kafkito):\n    assert kafkito.advance(1) >= 1\n")
    result = pytester.runpytest_subprocess("-rP")
    result.assert_outcomes(passed=1)
    report = result.stdout.str()
    assert "Captured stderr" in report and "broker.started" in report, report
    assert "\x1b[" not in report, report

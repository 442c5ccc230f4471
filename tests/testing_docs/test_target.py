"""docs/testing.md's pytest examples, unchanged, against Apache Kafka 4.4 (`--kafkito-target=kafka`):
a test that steers the broker or configures it with the marker is skipped with the reason, every
other one passes."""

from __future__ import annotations

import ast
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from kafkito.testing.target import STEERING
from tests.testing_docs.test_testing_page import PYTHON

TIMEOUT_S = 600


def expected_outcomes(modules: dict[str, str]) -> dict[str, str]:
    """Each example test's expected outcome: `marker` (configures kafkito's broker), the first
    steering method it calls, or `passed`."""
    expected: dict[str, str] = {}
    for module, code in modules.items():
        for node in ast.parse(code).body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_")):
                continue
            if any("mark.kafkito" in ast.unparse(d) for d in node.decorator_list):
                expected[f"{module}::{node.name}"] = "marker"
                continue
            called = [
                c.func.attr
                for c in ast.walk(node)
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in STEERING
            ]
            expected[f"{module}::{node.name}"] = f"{called[0]}()" if called else "passed"
    return expected


def outcomes(report: Path) -> dict[str, tuple[str, str]]:
    """`module::test` -> (passed / skipped / failed, the skip reason or failure message)."""
    found: dict[str, tuple[str, str]] = {}
    for case in ET.parse(report).iter("testcase"):
        name = f"{case.get('classname', '').rpartition('.')[2]}::{case.get('name')}"
        skipped = case.find("skipped")
        failure = case.find("failure") if case.find("failure") is not None else case.find("error")
        if skipped is not None:
            found[name] = ("skipped", skipped.get("message", ""))
        elif failure is not None:
            found[name] = ("failed", (failure.get("message") or "") + (failure.text or "")[-2000:])
        else:
            found[name] = ("passed", "")
    return found


def test_the_examples_run_unchanged_on_apache_kafka(tmp_path: Path) -> None:
    modules = {f"test_example_line_{b.line}": b.code for b in PYTHON if b.is_test_module}
    for name, code in modules.items():
        (tmp_path / f"{name}.py").write_text(code)
    report = tmp_path / "report.xml"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--kafkito-target=kafka",
         f"--junitxml={report}", *(f"{name}.py" for name in modules)],
        cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
    )  # fmt: skip
    assert report.exists(), f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    got = outcomes(report)
    expected = expected_outcomes(modules)
    assert set(got) == set(expected), result.stdout[-4000:]
    for test, want in expected.items():
        outcome, message = got[test]
        if want == "passed":
            assert outcome == "passed", f"{test} on Apache Kafka: {outcome}: {message}"
        else:
            assert outcome == "skipped", f"{test} steers the broker ({want}) but {outcome}: {message}"
            assert message.startswith("--kafkito-target=kafka: "), f"{test}: {message}"
            reason = "@pytest.mark.kafkito(" if want == "marker" else f"{want} steers kafkito's own broker"
            assert reason in message, f"{test}: {message}"
    ran = [t for t, want in expected.items() if want == "passed"]
    skipped = [t for t, want in expected.items() if want != "passed"]
    assert ran and skipped, (ran, skipped)

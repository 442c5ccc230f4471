"""The frameworks table of COMPATIBILITY.md, rendered from a run's test outcomes."""

from __future__ import annotations

from types import SimpleNamespace

from tests.compat.matrix import TESTS, FrameworkResults


def report(nodeid: str, when: str = "call") -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, when=when)


def rows(results: FrameworkResults) -> dict[str, str]:
    table = [
        line for line in results.render() if line.startswith("| ") and not line.startswith("| framework")
    ]
    return {cells[0]: cells[2] for cells in (line.strip("| ").split(" | ") for line in table)}


def test_each_framework_row_is_the_outcome_of_its_tests() -> None:
    stats = {
        "passed": [
            report("tests/connect/test_distributed.py::test_a"),
            report("tests/connect/test_distributed.py::test_a", when="setup"),
            report("tests/spark/test_connector.py::test_b"),
            report("tests/spark/test_exactly_once.py::test_c"),
        ],
        "failed": [report("tests/spark/test_source.py::test_d")],
        "error": [report("tests/spark/test_source.py::test_e", when="setup")],
    }
    got = rows(FrameworkResults.from_stats(stats))
    assert got["Kafka Connect"] == "pass (1 tests)"
    assert got["Spark's Kafka connector"] == "pass (1 tests)"
    assert got["kafkito_spark"] == "**FAIL** (2 of 3 tests)"
    assert got["Flink"].startswith("not run here yet: ")
    if (TESTS / "streams_groups" / "test_kafka_streams.py").exists():
        assert got["Kafka Streams"] == "not run"
    else:
        assert got["Kafka Streams"].startswith("pending: ")
    assert "tests/" not in "".join(
        line for line in FrameworkResults.from_stats(stats).render() if "`" in line
    )


def test_a_framework_whose_tests_did_not_run_says_so() -> None:
    got = rows(FrameworkResults.from_stats({}))
    assert got["Kafka Connect"] == "not run"
    assert got["Spark's Kafka connector"] == "not run"

"""The framework's own rules, on kafkito alone (no Kafka needed): a scenario that stops fails unless it
declares it, a retried request is recorded once with its retries listed as a step, and the report
counts and lists both."""

from __future__ import annotations

from pathlib import Path

from tests.conformance.explained import unexplained
from tests.conformance.framework import Outcome, Scenario, Side, Step, run_pair
from tests.conformance.normalise import Difference
from tests.conformance.report import write_report
from tests.support.brokers import ThreadBroker

INIT_PID = 22
NOWHERE = "127.0.0.1:9"  # the scenarios below raise before they connect


def _wrong_api(side: Side) -> None:
    raise KeyError("api 999")


def test_a_scenario_that_stops_on_both_brokers_fails() -> None:
    outcome = run_pair(Scenario("stops", "api", _wrong_api), NOWHERE, NOWHERE, {})
    assert outcome.differences == []  # the two transcripts agree: both stopped on the same error
    stop = Difference("<stopped>", "KeyError: 'api 999'", "KeyError: 'api 999'")
    assert unexplained(outcome) == [("scenario stopped", stop)]


def test_a_scenario_that_declares_its_stop_passes() -> None:
    declared = Scenario("stops", "api", _wrong_api, stops="the request is refused by the codec")
    assert unexplained(run_pair(declared, NOWHERE, NOWHERE, {})) == []


def test_a_retried_request_is_recorded_once_and_its_retries_are_a_step(broker: ThreadBroker) -> None:
    steering = broker.call(lambda: broker.broker.steering)  # type: ignore[union-attr]
    broker.call(lambda: steering.inject("InitProducerId", "COORDINATOR_LOAD_IN_PROGRESS", 2))
    side = Side(broker.bootstrap, "retries", {})
    fields = {
        "transactional_id": None,
        "transaction_timeout_ms": 60_000,
        "producer_id": -1,
        "producer_epoch": -1,
    }
    answer = side.request_settled(INIT_PID, 4, "a producer", **fields)
    assert answer.error_code == 0
    (recorded,) = side.transcript  # "InitProducerId v4 a producer" ("api 22 ..." outside a session)
    assert recorded.label.endswith("22 v4 a producer") or recorded.label == "InitProducerId v4 a producer"
    assert recorded.answer["error_code"] == 0
    assert side.steps == [Step(recorded.label, 3, (14,))]


def test_the_report_counts_a_stop_and_lists_the_steps(tmp_path: Path) -> None:
    outcome = run_pair(Scenario("stops", "api", _wrong_api), NOWHERE, NOWHERE, {})
    outcome.steps["Kafka"].append(Step("InitProducerId v4 a producer", 2, (14,)))
    report = tmp_path / "CONFORMANCE.md"
    write_report(report, [outcome])
    text = report.read_text()
    assert "1 scenarios, 1 requests compared, 1 unexplained differences" in text
    assert "| stops | scenario stopped | <stopped>: Kafka \"KeyError: 'api 999'\"" in text
    assert "| stops | Kafka | InitProducerId v4 a producer | retried: 2 requests, on error 14 |" in text


def test_the_report_gives_an_explanation_once_with_the_fields_of_an_entry_on_one_line(tmp_path: Path) -> None:
    label = "DescribeConfigs v4 every config of the broker"
    diffs = [
        (label, Difference("results[1].configs[listeners].value", "PLAINTEXT://a", "PLAINTEXT://b")),
        (label, Difference("results[1].configs[listeners].config_source", 4, 5)),
    ]
    outcomes = [
        Outcome(s, "admin", 1, diffs, [label]) for s in ("describe_configs_broker", "describe_configs_broker")
    ]
    report = tmp_path / "CONFORMANCE.md"
    write_report(report, outcomes)
    text = report.read_text()
    assert "0 unexplained differences" in text
    entry = (
        f"  - describe_configs_broker: {label}: results[1].configs[listeners]: "
        'value: Kafka "PLAINTEXT://a", kafkito "PLAINTEXT://b"; config_source: Kafka 4, kafkito 5'
    )
    assert text.count("listeners (a leased port") == 1
    assert text.count(entry) == 1

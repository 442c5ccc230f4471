"""The pytest plugin as an installed package gives it: a test file with no conftest and no import of
the plugin gets the `kafkito` fixtures and marker through the `pytest11` entry point (run in a fresh
pytest process by `pytester`)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

USER_TESTS = """
import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def test_fixture_gives_a_fresh_broker(kafkito):
    producer = KafkaProducer(bootstrap_servers=kafkito.bootstrap_servers)
    producer.send("t", b"hello").get(30)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=kafkito.bootstrap_servers, auto_offset_reset="earliest")
    consumer.assign([TopicPartition("t", 0)])
    assert [m.value for m in consumer.poll(10_000)[TopicPartition("t", 0)]] == [b"hello"]
    consumer.close()
    assert kafkito.properties["group.initial.rebalance.delay.ms"] == "0"


def test_each_test_has_its_own_broker(kafkito):
    consumer = KafkaConsumer(bootstrap_servers=kafkito.bootstrap_servers)
    assert "t" not in consumer.topics()
    consumer.close()


@pytest.mark.kafkito(num_partitions=5, **{"log.retention.hours": 1})
def test_marker_sets_properties(kafkito):
    assert kafkito.properties["num.partitions"] == "5"
    assert kafkito.properties["log.retention.hours"] == "1"
    assert kafkito.properties["default.replication.factor"] == "1"  # from the ini file
    assert kafkito.properties["auto.create.topics.enable"] == "true"  # from the command line


def test_session_broker_is_shared(kafkito_session, request):
    request.config.cache.set("kafkito/port", kafkito_session.port)


def test_session_broker_is_the_same_one(kafkito_session, request):
    assert request.config.cache.get("kafkito/port", None) == kafkito_session.port


def test_advance_is_there(kafkito):
    assert kafkito.advance(1000) >= 1000
"""


def test_an_installed_kafkito_gives_a_test_file_its_fixtures_and_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    pytester.makeini("[pytest]\nkafkito_properties =\n    default.replication.factor=1\n")
    result = pytester.runpytest_subprocess(
        "--strict-markers", "--kafkito-set", "auto.create.topics.enable=true"
    )
    result.assert_outcomes(passed=6)


def test_a_bad_property_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user="def test_x(kafkito):\n    pass\n")
    result = pytester.runpytest_subprocess("--kafkito-set", "no-equals-sign")
    assert "kafkito properties are NAME=VALUE" in result.stdout.str() + result.stderr.str()
    assert result.ret != 0

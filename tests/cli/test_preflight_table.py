"""The start-up checks name only properties the broker has, and each default passes them."""

from __future__ import annotations

from kafkito.broker.config import PROPERTIES, Config
from kafkito.broker.preflight import AT_LEAST, ONE_OF, ORDERED, check_values


def test_every_checked_name_is_a_broker_property() -> None:
    names = set(AT_LEAST) | set(ONE_OF) | {name for pair in ORDERED for name in pair}
    assert names - set(PROPERTIES) == set()


def test_the_defaults_pass() -> None:
    check_values(Config())  # Kafka's defaults are values Kafka accepts

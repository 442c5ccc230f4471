"""Client telemetry (KIP-714) as a Kafka broker with no exporter plugin answers it: not advertised,
yet answered when asked: an instance id, an empty subscription, pushes accepted and dropped."""

from __future__ import annotations

import uuid

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

API_VERSIONS, GET_SUBSCRIPTIONS, PUSH = 18, 71, 72


def test_not_advertised_but_answered(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        keys = {
            k.api_key
            for k in wire.request(
                API_VERSIONS, 3, client_software_name="t", client_software_version="1"
            ).api_keys
        }
        assert GET_SUBSCRIPTIONS not in keys and PUSH not in keys
        first = wire.request(GET_SUBSCRIPTIONS, 0, client_instance_id=uuid.UUID(int=0))
        assert first.error_code == ErrorCode.NONE
        assert first.client_instance_id != uuid.UUID(int=0)
        assert list(first.requested_metrics) == []
        assert list(first.accepted_compression_types) == [4, 3, 1, 2]
        assert (first.push_interval_ms, first.telemetry_max_bytes, first.delta_temporality) == (
            300000,
            1048576,
            True,
        )
        again = wire.request(GET_SUBSCRIPTIONS, 0, client_instance_id=first.client_instance_id)
        assert again.client_instance_id == first.client_instance_id
        assert again.subscription_id == first.subscription_id

        def push(**fields: object) -> int:
            base: dict[str, object] = dict(
                client_instance_id=first.client_instance_id,
                subscription_id=first.subscription_id,
                terminating=False,
                compression_type=0,
                metrics=b"otlp",
            )
            base.update(fields)
            return int(wire.request(PUSH, 0, **base).error_code)

        assert push() == ErrorCode.NONE
        assert push(terminating=True, compression_type=4) == ErrorCode.NONE
        assert push(client_instance_id=uuid.UUID(int=0)) == ErrorCode.INVALID_REQUEST
        assert push(subscription_id=first.subscription_id + 1) == ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        assert push(compression_type=9) == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        assert push(metrics=b"x" * (1048576 + 1)) == ErrorCode.TELEMETRY_TOO_LARGE


def test_a_librdkafka_client_with_telemetry_on_works(broker: ThreadBroker) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.metrics.push": True})
    producer.produce("telemetry-topic", b"v")
    assert producer.flush(30) == 0

"""The error-code enum is Kafka's table: every code once, none missing, the numbers Kafka gives them."""

from __future__ import annotations

from kafkito.protocol.errors import ErrorCode

KAFKA_4_1_LAST = 133  # SHARE_SESSION_LIMIT_REACHED


def test_every_code_up_to_kafka_4_1_is_defined_once() -> None:
    codes = [int(code) for code in ErrorCode]
    assert sorted(codes) == list(range(-1, KAFKA_4_1_LAST + 1))


def test_codes_that_were_once_missing_or_misnumbered() -> None:
    assert ErrorCode.MISMATCHED_ENDPOINT_TYPE == 114
    assert ErrorCode.UNSUPPORTED_ENDPOINT_TYPE == 115
    assert ErrorCode.TELEMETRY_TOO_LARGE == 118
    assert ErrorCode.TRANSACTION_ABORTABLE == 120
    assert ErrorCode.SHARE_SESSION_LIMIT_REACHED == KAFKA_4_1_LAST

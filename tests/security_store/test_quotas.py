"""Client quotas in the security store: Kafka's entity and key validation, describe filters, strict mode."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kafkito.broker.security.errors import SecurityError
from kafkito.broker.security.quotas import FilterComponent, MatchType, QuotaOp
from kafkito.broker.security.store import SecurityStore
from kafkito.protocol.errors import ErrorCode

EXACT, DEFAULT, SPECIFIED = MatchType.EXACT, MatchType.DEFAULT, MatchType.SPECIFIED


@pytest.fixture
def store(tmp_path: Path) -> SecurityStore:
    return SecurityStore(tmp_path).load()


def alter(
    store: SecurityStore, pairs: list[tuple[str, str | None]], *ops: QuotaOp, **kw: bool
) -> SecurityError | None:
    [(_, error)] = store.alter_quotas([(pairs, list(ops))], **kw)
    return error


def refused(error: SecurityError | None, message: str) -> bool:
    return error is not None and error.code == ErrorCode.INVALID_REQUEST and message in error.message


def test_set_change_and_remove_quotas(store: SecurityStore) -> None:
    alice = [("user", "alice")]
    assert (
        alter(store, alice, QuotaOp("producer_byte_rate", 1024), QuotaOp("request_percentage", 12.5)) is None
    )
    assert store.describe_quotas([], strict=False) == [
        ((("user", "alice"),), {"producer_byte_rate": 1024.0, "request_percentage": 12.5})
    ]
    assert (
        alter(store, alice, QuotaOp("producer_byte_rate", 0, remove=True), QuotaOp("consumer_byte_rate", 5))
        is None
    )
    assert store.quotas.by_entity == {
        (("user", "alice"),): {"request_percentage": 12.5, "consumer_byte_rate": 5.0}
    }
    assert (
        alter(
            store,
            alice,
            QuotaOp("request_percentage", 0, remove=True),
            QuotaOp("consumer_byte_rate", 0, remove=True),
        )
        is None
    )
    assert store.quotas.by_entity == {}
    # Removing what is not set is no error (and writes nothing).
    assert alter(store, alice, QuotaOp("no_such_key", 0, remove=True)) is None


def test_keys_and_values_are_validated_as_kafka(store: SecurityStore) -> None:
    alice = [("user", "alice")]
    assert refused(alter(store, alice, QuotaOp("connection_creation_rate", 5)), "Invalid configuration key")
    assert refused(alter(store, alice, QuotaOp("bogus", 5)), "Invalid configuration key bogus")
    assert refused(alter(store, alice, QuotaOp("producer_byte_rate", 0)), "must be greater than 0")
    assert refused(alter(store, alice, QuotaOp("producer_byte_rate", -3)), "must be greater than 0")
    assert refused(alter(store, alice, QuotaOp("producer_byte_rate", math.nan)), "must be greater than 0")
    assert refused(alter(store, alice, QuotaOp("producer_byte_rate", 10.5)), "cannot be a fractional value")
    assert refused(alter(store, alice, QuotaOp("producer_byte_rate", 1e19)), "too large")
    assert refused(
        alter(store, [("ip", "10.0.0.1")], QuotaOp("connection_creation_rate", 2.0**31)), "too large"
    )
    assert refused(
        alter(store, alice, QuotaOp("producer_byte_rate", 5), QuotaOp("producer_byte_rate", 6)),
        "Duplicate quota key",
    )
    # A refused operation changes nothing of the entity, not even its valid operations.
    assert refused(alter(store, alice, QuotaOp("consumer_byte_rate", 5), QuotaOp("bogus", 1)), "bogus")
    assert store.quotas.by_entity == {}
    assert alter(store, alice, QuotaOp("controller_mutation_rate", 0.25)) is None


def test_entities_are_validated_as_kafka(store: SecurityStore) -> None:
    rate = QuotaOp("producer_byte_rate", 100)
    assert refused(alter(store, [], rate), "Invalid empty client quota entity")
    assert refused(alter(store, [("group", "g")], rate), "Unhandled client quota entity type: group")
    assert refused(alter(store, [("user", "")], rate), "Empty user not supported")
    assert refused(alter(store, [("user", "a"), ("user", "b")], rate), "duplicate entity entry user")
    assert refused(
        alter(store, [("ip", "10.0.0.1"), ("user", "a")], QuotaOp("connection_creation_rate", 5)),
        "IP entity should not be combined",
    )
    assert refused(
        alter(store, [("ip", "not a host")], QuotaOp("connection_creation_rate", 5)),
        "is not a valid IP or resolvable host",
    )
    assert alter(store, [("ip", "::1")], QuotaOp("connection_creation_rate", 5)) is None
    assert alter(store, [("ip", None)], QuotaOp("connection_creation_rate", 50)) is None
    assert alter(store, [("user", None), ("client-id", "app")], rate) is None
    assert alter(store, [("client-id", None)], rate) is None


def test_an_entity_named_twice_in_a_request_changes_nothing(store: SecurityStore) -> None:
    results = store.alter_quotas(
        [
            ([("user", "a")], [QuotaOp("producer_byte_rate", 1)]),
            ([("user", "a")], [QuotaOp("consumer_byte_rate", 1)]),
        ]
    )
    assert len(results) == 1 and refused(results[0][1], "duplicate entity")
    assert store.quotas.by_entity == {}


def test_validate_only_writes_nothing(store: SecurityStore) -> None:
    assert alter(store, [("user", "a")], QuotaOp("producer_byte_rate", 1), validate_only=True) is None
    assert store.quotas.by_entity == {}


def describe(
    store: SecurityStore, *components: tuple[str, int, str | None], strict: bool = False
) -> list[tuple[tuple[str, str | None], ...]]:
    return [entity for entity, _ in store.describe_quotas([FilterComponent(*c) for c in components], strict)]


def test_describe_match_types_and_strict(store: SecurityStore) -> None:
    rate = QuotaOp("producer_byte_rate", 100)
    entities: list[list[tuple[str, str | None]]] = [
        [("user", "alice")],
        [("user", None)],
        [("user", "alice"), ("client-id", "app")],
        [("user", None), ("client-id", None)],
        [("client-id", "app")],
    ]
    for pairs in entities:
        assert alter(store, pairs, rate) is None
    assert store.describe_quotas([FilterComponent("ip", SPECIFIED, None)], False) == []
    alice = ("user", "alice")
    assert describe(store, ("user", EXACT, "alice")) == [(("client-id", "app"), alice), (alice,)]
    assert describe(store, ("user", EXACT, "alice"), strict=True) == [(alice,)]
    assert describe(store, ("user", DEFAULT, None)) == [
        (("client-id", None), ("user", None)),
        (("user", None),),
    ]
    assert describe(store, ("user", SPECIFIED, None), strict=True) == [(("user", None),), (alice,)]
    assert describe(store, ("client-id", EXACT, "app"), ("user", SPECIFIED, None)) == [
        (("client-id", "app"), alice)
    ]
    assert len(describe(store)) == 5
    assert describe(store, strict=True) == []


@pytest.mark.parametrize(
    ("components", "code", "message"),
    [
        ([("", EXACT, "x")], ErrorCode.INVALID_REQUEST, "Invalid empty entity type."),
        (
            [("user", EXACT, "a"), ("user", SPECIFIED, None)],
            ErrorCode.INVALID_REQUEST,
            "cannot appear more than once",
        ),
        ([("group", EXACT, "a")], ErrorCode.UNSUPPORTED_VERSION, "Unsupported entity type group"),
        (
            [("user", EXACT, None)],
            ErrorCode.INVALID_REQUEST,
            "MATCH_TYPE_EXACT, but set match string to null",
        ),
        ([("user", DEFAULT, "a")], ErrorCode.INVALID_REQUEST, "MATCH_TYPE_DEFAULT, but also specified"),
        ([("user", SPECIFIED, "a")], ErrorCode.INVALID_REQUEST, "MATCH_TYPE_SPECIFIED, but also specified"),
        ([("user", 7, None)], ErrorCode.INVALID_REQUEST, "Unknown match type 7"),
        (
            [("ip", SPECIFIED, None), ("user", SPECIFIED, None)],
            ErrorCode.INVALID_REQUEST,
            "IP filter component",
        ),
    ],
)
def test_describe_refuses_bad_filters(
    store: SecurityStore, components: list[tuple[str, int, str | None]], code: ErrorCode, message: str
) -> None:
    with pytest.raises(SecurityError) as e:
        store.describe_quotas([FilterComponent(*c) for c in components], False)
    assert e.value.code == code and message in e.value.message

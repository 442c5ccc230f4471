"""The transaction APIs on the wire, against a real broker: versions advertised, each API's answers and
its errors as each version presents them, the Produce gate, and state surviving a restart."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

PRODUCE, FIND_COORDINATOR, API_VERSIONS, INIT_PID = 0, 10, 18, 22
ADD_PARTITIONS, ADD_OFFSETS, END_TXN = 24, 25, 26
DESCRIBE_PRODUCERS, DESCRIBE_TXNS, LIST_TXNS = 61, 65, 66
TOPIC = "txn-wire"


@pytest.fixture
def wire(broker: ThreadBroker) -> Any:
    with WireClient(broker.bootstrap) as client:
        topic = dict(name=TOPIC, num_partitions=3, replication_factor=1, assignments=[], configs=[])
        created = client.request(19, 4, topics=[topic], timeout_ms=5000, validate_only=False)
        assert created.topics[0].error_code == ErrorCode.NONE
        yield client


def _init(wire: WireClient, txn_id: str, version: int = 4, timeout_ms: int = 60_000) -> Any:
    return wire.request(
        INIT_PID, version, transactional_id=txn_id, transaction_timeout_ms=timeout_ms,
        producer_id=-1, producer_epoch=-1,
    )  # fmt: skip


def _add(
    wire: WireClient, txn_id: str, pid: int, epoch: int, parts: list[int], version: int = 3
) -> dict[int, int]:
    r = wire.request(
        ADD_PARTITIONS, version, v3_and_below_transactional_id=txn_id, v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch, v3_and_below_topics=[dict(name=TOPIC, partitions=parts)],
    )  # fmt: skip
    return {p.partition_index: p.partition_error_code for t in r.results_by_topic_v3_and_below
            for p in t.results_by_partition}  # fmt: skip


def _verify(
    wire: WireClient, version: int, txn_id: str, pid: int, epoch: int, parts: list[int]
) -> dict[int, int]:
    r = wire.request(
        ADD_PARTITIONS, version,
        transactions=[dict(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, verify_only=True,
                           topics=[dict(name=TOPIC, partitions=parts)])],
    )  # fmt: skip
    [result] = r.results_by_transaction
    return {
        p.partition_index: p.partition_error_code
        for t in result.topic_results
        for p in t.results_by_partition
    }


def _txn_batch(pid: int, epoch: int, sequence: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, True, pid, epoch, sequence, 1 << 20)
    builder.append(0, timestamp=None, key=None, value=b"v", headers=[])
    return bytes(builder.build())


def _produce(wire: WireClient, version: int, txn_id: str, partition: int, records: bytes) -> int:
    r = wire.request(
        PRODUCE, version, transactional_id=txn_id, acks=-1, timeout_ms=5000,
        topic_data=[dict(name=TOPIC, partition_data=[dict(index=partition, records=records)])],
    )  # fmt: skip
    return int(r.responses[0].partition_responses[0].error_code)


def _end(wire: WireClient, txn_id: str, pid: int, epoch: int, commit: bool, version: int = 3) -> Any:
    return wire.request(
        END_TXN, version, transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, committed=commit
    )


def test_api_versions_advertise_every_transaction_api_at_kafkas_versions(wire: WireClient) -> None:
    r = wire.request(API_VERSIONS, 3, client_software_name="t", client_software_version="1")
    versions = {k.api_key: (k.min_version, k.max_version) for k in r.api_keys}
    assert versions[INIT_PID] == (0, 5)
    assert versions[ADD_PARTITIONS] == (0, 5)
    assert versions[ADD_OFFSETS] == (0, 4)
    assert versions[END_TXN] == (0, 5)
    assert 28 in versions  # TxnOffsetCommit (the group coordinator's handler)
    assert versions[DESCRIBE_PRODUCERS] == (0, 0)
    assert versions[DESCRIBE_TXNS] == (0, 0)
    assert versions[LIST_TXNS] == (0, 2)


def test_find_coordinator_answers_transaction_keys_and_refuses_unknown_types(
    wire: WireClient, broker: ThreadBroker
) -> None:
    r = wire.request(FIND_COORDINATOR, 1, key="app", key_type=1)
    assert (r.error_code, r.port) == (ErrorCode.NONE, broker.port)
    r = wire.request(FIND_COORDINATOR, 4, key_type=1, coordinator_keys=["a", "b"])
    assert [(c.key, c.error_code, c.port) for c in r.coordinators] == [
        ("a", ErrorCode.NONE, broker.port),
        ("b", ErrorCode.NONE, broker.port),
    ]
    r = wire.request(FIND_COORDINATOR, 1, key="app", key_type=7)
    assert r.error_code == ErrorCode.INVALID_REQUEST


def test_init_producer_id_bumps_the_epoch_and_checks_the_timeout(wire: WireClient) -> None:
    first = _init(wire, "app")
    again = _init(wire, "app")
    assert first.error_code == again.error_code == ErrorCode.NONE
    assert again.producer_id == first.producer_id and again.producer_epoch == first.producer_epoch + 1
    assert _init(wire, "app", timeout_ms=0).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert _init(wire, "app", timeout_ms=900_001).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    # Without a transactional id, InitProducerId is the idempotent producer's, as before.
    plain = wire.request(INIT_PID, 4, transactional_id=None, transaction_timeout_ms=1, producer_id=-1,
                         producer_epoch=-1)  # fmt: skip
    assert plain.error_code == ErrorCode.NONE and plain.producer_epoch == 0


def test_add_partitions_unknown_partition_and_stale_epoch_per_version(wire: WireClient) -> None:
    r = _init(wire, "app")
    pid, epoch = r.producer_id, r.producer_epoch
    assert _add(wire, "app", pid, epoch, [0, 7]) == {
        0: ErrorCode.OPERATION_NOT_ATTEMPTED,
        7: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert _add(wire, "app", pid, epoch, [0, 1]) == {0: ErrorCode.NONE, 1: ErrorCode.NONE}
    _init(wire, "app")  # fences `epoch` (and aborts its transaction)
    assert _add(wire, "app", pid, epoch, [2], version=1) == {2: ErrorCode.INVALID_PRODUCER_EPOCH}
    assert _add(wire, "app", pid, epoch, [2], version=2) == {2: ErrorCode.PRODUCER_FENCED}


def test_verify_only_and_the_produce_gate(wire: WireClient) -> None:
    r = _init(wire, "app")
    pid, epoch = r.producer_id, r.producer_epoch
    assert _add(wire, "app", pid, epoch, [0]) == {0: ErrorCode.NONE}
    assert _verify(wire, 5, "app", pid, epoch, [0, 1]) == {
        0: ErrorCode.NONE,
        1: ErrorCode.TRANSACTION_ABORTABLE,
    }
    assert _verify(wire, 4, "app", pid, epoch, [1]) == {1: ErrorCode.INVALID_TXN_STATE}
    # Produce: a partition outside the transaction is refused, as the version knows it.
    assert _produce(wire, 9, "app", 1, _txn_batch(pid, epoch)) == ErrorCode.INVALID_TXN_STATE
    assert _produce(wire, 11, "app", 1, _txn_batch(pid, epoch)) == ErrorCode.TRANSACTION_ABORTABLE
    assert _produce(wire, 9, "app", 0, _txn_batch(pid, epoch + 1)) == ErrorCode.INVALID_PRODUCER_EPOCH
    assert _produce(wire, 9, "app", 0, _txn_batch(pid, epoch)) == ErrorCode.NONE
    # Transactional records need their transactional id.
    assert (
        _produce(wire, 9, None, 0, _txn_batch(pid, epoch, 1))
        == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    )  # type: ignore[arg-type]


def test_describe_list_end_and_describe_producers(wire: WireClient) -> None:
    before_ms = int(time.time() * 1000)
    r = _init(wire, "app-x")
    pid, epoch = r.producer_id, r.producer_epoch
    assert _add(wire, "app-x", pid, epoch, [2]) == {2: ErrorCode.NONE}
    assert _produce(wire, 9, "app-x", 2, _txn_batch(pid, epoch)) == ErrorCode.NONE
    _init(wire, "other")

    d = wire.request(DESCRIBE_TXNS, 0, transactional_ids=["app-x", "nobody"])
    found, missing = d.transaction_states
    assert (found.error_code, found.transaction_state, found.producer_id) == (ErrorCode.NONE, "Ongoing", pid)
    assert [(t.topic, list(t.partitions)) for t in found.topics] == [(TOPIC, [2])]
    assert before_ms - 1000 <= found.transaction_start_time_ms <= int(time.time() * 1000) + 1000
    assert missing.error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND

    listed = wire.request(
        LIST_TXNS, 1, state_filters=["Ongoing", "Nope"], producer_id_filters=[], duration_filter=-1
    )
    assert [t.transactional_id for t in listed.transaction_states] == ["app-x"]
    assert list(listed.unknown_state_filters) == ["Nope"]
    pattern = wire.request(LIST_TXNS, 2, state_filters=[], producer_id_filters=[], duration_filter=-1,
                           transactional_id_pattern="oth.*")  # fmt: skip
    assert [t.transactional_id for t in pattern.transaction_states] == ["other"]
    bad = wire.request(LIST_TXNS, 2, state_filters=[], producer_id_filters=[], duration_filter=-1,
                       transactional_id_pattern="(")  # fmt: skip
    assert bad.error_code == ErrorCode.INVALID_REGULAR_EXPRESSION

    producers = wire.request(DESCRIBE_PRODUCERS, 0, topics=[dict(name=TOPIC, partition_indexes=[2])])
    [active] = producers.topics[0].partitions[0].active_producers
    assert (active.producer_id, active.current_txn_start_offset) == (pid, 0)

    # EndTxn v5 is a transactions V2 client (transaction.version 2 is finalized): the epoch is bumped.
    ended = _end(wire, "app-x", pid, epoch, True, version=5)
    assert (ended.error_code, ended.producer_id, ended.producer_epoch) == (ErrorCode.NONE, pid, epoch + 1)
    _wait(lambda: _state(wire, "app-x") == "CompleteCommit")
    producers = wire.request(DESCRIBE_PRODUCERS, 0, topics=[dict(name=TOPIC, partition_indexes=[2])])
    [active] = producers.topics[0].partitions[0].active_producers
    assert active.current_txn_start_offset == -1
    assert _end(wire, "app-x", pid, epoch + 1, False).error_code == ErrorCode.INVALID_TXN_STATE


def test_add_offsets_takes_an_empty_group_id_and_refuses_an_empty_transactional_id(wire: WireClient) -> None:
    """As Kafka: the group id is not checked (an empty one names its partition like any other); an
    empty transactional id is INVALID_REQUEST, whatever the group id."""
    r = _init(wire, "app-o")
    pid, epoch = r.producer_id, r.producer_epoch
    add = dict(transactional_id="app-o", producer_id=pid, producer_epoch=epoch)
    assert wire.request(ADD_OFFSETS, 3, group_id="g", **add).error_code == ErrorCode.NONE
    assert wire.request(ADD_OFFSETS, 3, group_id="", **add).error_code == ErrorCode.NONE
    nameless = dict(add, transactional_id="")
    for group in ("", "g"):
        refused = wire.request(ADD_OFFSETS, 3, group_id=group, **nameless)
        assert refused.error_code == ErrorCode.INVALID_REQUEST
    described = wire.request(DESCRIBE_TXNS, 0, transactional_ids=["app-o"]).transaction_states[0]
    assert [t.topic for t in described.topics] == ["__consumer_offsets"]
    assert _end(wire, "app-o", pid, epoch, False).error_code == ErrorCode.NONE


def test_transactions_survive_a_restart(broker_factory: Callable[..., ThreadBroker], tmp_path: Path) -> None:
    data = tmp_path / "restart"
    first = broker_factory(data)
    with WireClient(first.bootstrap) as wire:
        r = _init(wire, "durable")
    first.stop()
    second = broker_factory(data)
    with WireClient(second.bootstrap) as wire:
        again = _retry_loading(lambda: _init(wire, "durable"))
    assert (again.producer_id, again.producer_epoch) == (r.producer_id, r.producer_epoch + 1)


def _state(wire: WireClient, txn_id: str) -> str:
    return str(
        wire.request(DESCRIBE_TXNS, 0, transactional_ids=[txn_id]).transaction_states[0].transaction_state
    )


def _wait(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.02)


def _retry_loading(call: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + 30
    while True:
        r = call()
        if r.error_code != ErrorCode.COORDINATOR_LOAD_IN_PROGRESS or time.monotonic() > deadline:
            return r
        time.sleep(0.02)

"""The coordinator's broker shell on real on-disk logs: `__transaction_state` created on first write,
records in Kafka's formats, a restart that reloads (in chunks, COORDINATOR_LOAD_IN_PROGRESS meanwhile)
and completes what was left prepared."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kafkito.broker.log.manager import LogManager
from kafkito.broker.offsets.batches import batch_records, iter_batches
from kafkito.broker.transactions import TransactionConfig, TransactionCoordinator, TxnState
from kafkito.broker.transactions.codec import TRANSACTION_STATE_TOPIC, decode_record, partition_for
from kafkito.broker.transactions.manager import TransactionsManager
from kafkito.broker.transactions.requests import AddPartitionsRequest, EndTxnRequest, InitProducerIdRequest
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import ManualClock, Timer
from tests.transactions.harness import CountingIds, RecordingMarkerWriter, tp

WALL_AT_START = 1_700_000_000_000
SEGMENT_BYTES = 1 << 20


class Node:
    """One broker's worth of transactions: logs on disk, the manager and a coordinator over them."""

    def __init__(
        self, data_dir: Path, markers: RecordingMarkerWriter, ids: CountingIds, chunk: int = 5_000
    ) -> None:
        self.clock = ManualClock(WALL_AT_START)  # a broker's clock tells epoch milliseconds
        self.logs = LogManager(data_dir)
        self.config = TransactionConfig(state_log_num_partitions=5)
        self.manager = TransactionsManager(
            self.logs,
            self.config,
            SEGMENT_BYTES,
            self.clock,
            load_chunk_records=chunk,
            load_inline_bytes=0 if chunk < 5_000 else 1 << 20,
        )
        self.coordinator = TransactionCoordinator(
            self.config, self.clock, Timer(self.clock), markers, ids, self.manager.sink
        )

    def close(self) -> None:
        self.coordinator.shutdown()
        for plog in self.logs.logs():
            plog.close()
        self.logs.close()

    def init(self, txn_id: str) -> tuple[ErrorCode, int, int]:
        out = []
        self.coordinator.init_producer_id(InitProducerIdRequest(txn_id, 60_000), out.append)
        assert out
        return out[0].error, out[0].producer_id, out[0].producer_epoch

    def add(self, txn_id: str, pid: int, epoch: int, *partitions: object) -> ErrorCode:
        out: list[ErrorCode] = []
        request = AddPartitionsRequest(txn_id, pid, epoch, frozenset(partitions))  # type: ignore[arg-type]
        self.coordinator.add_partitions(request, out.append)
        return out[0]

    def end(self, txn_id: str, pid: int, epoch: int, commit: bool) -> ErrorCode:
        out: list[ErrorCode] = []
        self.coordinator.end_txn(EndTxnRequest(txn_id, pid, epoch, commit), out.append)
        return out[0]


def test_the_topic_is_created_on_first_write_with_the_records_in_their_partition(tmp_path: Path) -> None:
    node = Node(tmp_path, RecordingMarkerWriter(), CountingIds())
    assert node.logs.topic(TRANSACTION_STATE_TOPIC) is None
    assert node.init("app-1")[0] is ErrorCode.NONE
    info = node.logs.topic(TRANSACTION_STATE_TOPIC)
    assert info is not None and info.partitions == 5
    plog = node.logs.get_log(TRANSACTION_STATE_TOPIC, partition_for("app-1", 5))
    records = [
        decode_record(r.key, r.value)
        for header, batch in iter_batches(plog.read(0, 1 << 20))
        for r in batch_records(batch, header)
        if r.key is not None
    ]
    assert [r.transactional_id for r in records if r is not None] == ["app-1"]
    node.close()


def test_restart_reloads_every_id_and_completes_a_prepared_commit(tmp_path: Path) -> None:
    markers, ids = RecordingMarkerWriter(), CountingIds()
    node = Node(tmp_path, markers, ids)
    states = {}
    for i in range(8):
        txn_id = f"app-{i}"
        error, pid, epoch = node.init(txn_id)
        assert error is ErrorCode.NONE
        assert node.add(txn_id, pid, epoch, tp("data", i)) is ErrorCode.NONE
        states[txn_id] = (pid, epoch)
    markers.defer = True  # the markers of app-0's commit are lost with the broker
    pid, epoch = states["app-0"]
    assert node.end("app-0", pid, epoch, True) is ErrorCode.NONE
    node.clock.advance(5_000)
    before = dict(node.coordinator.transactions)
    assert before["app-0"].state is TxnState.PREPARE_COMMIT
    node.close()

    markers.defer = False
    markers.parked.clear()
    restarted = Node(tmp_path, markers, ids)
    assert restarted.manager.sink.is_any_loading()
    assert restarted.init("app-3")[0] is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    restarted.manager.load_now(restarted.coordinator)
    assert restarted.manager.loaded
    after = restarted.coordinator.transactions
    assert after["app-0"].state is TxnState.COMPLETE_COMMIT
    assert markers.marked(pid, epoch) == {tp("data", 0)}
    for txn_id in states:
        if txn_id != "app-0":
            # Equal, timestamps included: they went out as wall clock and came back on the clock.
            assert after[txn_id] == before[txn_id]
    restarted.close()


def test_a_big_log_loads_in_chunks_and_serves_each_id_once_its_partition_is_in(tmp_path: Path) -> None:
    markers, ids = RecordingMarkerWriter(), CountingIds()
    node = Node(tmp_path, markers, ids)
    for i in range(40):
        assert node.init(f"id-{i}")[0] is ErrorCode.NONE
    node.close()

    restarted = Node(tmp_path, markers, ids, chunk=3)
    deferred: list[Callable[[], None]] = []
    restarted.manager.load(restarted.coordinator, deferred.append)  # the broker passes loop.call_soon
    loading_seen = []
    while deferred:
        loading_seen.append(restarted.manager.sink.is_loading("id-39"))
        deferred.pop(0)()
    assert len(loading_seen) > 5 and loading_seen[0]
    assert restarted.manager.loaded
    assert {f"id-{i}" for i in range(40)} == set(restarted.coordinator.transactions)
    assert restarted.init("id-7")[0] is ErrorCode.NONE
    restarted.close()

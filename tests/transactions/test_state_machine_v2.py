"""Two transactions V2 producers sharing one transactional id, against the coordinator in virtual time.

Random interleavings of InitProducerId, V2 adds (what Produce v12 and TxnOffsetCommit v5 do), EndTxn
v5 commits and aborts (the producer goes on with the id and epoch the answer names), retries of the
last EndTxn under the epoch before it, epochs close to running out, time passing (timeouts), marker
and append failures, writes and markers held back, and restarts. After every step:
- the epoch never goes back (per producer id, live and in the log);
- no transaction completes without its markers, which carry the decision's (bumped) epoch, and a
  Complete record is on the decision's producer id, or on its next one at epoch 0;
- a fenced producer never commits: a new commit succeeds only for the producer holding the
  credentials last handed out, and a retried end succeeds only with the credentials it got before;
- every transition in the log is one the state table allows;
- at quiescent points, a coordinator rebuilt from the log equals the live one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.transactions import (
    TransactionConfig,
    TransactionCoordinator,
    TransactionRecord,
    TransactionTombstone,
    TxnState,
)
from kafkito.broker.transactions.metadata import MAX_PRODUCER_EPOCH, NO_PRODUCER_ID, TransactionMetadata
from kafkito.broker.transactions.requests import (
    AddPartitionsRequest,
    EndTxnRequest,
    EndTxnResult,
    InitProducerIdRequest,
    InitProducerIdResult,
)
from kafkito.broker.transactions.state import is_valid_transition
from kafkito.protocol.errors import ErrorCode
from tests.transactions.harness import TXN, Harness, tp

PARTITIONS = [tp("a", 0), tp("a", 1), tp("__consumer_offsets", 3)]
TIMEOUT_MS = 5_000
CONFIG = TransactionConfig(abort_timed_out_interval_ms=1_000, marker_retry_backoff_ms=100)
V2 = 2


@dataclass
class Producer:
    name: int
    producer_id: int = -1
    epoch: int = -1
    last_end: tuple[int, int, bool] | None = None  # (producer id, epoch, commit) of its last good end


class TwoV2Producers(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(CONFIG)
        self.producers = [Producer(0), Producer(1)]
        self.holder: tuple[int, int, int] | None = None  # (producer, id, epoch) last handed out
        self.max_epoch: dict[int, int] = {}
        self.violations: list[str] = []

    # -- callbacks (they run in the coordinator's outbox, which swallows exceptions: they note) ------

    def _hand_out(self, producer: Producer, producer_id: int, epoch: int) -> None:
        if epoch < self.max_epoch.get(producer_id, -1):
            self.violations.append(f"handed out an epoch that went back: {producer_id}/{epoch}")
        producer.producer_id, producer.epoch = producer_id, epoch
        self.holder = (producer.name, producer_id, epoch)

    def _on_init(self, producer: Producer) -> Callable[[InitProducerIdResult], None]:
        def callback(result: InitProducerIdResult) -> None:
            event(f"InitProducerId: {result.error.name}")
            if result.error is ErrorCode.NONE:
                self._hand_out(producer, result.producer_id, result.producer_epoch)

        return callback

    def _on_end(
        self, producer: Producer, creds: tuple[int, int], commit: bool
    ) -> Callable[[EndTxnResult], None]:
        def callback(result: EndTxnResult) -> None:
            event(f"EndTxn v5 ({'commit' if commit else 'abort'}): {result.error.name}")
            if result.error is not ErrorCode.NONE:
                return
            if commit and self.holder != (producer.name, *creds):
                self.violations.append(f"fenced producer {producer.name} {creds} told its commit succeeded")
            producer.last_end = (*creds, commit)
            self._hand_out(producer, result.producer_id, result.producer_epoch)

        return callback

    def _on_retry(self, producer: Producer, held: tuple[int, int]) -> Callable[[EndTxnResult], None]:
        def callback(result: EndTxnResult) -> None:
            event(f"retried EndTxn v5: {result.error.name}")
            if result.error is ErrorCode.NONE and (result.producer_id, result.producer_epoch) != held:
                self.violations.append(f"retry answered {result}, the producer had been given {held}")

        return callback

    # -- rules --------------------------------------------------------------------------------------

    @initialize(p=st.sampled_from([0, 1]), near_the_end=st.booleans())
    def first_producer(self, p: int, near_the_end: bool) -> None:
        self.init(p, recover=False)
        if near_the_end:  # a few transactions from running out of epochs: the rotation is reachable
            meta = self.h.state()
            self.h.sink.records.append(
                TransactionRecord(replace(meta, producer_epoch=MAX_PRODUCER_EPOCH - 4))
            )
            self.h.restart()
            self.init(p, recover=False)

    @rule(p=st.sampled_from([0, 1]), recover=st.booleans())
    def init(self, p: int, recover: bool) -> None:
        producer = self.producers[p]
        pid, epoch = (producer.producer_id, producer.epoch) if recover else (-1, -1)
        self.h.coordinator.init_producer_id(
            InitProducerIdRequest(TXN, TIMEOUT_MS, pid, epoch), self._on_init(producer)
        )

    @rule(p=st.sampled_from([0, 1]), parts=st.sets(st.sampled_from(PARTITIONS), min_size=1))
    def add(self, p: int, parts: set[TopicPartition]) -> None:
        producer = self.producers[p]
        request = AddPartitionsRequest(TXN, producer.producer_id, producer.epoch, frozenset(parts), V2)
        self.h.coordinator.add_partitions(request, lambda e: None)

    @rule(p=st.sampled_from([0, 1]), commit=st.booleans())
    def end(self, p: int, commit: bool) -> None:
        producer = self.producers[p]
        creds = (producer.producer_id, producer.epoch)
        request = EndTxnRequest(TXN, *creds, commit, V2)
        self.h.coordinator.end_transaction(request, self._on_end(producer, creds, commit))

    @rule(p=st.sampled_from([0, 1]))
    def retry_end(self, p: int) -> None:
        """The producer sends its last successful EndTxn again, as after a lost answer."""
        producer = self.producers[p]
        if producer.last_end is None:
            return
        pid, epoch, commit = producer.last_end
        held = (producer.producer_id, producer.epoch)
        request = EndTxnRequest(TXN, pid, epoch, commit, V2)
        self.h.coordinator.end_transaction(request, self._on_retry(producer, held))

    @rule(
        p=st.sampled_from([0, 1]),
        parts=st.sets(st.sampled_from(PARTITIONS), min_size=1),
        commit=st.booleans(),
    )
    def transaction(self, p: int, parts: set[TopicPartition], commit: bool) -> None:
        self.add(p, parts)
        self.end(p, commit)

    @rule(ms=st.sampled_from([1, 100, 1_000, 3_000, 7_000]))
    def advance(self, ms: int) -> None:
        self.h.clock.advance(ms)

    @rule()
    def release(self) -> None:
        self.h.sink.defer_writes = self.h.markers.defer = False
        self.h.sink.complete_writes()
        self.h.markers.complete()

    @rule(
        kind=st.sampled_from(
            ["hold_writes", "hold_markers", "fail_markers", "fail_appends", "heal_appends", "restart"]
        )
    )
    def disrupt(self, kind: str) -> None:
        h = self.h
        if kind == "hold_writes":
            h.sink.defer_writes = True
        elif kind == "hold_markers":
            h.markers.defer = True
        elif kind == "fail_markers":
            h.markers.failures = {tp("a", 1): ErrorCode.NOT_LEADER_OR_FOLLOWER}
            h.markers.failures_left = 2
        elif kind == "fail_appends":
            h.sink.fail_with = ErrorCode.NOT_ENOUGH_REPLICAS
        elif kind == "heal_appends":
            h.sink.fail_with = ErrorCode.NONE
        else:
            h.restart()

    # -- invariants ---------------------------------------------------------------------------------

    def _log(self) -> list[TransactionRecord | TransactionTombstone]:
        return list(self.h.sink.records)

    @invariant()
    def no_violation_in_answers(self) -> None:
        assert self.violations == []

    @invariant()
    def epoch_never_goes_back(self) -> None:
        meta = self.h.coordinator.transactions.get(TXN)
        if meta is not None:
            assert meta.producer_epoch >= self.max_epoch.get(meta.producer_id, -1)
            self.max_epoch[meta.producer_id] = meta.producer_epoch
        last: dict[int, int] = {}
        for record in self._log():
            if isinstance(record, TransactionRecord):
                m = record.metadata
                assert m.producer_epoch >= last.get(m.producer_id, -1)
                assert 0 <= m.producer_epoch <= MAX_PRODUCER_EPOCH
                last[m.producer_id] = m.producer_epoch

    @invariant()
    def transitions_are_valid(self) -> None:
        previous: TxnState | None = None
        for record in self._log():
            if isinstance(record, TransactionTombstone):
                assert previous is not None and previous.expiration_allowed
                previous = None
                continue
            state = record.metadata.state
            assert is_valid_transition(previous or TxnState.EMPTY, state), (previous, state)
            previous = state

    @invariant()
    def completed_only_with_markers_of_the_decision(self) -> None:
        prepared: TransactionMetadata | None = None
        for record in self._log():
            meta = record.metadata if isinstance(record, TransactionRecord) else None
            if meta is not None and meta.state.is_complete:
                assert prepared is not None
                marked = {
                    p
                    for r, p in self.h.markers.written
                    if (r.producer_id, r.producer_epoch) == (prepared.producer_id, prepared.producer_epoch)
                }
                assert prepared.partitions <= marked
                if prepared.next_producer_id == NO_PRODUCER_ID:
                    expected = (prepared.producer_id, prepared.producer_epoch)
                else:
                    expected = (prepared.next_producer_id, 0)
                assert (meta.producer_id, meta.producer_epoch) == expected
            prepared = meta if meta is not None and meta.state.is_prepare else None

    @invariant()
    def restart_is_replay(self) -> None:
        if self.h.sink.pending_writes:
            return
        rebuilt = TransactionCoordinator(
            self.h.config, self.h.clock, self.h.timer, self.h.markers, self.h.ids
        )
        for record in self._log():
            rebuilt.replay(record)
        rebuilt.shutdown()
        assert dict(rebuilt.transactions) == dict(self.h.coordinator.transactions)

    def teardown(self) -> None:
        self.h.coordinator.shutdown()


TwoV2Producers.TestCase.settings = settings(max_examples=200, stateful_step_count=80, deadline=None)
test_two_v2_producers = TwoV2Producers.TestCase

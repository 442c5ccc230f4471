"""Two producers sharing one transactional id, against the coordinator in virtual time.

Random interleavings of InitProducerId (with and without KIP-360's producer id and epoch),
AddPartitions, AddOffsets, commits, aborts, time passing (timeouts), marker and append failures,
writes and markers held back, and restarts. After every step:
- the epoch never goes back (per producer id, live and in the log);
- no transaction completes without a marker on each of its partitions;
- a fenced producer never commits: every PrepareCommit carries the epoch last granted by an
  InitProducerId, and only the producer holding it is told its commit succeeded;
- every transition in the log is one the state table allows;
- at quiescent points, a coordinator rebuilt from the log equals the live one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.transactions import (
    TransactionConfig,
    TransactionCoordinator,
    TransactionRecord,
    TransactionResult,
    TransactionTombstone,
    TxnState,
)
from kafkito.broker.transactions.metadata import TransactionMetadata
from kafkito.broker.transactions.requests import (
    AddOffsetsRequest,
    AddPartitionsRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    InitProducerIdResult,
)
from kafkito.broker.transactions.state import is_valid_transition
from kafkito.protocol.errors import ErrorCode
from tests.transactions.harness import TXN, Harness, tp

PARTITIONS = [tp("a", 0), tp("a", 1), tp("b", 0)]
TIMEOUT_MS = 5_000
CONFIG = TransactionConfig(abort_timed_out_interval_ms=1_000, marker_retry_backoff_ms=100)


@dataclass
class Producer:
    name: int
    producer_id: int = -1
    epoch: int = -1


class TwoProducers(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(CONFIG)
        self.producers = [Producer(0), Producer(1)]
        self.granted: tuple[int, int, int] | None = None  # (producer, producer id, epoch) of the last grant
        self.max_epoch: dict[int, int] = {}
        self.violations: list[str] = []

    # -- callbacks ----------------------------------------------------------------------------------

    # Callbacks run inside the coordinator's outbox, which logs and swallows exceptions: they note
    # violations here, and an invariant fails on them.

    def _on_init(self, producer: Producer, answers: list[object]) -> Callable[[InitProducerIdResult], None]:
        def callback(result: InitProducerIdResult) -> None:
            answers.append(result)
            if len(answers) > 1:
                self.violations.append(f"InitProducerId answered twice: {answers}")
            event(f"InitProducerId: {result.error.name}")
            if result.error is ErrorCode.NONE:
                if result.producer_epoch < self.max_epoch.get(result.producer_id, -1):
                    self.violations.append(f"granted an epoch that went back: {result}")
                producer.producer_id, producer.epoch = result.producer_id, result.producer_epoch
                self.granted = (producer.name, result.producer_id, result.producer_epoch)

        return callback

    def _on_end(
        self, producer: Producer, commit: bool, creds: tuple[int, int], answers: list[object]
    ) -> Callable[[ErrorCode], None]:
        def callback(error: ErrorCode) -> None:
            answers.append(error)
            event(f"EndTxn({'commit' if commit else 'abort'}): {error.name}")
            if len(answers) > 1:
                self.violations.append(f"EndTxn answered twice: {answers}")
            if error is ErrorCode.NONE and commit and self.granted != (producer.name, *creds):
                self.violations.append(f"fenced producer {producer.name} {creds} told its commit succeeded")

        return callback

    # -- rules --------------------------------------------------------------------------------------

    @initialize(p=st.sampled_from([0, 1]))
    def first_producer(self, p: int) -> None:
        self.init(p, recover=False)

    @rule(p=st.sampled_from([0, 1]), recover=st.booleans())
    def init(self, p: int, recover: bool) -> None:
        producer = self.producers[p]
        pid, epoch = (producer.producer_id, producer.epoch) if recover else (-1, -1)
        request = InitProducerIdRequest(TXN, TIMEOUT_MS, pid, epoch)
        self.h.coordinator.init_producer_id(request, self._on_init(producer, []))

    @rule(p=st.sampled_from([0, 1]), parts=st.sets(st.sampled_from(PARTITIONS), min_size=1))
    def add(self, p: int, parts: set[TopicPartition]) -> None:
        producer = self.producers[p]
        request = AddPartitionsRequest(TXN, producer.producer_id, producer.epoch, frozenset(parts))
        self.h.coordinator.add_partitions(request, lambda e: None)

    @rule(p=st.sampled_from([0, 1]))
    def add_offsets(self, p: int) -> None:
        producer = self.producers[p]
        request = AddOffsetsRequest(TXN, producer.producer_id, producer.epoch, "group")
        self.h.coordinator.add_offsets(request, lambda e: None)

    @rule(p=st.sampled_from([0, 1]), commit=st.booleans())
    def end(self, p: int, commit: bool) -> None:
        producer = self.producers[p]
        creds = (producer.producer_id, producer.epoch)
        request = EndTxnRequest(TXN, producer.producer_id, producer.epoch, commit)
        self.h.coordinator.end_txn(request, self._on_end(producer, commit, creds, []))

    @rule(
        p=st.sampled_from([0, 1]),
        parts=st.sets(st.sampled_from(PARTITIONS), min_size=1),
        commit=st.booleans(),
    )
    def transaction(self, p: int, parts: set[TopicPartition], commit: bool) -> None:
        """A whole transaction by one producer (whatever the other one did before)."""
        self.add(p, parts)
        self.end(p, commit)

    @rule(ms=st.sampled_from([1, 100, 1_000, 3_000, 7_000]))
    def advance(self, ms: int) -> None:
        self.h.clock.advance(ms)

    @rule()
    def release(self) -> None:
        """Everything held back goes through: parked writes, then parked markers."""
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
            h.markers.failures = {tp("b", 0): ErrorCode.NOT_LEADER_OR_FOLLOWER}
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
    def completed_only_with_markers(self) -> None:
        prepared: TransactionMetadata | None = None
        for record in self._log():
            meta = record.metadata if isinstance(record, TransactionRecord) else None
            if meta is not None and meta.state.is_complete:
                assert prepared is not None
                assert (prepared.producer_id, prepared.producer_epoch) == (
                    meta.producer_id,
                    meta.producer_epoch,
                )
                result = (
                    TransactionResult.COMMIT
                    if meta.state is TxnState.COMPLETE_COMMIT
                    else TransactionResult.ABORT
                )
                marked = {
                    p
                    for r, p in self.h.markers.written
                    if (r.producer_id, r.producer_epoch, r.result)
                    == (meta.producer_id, meta.producer_epoch, result)
                }
                assert prepared.partitions <= marked
            prepared = meta if meta is not None and meta.state.is_prepare else None

    @invariant()
    def commits_carry_the_granted_epoch(self) -> None:
        granted: tuple[int, int] | None = None
        for record in self._log():
            if not isinstance(record, TransactionRecord):
                continue
            meta = record.metadata
            if meta.state is TxnState.EMPTY:
                granted = (meta.producer_id, meta.producer_epoch)
            elif meta.state is TxnState.PREPARE_COMMIT:
                assert granted == (meta.producer_id, meta.producer_epoch), "commit under a fenced epoch"

    @invariant()
    def restart_is_replay(self) -> None:
        if self.h.sink.pending_writes:
            return  # records appended but not yet answered: the live state has not replayed them
        rebuilt = TransactionCoordinator(
            self.h.config, self.h.clock, self.h.timer, self.h.markers, self.h.ids
        )
        for record in self._log():
            rebuilt.replay(record)
        rebuilt.shutdown()
        assert dict(rebuilt.transactions) == dict(self.h.coordinator.transactions)

    def teardown(self) -> None:
        self.h.coordinator.shutdown()


TwoProducers.TestCase.settings = settings(max_examples=200, stateful_step_count=80, deadline=None)
test_two_producers = TwoProducers.TestCase

"""The transaction coordinator: one sans-io object that owns every transactional id.

Parts (composition): `decisions` (what each request decides, pure), `markers` (carrying out a
commit or abort), `expiry` (timeouts and id expiration on the timer) and `queries` (Describe/List).
They share one `TxnRuntime`. Every write is a `__transaction_state` record; `replay` applies it,
at load and at run time, and answers go out (through the outbox) only after the append. Loading is
a replay of the log followed by `on_loaded`, which completes the transactions left prepared.

Both transaction versions are served, chosen per request as Kafka chooses: EndTxn v5+ is a V2 client
(the epoch is bumped at every end and answered back), older EndTxn and AddPartitionsToTxn are V1.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping

import structlog

from kafkito.broker.coordinator.outbox import Outbox, entry
from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.offsets.partitioner import partition_for
from kafkito.broker.transactions import queries
from kafkito.broker.transactions.config import TransactionConfig
from kafkito.broker.transactions.decisions import (
    decide_add_partitions,
    decide_end,
    decide_end_v2,
    decide_init,
    verify_partitions,
)
from kafkito.broker.transactions.expiry import Expiry
from kafkito.broker.transactions.markers import Markers
from kafkito.broker.transactions.metadata import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TRANSACTION_V2,
    TransactionMetadata,
    TxnLogRecord,
    new_metadata,
    next_producer,
    prepare_fence_and_abort,
)
from kafkito.broker.transactions.ports import (
    InMemoryTxnSink,
    MarkerWriter,
    ProducerIdAllocator,
    TxnRecordSink,
)
from kafkito.broker.transactions.requests import (
    AddOffsetsRequest,
    AddPartitionsRequest,
    DescribedTransaction,
    EndCallback,
    EndTxnRequest,
    EndTxnResult,
    ErrorCallback,
    InitCallback,
    InitProducerIdRequest,
    InitProducerIdResult,
    ListTransactionsResult,
)
from kafkito.broker.transactions.runtime import TxnRuntime
from kafkito.broker.transactions.state import TxnState
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import Clock, Timer

log = structlog.get_logger("kafkito.transactions")

OFFSETS_TOPIC = "__consumer_offsets"


class TransactionCoordinator:
    """Transactions as Kafka's coordinator runs them (transaction versions 1 and 2).

    Every public method that changes state is an entry of the outbox: callbacks run, in order, once
    the outermost entry returns, never mid-change.
    """

    def __init__(
        self,
        config: TransactionConfig,
        clock: Clock,
        timer: Timer,
        markers: MarkerWriter,
        producer_ids: ProducerIdAllocator,
        sink: TxnRecordSink | None = None,
    ) -> None:
        self._rt = rt = TxnRuntime(config, clock, timer, sink if sink is not None else InMemoryTxnSink())
        self.outbox: Outbox = rt.outbox
        self._producer_ids = producer_ids
        self._markers = Markers(rt, markers)
        self._expiry = Expiry(rt, self._fence_and_abort)
        self._expiry.start()

    # -- state, load and shutdown ----------------------------------------------------------------

    @property
    def transactions(self) -> Mapping[str, TransactionMetadata]:
        return self._rt.transactions

    def now_ms(self) -> int:
        """The coordinator's clock (the time base of the metadata's timestamps)."""
        return self._rt.now_ms()

    def replay(self, record: TxnLogRecord) -> None:
        self._rt.replay(record)

    @entry
    def load(self, records: Iterable[TxnLogRecord]) -> None:
        """Replay a partition's records, then finish what they left half done."""
        for record in records:
            self._rt.replay(record)
        self.on_loaded()

    @entry
    def on_loaded(self) -> None:
        """Prepared transactions get their markers (again); Ongoing ones wait for their timeout or
        for their producer to re-initialise."""
        for meta in list(self._rt.transactions.values()):
            if meta.state.is_prepare:
                log.info("txn.resume_markers", transactional_id=meta.transactional_id, state=meta.state.value)
                self._markers.send(meta)

    def ensure_state_topic(self) -> None:
        """Create `__transaction_state` now, as Kafka does on the first FindCoordinator for a
        transactional id (otherwise the first write creates it)."""
        self._rt.sink.ensure_topic()

    def shutdown(self) -> None:
        """Stop the timers; writes and markers still in flight are answered NOT_COORDINATOR."""
        self._rt.active = False
        self._expiry.stop()

    # -- requests --------------------------------------------------------------------------------

    @entry
    def init_producer_id(self, request: InitProducerIdRequest, callback: InitCallback) -> None:
        def answer(result: InitProducerIdResult) -> None:
            self.outbox.send(callback, result)

        txn_id = request.transactional_id
        if txn_id is None:  # an idempotent producer: a fresh id, always
            answer(InitProducerIdResult(ErrorCode.NONE, self._producer_ids.next_id(), 0))
            return
        error = self._check_init(txn_id, request.transaction_timeout_ms)
        if error is not None:
            answer(InitProducerIdResult(error))
            return
        rt = self._rt
        now = rt.now_ms()
        meta = rt.transactions.get(txn_id)
        if meta is None:
            meta = new_metadata(txn_id, self._producer_ids.next_id(), request.transaction_timeout_ms, now)
        last_epoch = rt.last_epochs.get(txn_id, NO_PRODUCER_EPOCH)
        decision = decide_init(meta, request, last_epoch, self._producer_ids.next_id, now)
        if isinstance(decision, ErrorCode):
            answer(InitProducerIdResult(decision))
        elif decision.fence:
            # Once the abort is durable the client is told to retry (and bumps the epoch again then).
            def fenced(error: ErrorCode) -> None:
                answer(
                    InitProducerIdResult(
                        ErrorCode.CONCURRENT_TRANSACTIONS if error is ErrorCode.NONE else error
                    )
                )

            self._fence_and_abort(meta, fenced)
        else:
            new = decision.metadata

            def written(error: ErrorCode) -> None:
                if error is not ErrorCode.NONE:
                    answer(InitProducerIdResult(error))
                    return
                rt.last_epochs[txn_id] = decision.last_epoch
                log.info(
                    "txn.init",
                    transactional_id=txn_id,
                    producer_id=new.producer_id,
                    producer_epoch=new.producer_epoch,
                )
                answer(InitProducerIdResult(ErrorCode.NONE, new.producer_id, new.producer_epoch))

            rt.write_metadata(new, written)

    def _check_init(self, txn_id: str, timeout_ms: int) -> ErrorCode | None:
        if not txn_id:
            return ErrorCode.INVALID_REQUEST
        if not 0 < timeout_ms <= self._rt.config.max_timeout_ms:
            return ErrorCode.INVALID_TRANSACTION_TIMEOUT
        return self._check_id(txn_id)

    def _check_id(self, txn_id: str) -> ErrorCode | None:
        if not txn_id:
            return ErrorCode.INVALID_REQUEST
        if self._rt.sink.is_loading(txn_id):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if txn_id in self._rt.pending:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        return None

    def _admit(self, txn_id: str) -> tuple[ErrorCode | None, bool]:
        """The error to answer at once (None: go on to the decision), and whether a write for this id
        is in flight (the decision then answers CONCURRENT_TRANSACTIONS where Kafka does)."""
        error = self._check_id(txn_id)
        pending = error is ErrorCode.CONCURRENT_TRANSACTIONS
        return (None if pending else error), pending

    def _fence_and_abort(self, meta: TransactionMetadata, then: Callable[[ErrorCode], None]) -> None:
        """Bump the epoch (fencing the producer that holds it) and abort its open transaction."""
        rt = self._rt
        rotate = meta.client_transaction_version >= TRANSACTION_V2 and meta.is_epoch_exhausted
        next_id = self._producer_ids.next_id() if rotate else NO_PRODUCER_ID
        aborted = prepare_fence_and_abort(meta, rt.now_ms(), next_id)

        def written(error: ErrorCode) -> None:
            if error is ErrorCode.NONE:
                rt.last_epochs.pop(meta.transactional_id, None)
                log.info(
                    "txn.fenced",
                    transactional_id=meta.transactional_id,
                    producer_epoch=aborted.producer_epoch,
                )
                self._markers.send(aborted)
            then(error)

        rt.write_metadata(aborted, written, pending=TxnState.PREPARE_EPOCH_FENCE)

    @entry
    def add_partitions(self, request: AddPartitionsRequest, callback: ErrorCallback) -> None:
        """AddPartitionsToTxn: one error for all of the transaction's partitions."""
        rt = self._rt
        txn_id = request.transactional_id
        refused, pending = self._admit(txn_id)
        if refused is not None:
            self.outbox.send(callback, refused)
            return
        decision = decide_add_partitions(rt.transactions.get(txn_id), request, pending, rt.now_ms())
        if isinstance(decision, ErrorCode):
            self.outbox.send(callback, decision)
            return
        rt.write_metadata(decision, lambda e: self.outbox.send(callback, e))

    @entry
    def add_offsets(self, request: AddOffsetsRequest, callback: ErrorCallback) -> None:
        """AddOffsetsToTxn: adds the `__consumer_offsets` partition of the group."""
        partition = partition_for(request.group_id, self._rt.config.offsets_topic_num_partitions)
        partitions = frozenset({TopicPartition(OFFSETS_TOPIC, partition)})
        add = AddPartitionsRequest(
            request.transactional_id, request.producer_id, request.producer_epoch, partitions
        )
        self.add_partitions(add, callback)

    def verify_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Collection[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]:
        """AddPartitionsToTxn v4+ `verify_only`: see `decisions.verify_partitions` (writes nothing)."""
        wanted = frozenset(partitions)
        refused, pending = self._admit(transactional_id)
        if refused is not None:
            return dict.fromkeys(wanted, refused)
        meta = self._rt.transactions.get(transactional_id)
        return verify_partitions(meta, producer_id, producer_epoch, wanted, pending)

    @entry
    def end_txn(self, request: EndTxnRequest, callback: ErrorCallback) -> None:
        """EndTxn, answered with its error only (see `end_transaction`)."""
        self.end_transaction(request, lambda result: callback(result.error))

    @entry
    def end_transaction(self, request: EndTxnRequest, callback: EndCallback) -> None:
        """EndTxn: answered once the decision is durable; the markers follow. With transactions V2 the
        answer carries the producer id and epoch the producer goes on with."""
        rt = self._rt
        txn_id = request.transactional_id
        refused, pending = self._admit(txn_id)
        if refused is not None:
            self.outbox.send(callback, EndTxnResult(refused))
            return
        meta = rt.transactions.get(txn_id)
        v2 = request.transaction_version >= 2
        decision: TransactionMetadata | ErrorCode | EndTxnResult
        if v2:
            decision = decide_end_v2(meta, request, pending, self._producer_ids.next_id, rt.now_ms())
        else:
            decision = decide_end(meta, request, pending, rt.now_ms())
        if isinstance(decision, ErrorCode):
            decision = EndTxnResult(decision)
        if isinstance(decision, EndTxnResult):
            self.outbox.send(callback, decision)
            return
        prepared = decision

        def written(error: ErrorCode) -> None:
            if error is not ErrorCode.NONE:
                self.outbox.send(callback, EndTxnResult(error))
                return
            if v2 and meta is not None:
                # Kafka's lastProducerEpoch: an InitProducerId naming the epoch before this bump is a
                # producer that missed this answer, and gets the bumped epoch rather than a fence.
                rt.last_epochs[txn_id] = meta.producer_epoch
            self._markers.send(prepared)
            pid, epoch = next_producer(prepared) if v2 else (prepared.producer_id, prepared.producer_epoch)
            self.outbox.send(callback, EndTxnResult(ErrorCode.NONE, pid, epoch))

        rt.write_metadata(prepared, written)

    # -- timers (also callable directly) ---------------------------------------------------------

    @entry
    def abort_timed_out(self) -> None:
        self._expiry.abort_timed_out()

    @entry
    def remove_expired(self) -> None:
        self._expiry.remove_expired()

    # -- queries ---------------------------------------------------------------------------------

    def describe(self, transactional_id: str) -> DescribedTransaction:
        return queries.describe(self._rt, transactional_id)

    def list_transactions(
        self,
        state_filters: Collection[str] = (),
        producer_id_filters: Collection[int] = (),
        duration_filter_ms: int = -1,
    ) -> ListTransactionsResult:
        return queries.list_transactions(self._rt, state_filters, producer_id_filters, duration_filter_ms)

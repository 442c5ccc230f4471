"""Transactions V2 (KIP-890 part 2) in the coordinator, in virtual time: the epoch bumped at every
transaction end and handed back, the rotation to a new producer id when the epoch runs out, the V2
rules for retried EndTxn, implicit adds, InitProducerId fencing without a double bump
(KAFKA-19367), and a restart in the middle of a V2 transaction."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kafkito.broker.transactions import TransactionRecord, TxnState
from kafkito.broker.transactions.codec import decode_record, encode_record
from kafkito.broker.transactions.metadata import MAX_PRODUCER_EPOCH, NO_PRODUCER_ID
from kafkito.broker.transactions.requests import AddPartitionsRequest, EndTxnRequest, EndTxnResult
from kafkito.protocol.errors import ErrorCode
from tests.transactions.harness import TXN, Harness, tp

V2 = 2


def add2(h: Harness, pid: int, epoch: int, *partitions: object) -> ErrorCode | None:
    """A partition added by a Produce v12 / TxnOffsetCommit v5 (a V2 add)."""
    out: list[ErrorCode] = []
    parts = frozenset(partitions or (tp("t"),))
    h.coordinator.add_partitions(AddPartitionsRequest(TXN, pid, epoch, parts, V2), out.append)  # type: ignore[arg-type]
    return out[0] if out else None


def end2(h: Harness, pid: int, epoch: int, commit: bool = True) -> EndTxnResult | None:
    """EndTxn v5."""
    out: list[EndTxnResult] = []
    h.coordinator.end_transaction(EndTxnRequest(TXN, pid, epoch, commit, V2), out.append)
    return out[0] if out else None


def one_transaction(h: Harness, pid: int, epoch: int, commit: bool = True) -> tuple[int, int]:
    assert add2(h, pid, epoch, tp("t", 0), tp("u", 1)) is ErrorCode.NONE
    result = end2(h, pid, epoch, commit)
    assert result is not None and result.error is ErrorCode.NONE, result
    return result.producer_id, result.producer_epoch


def seeded(epoch: int, state: TxnState = TxnState.COMPLETE_COMMIT) -> tuple[Harness, int]:
    """A coordinator whose id is at `epoch` (as its record on the log says), reloaded."""
    h = Harness()
    pid, _ = h.init_ok()
    h.sink.records.append(TransactionRecord(replace(h.state(), producer_epoch=epoch, state=state)))
    h.restart()
    return h, pid


def test_every_transaction_end_bumps_the_epoch_and_answers_it() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    assert epoch == 0
    for expected, commit in ((1, True), (2, False), (3, True)):
        assert one_transaction(h, pid, epoch, commit) == (pid, expected)
        meta = h.state()
        assert meta.state is (TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT)
        assert (meta.producer_id, meta.producer_epoch, meta.client_transaction_version) == (pid, expected, V2)
        # The markers carry the bumped epoch: the one the next transaction starts with.
        assert h.markers.marked(pid, expected) == {tp("t", 0), tp("u", 1)}
        epoch = expected
    assert [r.producer_epoch for r in h.markers.requests] == [1, 2, 3]


def test_the_old_epoch_is_fenced_once_a_transaction_ended() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    one_transaction(h, pid, epoch)
    assert add2(h, pid, epoch) is ErrorCode.PRODUCER_FENCED
    assert h.coordinator.verify_partitions(TXN, pid, epoch, [tp("t", 0)]) == {
        tp("t", 0): ErrorCode.PRODUCER_FENCED
    }


def test_the_decision_record_holds_the_bumped_epoch_and_the_client_version() -> None:
    h = Harness()
    h.markers.defer = True
    pid, epoch = h.init_ok()
    assert add2(h, pid, epoch, tp("t")) is ErrorCode.NONE
    assert h.state().client_transaction_version == V2
    assert end2(h, pid, epoch) == EndTxnResult(ErrorCode.NONE, pid, epoch + 1)
    prepared = h.state()
    assert (prepared.state, prepared.producer_epoch) == (TxnState.PREPARE_COMMIT, epoch + 1)
    assert prepared.next_producer_id == NO_PRODUCER_ID
    [request] = h.markers.requests
    assert (request.producer_id, request.producer_epoch) == (pid, epoch + 1)


def test_epoch_overflow_moves_the_producer_to_a_new_id_at_epoch_0() -> None:
    h, pid = seeded(MAX_PRODUCER_EPOCH - 3)
    epoch = MAX_PRODUCER_EPOCH - 3
    assert one_transaction(h, pid, epoch) == (pid, MAX_PRODUCER_EPOCH - 2)
    h.markers.defer = True
    epoch = MAX_PRODUCER_EPOCH - 2
    assert one_transaction(h, pid, epoch) == (pid, MAX_PRODUCER_EPOCH - 1)
    h.markers.complete()
    epoch = MAX_PRODUCER_EPOCH - 1  # exhausted: the next end hands out a new producer id
    assert add2(h, pid, epoch) is ErrorCode.NONE
    new_pid, new_epoch = h.ids.next, 0
    assert end2(h, pid, epoch) == EndTxnResult(ErrorCode.NONE, new_pid, new_epoch)
    prepared = h.state()
    assert (prepared.producer_id, prepared.producer_epoch) == (pid, MAX_PRODUCER_EPOCH)
    assert prepared.next_producer_id == new_pid
    [request] = h.markers.requests[-1:]
    assert (request.producer_id, request.producer_epoch) == (pid, MAX_PRODUCER_EPOCH)
    h.markers.defer = False
    h.markers.complete()
    done = h.state()
    assert (done.state, done.producer_id, done.producer_epoch) == (TxnState.COMPLETE_COMMIT, new_pid, 0)
    assert (done.previous_producer_id, done.next_producer_id) == (pid, NO_PRODUCER_ID)
    # The new id opens the next transaction; the old one is fenced.
    assert one_transaction(h, new_pid, 0) == (new_pid, 1)
    assert add2(h, pid, epoch) is ErrorCode.INVALID_PRODUCER_ID_MAPPING


def test_a_retried_end_after_an_overflow_gets_the_new_producer_id() -> None:
    h, pid = seeded(MAX_PRODUCER_EPOCH - 1)
    epoch = MAX_PRODUCER_EPOCH - 1
    assert add2(h, pid, epoch) is ErrorCode.NONE
    first = end2(h, pid, epoch)
    assert first is not None and first.producer_id != pid and first.producer_epoch == 0
    assert end2(h, pid, epoch) == first  # the producer missed the answer and sent it again
    assert end2(h, pid, epoch, commit=False) == EndTxnResult(ErrorCode.INVALID_TXN_STATE)


def test_a_retried_end_is_answered_with_the_bumped_epoch() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    assert one_transaction(h, pid, epoch) == (pid, epoch + 1)
    assert end2(h, pid, epoch) == EndTxnResult(ErrorCode.NONE, pid, epoch + 1)
    # A retried commit is not an abort: the wrong decision for the epoch before is refused.
    assert end2(h, pid, epoch, commit=False) == EndTxnResult(ErrorCode.INVALID_TXN_STATE)
    assert end2(h, pid, epoch - 1) == EndTxnResult(ErrorCode.PRODUCER_FENCED)
    assert end2(h, pid + 99, epoch + 1) == EndTxnResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)


def test_a_retry_while_the_markers_are_written_is_told_to_wait() -> None:
    h = Harness()
    h.markers.defer = True
    pid, epoch = h.init_ok()
    assert one_transaction(h, pid, epoch) == (pid, epoch + 1)
    assert end2(h, pid, epoch) == EndTxnResult(ErrorCode.CONCURRENT_TRANSACTIONS)
    assert end2(h, pid, epoch, commit=False) == EndTxnResult(ErrorCode.INVALID_TXN_STATE)
    # The producer's next transaction waits too (retriable), rather than being fenced.
    assert add2(h, pid, epoch + 1) is ErrorCode.CONCURRENT_TRANSACTIONS
    assert end2(h, pid, epoch + 1) == EndTxnResult(ErrorCode.PRODUCER_FENCED)
    h.markers.complete()
    assert add2(h, pid, epoch + 1) is ErrorCode.NONE


@pytest.mark.parametrize("state", [TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT])
def test_an_abort_with_nothing_open_bumps_the_epoch_and_a_commit_is_refused(state: TxnState) -> None:
    h, pid = seeded(5, state)
    assert end2(h, pid, 5, commit=True) == EndTxnResult(ErrorCode.INVALID_TXN_STATE)
    assert end2(h, pid, 5, commit=False) == EndTxnResult(ErrorCode.NONE, pid, 6)
    meta = h.state()
    assert (meta.state, meta.producer_epoch, meta.partitions) == (TxnState.COMPLETE_ABORT, 6, frozenset())
    assert h.markers.requests == []  # no partition: no marker


def test_v1_clients_keep_their_epoch_on_the_same_coordinator() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    assert h.add(pid, epoch, tp("t")) is ErrorCode.NONE
    assert h.end(pid, epoch) is ErrorCode.NONE
    meta = h.state()
    assert (meta.state, meta.producer_epoch, meta.client_transaction_version) == (
        TxnState.COMPLETE_COMMIT,
        epoch,
        0,
    )
    assert h.markers.marked(pid, epoch) == {tp("t")}
    assert h.add(pid, epoch, tp("t")) is ErrorCode.NONE  # the next V1 transaction, same epoch


def test_init_producer_id_fences_a_v2_transaction_with_a_single_bump() -> None:
    """KAFKA-19367: fencing the open transaction bumps once (its abort carries that epoch); the retry
    bumps once more."""
    h = Harness()
    pid, epoch = h.init_ok()
    assert add2(h, pid, epoch, tp("t")) is ErrorCode.NONE
    fenced = h.init()
    assert fenced is not None and fenced.error is ErrorCode.CONCURRENT_TRANSACTIONS
    aborted = h.state()
    assert (aborted.state, aborted.producer_epoch) == (TxnState.COMPLETE_ABORT, epoch + 1)
    assert h.markers.marked(pid, epoch + 1) == {tp("t")}
    assert h.init_ok() == (pid, epoch + 2)


def test_init_producer_id_at_the_last_epoch_rotates_instead_of_overflowing() -> None:
    h, pid = seeded(MAX_PRODUCER_EPOCH - 2)
    epoch = MAX_PRODUCER_EPOCH - 2
    assert add2(h, pid, epoch, tp("t")) is ErrorCode.NONE
    fenced = h.init()
    assert fenced is not None and fenced.error is ErrorCode.CONCURRENT_TRANSACTIONS
    assert h.state().producer_epoch == MAX_PRODUCER_EPOCH - 1
    new_pid, new_epoch = h.init_ok()
    assert new_pid != pid and new_epoch == 0


def test_init_producer_id_after_a_missed_end_answer_gets_the_bumped_epoch() -> None:
    """The producer lost EndTxn's answer and re-initialises naming the epoch it had (KIP-360)."""
    h = Harness()
    pid, epoch = h.init_ok()
    assert one_transaction(h, pid, epoch) == (pid, epoch + 1)
    again = h.init(producer_id=pid, epoch=epoch)
    assert again is not None and (again.error, again.producer_id, again.producer_epoch) == (
        ErrorCode.NONE,
        pid,
        epoch + 1,
    )


def test_a_timed_out_v2_transaction_is_aborted_under_the_next_epoch() -> None:
    h = Harness()
    pid, epoch = h.init_ok(timeout_ms=10_000)
    assert add2(h, pid, epoch, tp("t")) is ErrorCode.NONE
    h.clock.advance(70_000)
    meta = h.state()
    assert (meta.state, meta.producer_epoch) == (TxnState.COMPLETE_ABORT, epoch + 1)
    assert end2(h, pid, epoch) == EndTxnResult(ErrorCode.INVALID_TXN_STATE)  # commit, after an abort


def test_restart_mid_commit_completes_on_the_new_producer_id() -> None:
    h, pid = seeded(MAX_PRODUCER_EPOCH - 1)
    epoch = MAX_PRODUCER_EPOCH - 1
    h.markers.defer = True
    assert add2(h, pid, epoch, tp("t"), tp("u")) is ErrorCode.NONE
    result = end2(h, pid, epoch)
    assert result is not None and result.error is ErrorCode.NONE
    # The restart reads the records through Kafka's format (the next producer id is a tagged field).
    h.sink.records[:] = [decode_record(*encode_record(r, 1)) for r in h.sink.records]  # type: ignore[misc]
    h.markers.defer = False
    h.restart()
    done = h.state()
    assert (done.state, done.producer_id, done.producer_epoch) == (
        TxnState.COMPLETE_COMMIT,
        result.producer_id,
        0,
    )
    assert h.markers.marked(pid, MAX_PRODUCER_EPOCH) == {tp("t"), tp("u")}
    assert end2(h, pid, epoch) == result  # a retry after the restart still finds its answer


def test_restart_mid_transaction_keeps_the_v2_transaction_open() -> None:
    h = Harness()
    pid, epoch = h.init_ok()
    pid, epoch = one_transaction(h, pid, epoch)
    assert add2(h, pid, epoch, tp("t", 2)) is ErrorCode.NONE
    h.sink.records[:] = [decode_record(*encode_record(r, 1)) for r in h.sink.records]  # type: ignore[misc]
    h.restart()
    meta = h.state()
    assert (meta.state, meta.producer_epoch, meta.client_transaction_version) == (TxnState.ONGOING, epoch, V2)
    assert end2(h, pid, epoch, commit=False) == EndTxnResult(ErrorCode.NONE, pid, epoch + 1)
    assert h.markers.marked(pid, epoch + 1) == {tp("t", 2)}


def test_a_v2_transaction_fenced_at_its_last_epoch_moves_to_a_new_producer_id() -> None:
    """KAFKA-20090: the timeout's fence bumps to the maximum epoch; the abort hands the producer a new
    id, so a late EndTxn from it never gets (nor opens a transaction at) the maximum epoch."""
    h, pid = seeded(MAX_PRODUCER_EPOCH - 1, TxnState.EMPTY)
    epoch = MAX_PRODUCER_EPOCH - 1
    assert add2(h, pid, epoch, tp("t")) is ErrorCode.NONE
    h.clock.advance(70_000)  # timed out: fenced and aborted
    assert h.markers.marked(pid, MAX_PRODUCER_EPOCH) == {tp("t")}
    meta = h.state()
    assert (meta.state, meta.producer_epoch, meta.previous_producer_id) == (TxnState.COMPLETE_ABORT, 0, pid)
    new_pid = meta.producer_id
    assert new_pid != pid
    assert end2(h, pid, epoch, commit=False) == EndTxnResult(ErrorCode.NONE, new_pid, 0)
    assert one_transaction(h, new_pid, 0) == (new_pid, 1)
    assert h.init_ok() == (new_pid, 2)

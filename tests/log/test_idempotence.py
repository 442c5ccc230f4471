"""Idempotent producers: retried batches are acknowledged, not re-appended; gaps and stale epochs fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkito.broker.log.errors import InvalidProducerEpoch, OutOfOrderSequence
from kafkito.broker.log.partition_log import PartitionLog

from .helpers import GZIP, batch, config, records

PID = 4000


def send(plog: PartitionLog, seq: int, n: int = 3, epoch: int = 0, pid: int = PID) -> int:
    return plog.append(batch(records(n, start=seq), producer_id=pid, epoch=epoch, sequence=seq)).base_offset


def test_a_retried_batch_gets_its_original_offsets_and_is_not_stored_again(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    assert send(plog, 0) == 0
    plog.append(batch(2))  # someone else's records in between
    raw = batch(records(3, start=3), producer_id=PID, epoch=0, sequence=3)
    first = plog.append(raw)
    retry = plog.append(raw)
    assert (retry.base_offset, retry.last_offset, retry.duplicate) == (5, 7, True)
    assert not first.duplicate
    assert plog.log_end_offset == 8
    # An older batch of the last five is still recognised.
    assert plog.append(batch(records(3), producer_id=PID, epoch=0, sequence=0)).base_offset == 0
    assert plog.log_end_offset == 8


def test_only_the_last_five_batches_are_remembered(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    for i in range(6):
        send(plog, i * 3)
    with pytest.raises(OutOfOrderSequence):
        send(plog, 0)
    assert send(plog, 3) == 3  # the second batch is still in the window


def test_a_sequence_gap_is_out_of_order(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    send(plog, 0)
    with pytest.raises(OutOfOrderSequence) as e:
        send(plog, 4)
    assert e.value.code == 45
    assert plog.log_end_offset == 3
    assert send(plog, 3) == 3


def test_epochs_fence_old_producers_and_a_new_epoch_restarts_at_zero(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    send(plog, 0, epoch=1)
    with pytest.raises(InvalidProducerEpoch) as e:
        send(plog, 3, epoch=0)
    assert e.value.code == 47
    with pytest.raises(OutOfOrderSequence):
        send(plog, 3, epoch=2)
    assert send(plog, 0, epoch=2) == 3
    with pytest.raises(InvalidProducerEpoch):
        send(plog, 3, epoch=1)


def test_an_unknown_producer_may_start_at_any_sequence(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    assert send(plog, 42) == 0
    assert send(plog, 45) == 3


def test_sequences_wrap_around_at_int32_max(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    top = 2**31 - 3
    send(plog, top, n=3)
    assert send(plog, 0) == 3


def test_a_failed_batch_in_a_multi_batch_append_stores_nothing(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    good = batch(records(2), producer_id=PID, epoch=0, sequence=0)
    gap = batch(records(2), producer_id=PID, epoch=0, sequence=5)
    with pytest.raises(OutOfOrderSequence):
        plog.append(good + gap)
    assert plog.log_end_offset == 0
    ok = plog.append(good + batch(records(2), producer_id=PID, epoch=0, sequence=2))
    assert (ok.base_offset, ok.last_offset) == (0, 3)


def test_producer_state_is_rebuilt_from_the_log_on_restart(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config())
    raw = batch(records(4), producer_id=PID, epoch=3, sequence=0, compression=GZIP)
    plog.append(batch(1))
    plog.append(raw)
    send(plog, 0, pid=PID + 1)
    # Crash: no close. Reopen and retry.
    again = PartitionLog(tmp_path, config())
    retry = again.append(raw)
    assert (retry.base_offset, retry.duplicate) == (1, True)
    with pytest.raises(OutOfOrderSequence):
        send(again, 9, epoch=3)
    with pytest.raises(InvalidProducerEpoch):
        send(again, 4, epoch=2)
    assert send(again, 3, pid=PID + 1) == 8


def test_silent_producers_expire_at_the_retention_pass(tmp_path: Path) -> None:
    plog = PartitionLog(tmp_path, config(producer_id_expiration_ms=1000, retention_ms=-1))
    ts = records(1)[0].timestamp
    send(plog, 0)
    send(plog, 0, pid=PID + 1)
    plog.append(batch(records(1, start=5), producer_id=PID + 1, epoch=0, sequence=3))
    plog.maybe_enforce_retention(ts + 1003)  # PID last wrote at ts + 2, PID + 1 at ts + 5
    assert plog.producers.entry(PID) is None
    assert plog.producers.entry(PID + 1) is not None
    assert send(plog, 7) == 7  # forgotten: any sequence is accepted again

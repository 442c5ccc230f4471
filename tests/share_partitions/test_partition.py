"""SharePartition in virtual time: acquisition, locks expiring on the purgatory timer, redelivery, the
delivery-count limit, release vs reject, acknowledgements from the wrong member, the start offset."""

from __future__ import annotations

import uuid

import pytest

from kafkito.broker.share.partition import ShareLimits, SharePartition
from kafkito.broker.share.states import AcquiredRange, RecordState, StateBatch
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import ManualClock, Timer

ACCEPT, RELEASE, REJECT, GAP, RENEW = 1, 2, 3, 0, 4


class Recorder:
    def __init__(self) -> None:
        self.writes: list[tuple[int, list[StateBatch]]] = []
        self.completes: list[int] = []  # the delivery-complete count of each write
        self.releases = 0

    def write(self, start: int, complete: int, batches: list[StateBatch]) -> None:
        self.writes.append((start, batches))
        self.completes.append(complete)

    def release(self) -> None:
        self.releases += 1


def partition(start: int = 0, **limits: int) -> tuple[SharePartition, ManualClock, Recorder]:
    clock = ManualClock()
    timer = Timer(clock)
    rec = Recorder()
    sp = SharePartition(("g", uuid.uuid4(), 0), start, timer, ShareLimits(**limits), rec.write, rec.release)
    return sp, clock, rec


def states(sp: SharePartition) -> dict[int, tuple[str, int, str | None]]:
    return {o: (r.state.name, r.delivery_count, r.member_id) for o, r in sorted(sp.records.items())}


def test_acquire_gives_ranges_with_delivery_counts_and_locks_the_records() -> None:
    sp, _, _ = partition()
    assert sp.acquire("m1", range(0, 5)) == [AcquiredRange(0, 4, 1)]
    assert all(r.state is RecordState.ACQUIRED and r.member_id == "m1" for r in sp.records.values())
    assert sp.next_offset == 5 and sp.start_offset == 0
    assert sp.acquire("m2", range(0, 5)) == []  # held by m1: nobody else gets them


def test_lock_expiry_makes_records_available_again_and_redelivery_counts_up() -> None:
    sp, clock, rec = partition(record_lock_duration_ms=1000)
    sp.acquire("m1", [0, 1, 2])
    clock.advance(999)
    assert sp.records[0].state is RecordState.ACQUIRED
    clock.advance(1)
    assert [r.state for r in sp.records.values()] == [RecordState.AVAILABLE] * 3
    assert rec.releases == 1
    assert rec.writes[-1] == (0, [StateBatch(0, 2, 0, 1)])
    assert sp.acquire("m2", sp.available(10)) == [AcquiredRange(0, 2, 2)]
    assert sp.records[1].member_id == "m2"


def test_delivery_count_limit_archives_a_record_instead_of_releasing_it() -> None:
    sp, clock, _ = partition(record_lock_duration_ms=100, delivery_count_limit=3)
    for delivery in (1, 2, 3):
        assert sp.acquire("m", sp.available(10) or [0]) == [AcquiredRange(0, 0, delivery)]
        clock.advance(100)
    assert 0 not in sp.records  # archived and passed by the start offset
    assert sp.start_offset == 1
    assert sp.available(10) == []


def test_release_redelivers_and_reject_archives() -> None:
    sp, _, rec = partition()
    sp.acquire("m", range(0, 4))
    assert sp.acknowledge("m", [(0, 3, (RELEASE, REJECT, ACCEPT, RELEASE))]) is ErrorCode.NONE
    assert states(sp) == {0: ("AVAILABLE", 1, None), 1: ("ARCHIVED", 1, None), 2: ("ACKNOWLEDGED", 1, None),
                          3: ("AVAILABLE", 1, None)}  # fmt: skip
    assert sp.available(10) == [0, 3]
    assert rec.releases == 1
    sp.acquire("m", [0, 3])
    assert sp.acknowledge("m", [(0, 0, (ACCEPT,)), (3, 3, (ACCEPT,))]) is ErrorCode.NONE
    assert sp.start_offset == 4 and sp.records == {}


def test_acknowledgements_of_records_another_member_holds_are_refused_whole() -> None:
    sp, _, _ = partition()
    sp.acquire("m1", [0, 1])
    sp.acquire("m2", [2, 3])
    assert sp.acknowledge("m1", [(0, 3, (ACCEPT,))]) is ErrorCode.INVALID_RECORD_STATE
    assert [r.state for r in sp.records.values()] == [RecordState.ACQUIRED] * 4  # nothing applied
    assert sp.acknowledge("m1", [(0, 1, (ACCEPT,))]) is ErrorCode.NONE
    assert sp.acknowledge("m1", [(0, 0, (ACCEPT,))]) is ErrorCode.INVALID_RECORD_STATE  # already done


def test_acknowledgements_after_the_member_left_are_refused() -> None:
    sp, _, _ = partition()
    sp.acquire("m1", [0, 1])
    assert sp.release_member("m1") == 2
    assert sp.acknowledge("m1", [(0, 1, (ACCEPT,))]) is ErrorCode.INVALID_RECORD_STATE
    assert sp.available(10) == [0, 1]


@pytest.mark.parametrize(
    "batch",
    [(3, 2, (ACCEPT,)), (0, 2, (ACCEPT, ACCEPT)), (0, 0, ()), (0, 0, (9,)), (0, 0, (RENEW,))],
    ids=["last-before-first", "types-length", "no-types", "unknown-type", "renew-before-v2"],
)
def test_malformed_acknowledgements_are_invalid_requests(batch: tuple[int, int, tuple[int, ...]]) -> None:
    sp, _, _ = partition()
    sp.acquire("m", [0, 1, 2])
    assert sp.acknowledge("m", [batch]) is ErrorCode.INVALID_REQUEST
    assert sp.acknowledge("m", [(0, 0, (ACCEPT,)), (0, 0, (ACCEPT,))]) is ErrorCode.INVALID_REQUEST


def test_gap_archives_and_renew_extends_the_lock() -> None:
    sp, clock, _ = partition(record_lock_duration_ms=1000)
    sp.acquire("m", [0, 1])
    clock.advance(900)
    assert sp.acknowledge("m", [(0, 0, (GAP,)), (1, 1, (RENEW,))], renew=True) is ErrorCode.NONE
    clock.advance(900)  # past the first lock, within the renewed one
    assert sp.records[1].state is RecordState.ACQUIRED and sp.records[1].delivery_count == 1
    clock.advance(100)
    assert sp.records[1].state is RecordState.AVAILABLE
    assert sp.start_offset == 1


def test_the_in_flight_window_is_bounded_by_max_record_locks() -> None:
    sp, _, _ = partition(max_record_locks=10)
    sp.acquire("m", range(0, 10))
    assert sp.window_room() == 0
    sp.acknowledge("m", [(0, 3, (ACCEPT,))])
    assert sp.window_room() == 4


def test_restore_keeps_terminal_states_and_makes_the_rest_available() -> None:
    sp, _, _ = partition()
    sp.restore(10, [StateBatch(10, 11, 2, 1), StateBatch(12, 12, 0, 3), StateBatch(15, 16, 4, 5)])
    assert sp.start_offset == 12
    assert sp.available(10) == [12]
    assert sp.acquire("m", [12]) == [AcquiredRange(12, 12, 4)]
    # 13 and 14 were acquired before the restart and never written: they are new again
    assert sp.acquire("m", [13, 14, 15, 16]) == [AcquiredRange(13, 14, 1)]
    sp.acknowledge("m", [(12, 14, (ACCEPT,))])
    assert sp.start_offset == 17


def test_each_write_counts_the_records_whose_delivery_is_complete_from_its_start_offset() -> None:
    sp, _, rec = partition(delivery_count_limit=2)
    sp.acquire("m", range(0, 5))
    sp.acknowledge("m", [(1, 2, (ACCEPT,)), (3, 3, (REJECT,))])  # 0 still acquired
    assert (rec.writes[-1][0], rec.completes[-1]) == (0, 3)
    sp.acknowledge("m", [(0, 0, (ACCEPT,))])
    assert (rec.writes[-1][0], rec.completes[-1]) == (0, 4)  # written before the start moves past them
    assert sp.start_offset == 4 and sp.delivery_complete == 0
    sp.acknowledge("m", [(4, 4, (RELEASE,))])
    assert (rec.writes[-1][0], rec.completes[-1]) == (4, 0)
    sp.acquire("m", [4, 5])
    sp.release_member("m")  # 4 reaches the delivery count limit: archived; 5 is available again
    assert (rec.writes[-1][0], rec.completes[-1]) == (4, 1)
    assert sp.start_offset == 5 and sp.delivery_complete == 0
    sp.restore(5, [StateBatch(5, 5, 0, 1), StateBatch(6, 7, 2, 1)])
    assert sp.delivery_complete == 2  # the terminal records the persisted state holds past the start


def test_skipped_offsets_and_a_moved_log_start_pass_the_start_offset() -> None:
    sp, _, rec = partition()
    sp.acquire("m", [0, 1])
    sp.skip([2])  # a control record
    assert sp.start_offset == 0
    sp.passed(2)  # retention deleted 0 and 1
    assert sp.start_offset == 3 and sp.records == {}
    assert rec.writes[-1][0] == 3


def test_share_sessions_check_epochs_and_evict_the_least_recently_used() -> None:
    from kafkito.broker.share.sessions import ShareSessionError, ShareSessions

    sessions = ShareSessions(max_sessions=2)
    a, gone = sessions.open("g", "a")
    assert gone == []
    sessions.open("g", "b")
    assert sessions.use("g", "a", 1) is a  # a is now the most recently used
    with pytest.raises(ShareSessionError) as wrong:
        sessions.use("g", "a", 1)
    assert wrong.value.error is ErrorCode.INVALID_SHARE_SESSION_EPOCH
    _, gone = sessions.open("g", "c")
    assert [s.member_id for s in gone] == ["b"]
    with pytest.raises(ShareSessionError) as missing:
        sessions.use("g", "b", 1)
    assert missing.value.error is ErrorCode.SHARE_SESSION_NOT_FOUND
    _, gone = sessions.open("g", "a")  # reopened: the old one's records are released
    assert [s.member_id for s in gone] == ["a"]


def test_a_log_start_moving_into_a_lock_keeps_the_lock_of_the_records_left() -> None:
    sp, clock, _ = partition(record_lock_duration_ms=1000)
    sp.acquire("m", [0, 1, 2, 3])
    sp.passed(2)
    assert sorted(sp.records) == [2, 3] and sp.records[2].state is RecordState.ACQUIRED
    clock.advance(1000)
    assert sp.available(10) == [2, 3]

"""DescribeTransactions and ListTransactions (state, producer id and duration filters)."""

from __future__ import annotations

from kafkito.protocol.errors import ErrorCode
from tests.transactions.harness import Harness, tp


def _setup(h: Harness) -> dict[str, int]:
    pids = {}
    for name in ("empty", "ongoing", "committed"):
        pids[name], _ = h.init_ok(name, timeout_ms=30_000)
    h.clock.advance(1_000)
    assert h.add(pids["ongoing"], 0, tp("t", 1), tp("t", 0), tp("u", 2), txn_id="ongoing") is ErrorCode.NONE
    assert h.add(pids["committed"], 0, txn_id="committed") is ErrorCode.NONE
    assert h.end(pids["committed"], 0, txn_id="committed") is ErrorCode.NONE
    return pids


def test_describe() -> None:
    h = Harness()
    pids = _setup(h)
    described = h.coordinator.describe("ongoing")
    assert described.error is ErrorCode.NONE
    assert (described.state, described.producer_id, described.producer_epoch) == (
        "Ongoing",
        pids["ongoing"],
        0,
    )
    assert (described.timeout_ms, described.start_ms) == (30_000, 1_000)
    assert described.topics == (("t", (0, 1)), ("u", (2,)))
    assert h.coordinator.describe("committed").state == "CompleteCommit"
    assert h.coordinator.describe("nope").error is ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    assert h.coordinator.describe("").error is ErrorCode.INVALID_REQUEST
    h.sink.loading.add("empty")
    assert h.coordinator.describe("empty").error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


def test_list_with_filters() -> None:
    h = Harness()
    pids = _setup(h)
    c = h.coordinator
    assert [t.transactional_id for t in c.list_transactions().transactions] == [
        "committed",
        "empty",
        "ongoing",
    ]
    ongoing = c.list_transactions(state_filters=["Ongoing"])
    assert [(t.transactional_id, t.producer_id, t.state) for t in ongoing.transactions] == [
        ("ongoing", pids["ongoing"], "Ongoing")
    ]
    by_pid = c.list_transactions(producer_id_filters=[pids["empty"], 999_999])
    assert [t.transactional_id for t in by_pid.transactions] == ["empty"]
    unknown = c.list_transactions(state_filters=["Bogus", "Empty"])
    assert unknown.unknown_state_filters == ("Bogus",)
    assert [t.transactional_id for t in unknown.transactions] == ["empty"]
    only_unknown = c.list_transactions(state_filters=["Bogus"])
    assert only_unknown.transactions == () and only_unknown.error is ErrorCode.NONE


def test_list_duration_filter() -> None:
    h = Harness()
    _setup(h)
    h.clock.advance(5_000)  # the ongoing transaction started 5 s ago
    c = h.coordinator
    running = c.list_transactions(state_filters=["Ongoing"], duration_filter_ms=4_999)
    assert [t.transactional_id for t in running.transactions] == ["ongoing"]
    assert c.list_transactions(state_filters=["Ongoing"], duration_filter_ms=5_000).transactions == ()


def test_list_while_loading() -> None:
    h = Harness()
    h.sink.loading.add("x")
    assert h.coordinator.list_transactions().error is ErrorCode.COORDINATOR_LOAD_IN_PROGRESS

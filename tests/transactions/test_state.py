"""The state table: Kafka's states, ids, names and valid previous states."""

from __future__ import annotations

import pytest

from kafkito.broker.transactions.state import (
    VALID_PREVIOUS,
    IllegalTransition,
    TxnState,
    check_transition,
    is_valid_transition,
)

S = TxnState


def test_ids_and_names_are_kafkas() -> None:
    ids = {s.value: s.id for s in TxnState}
    assert ids == {
        "Empty": 0,
        "Ongoing": 1,
        "PrepareCommit": 2,
        "PrepareAbort": 3,
        "CompleteCommit": 4,
        "CompleteAbort": 5,
        "Dead": 6,
        "PrepareEpochFence": 7,
    }
    for state in TxnState:
        assert TxnState.from_id(state.id) is state
        assert TxnState.from_name(state.value) is state
    assert TxnState.from_name("ongoing") is None
    with pytest.raises(ValueError):
        TxnState.from_id(8)


def test_every_state_has_its_previous_states() -> None:
    assert set(VALID_PREVIOUS) == set(TxnState)
    assert VALID_PREVIOUS[S.PREPARE_COMMIT] == {S.ONGOING}
    assert VALID_PREVIOUS[S.COMPLETE_COMMIT] == {S.PREPARE_COMMIT}
    assert VALID_PREVIOUS[S.COMPLETE_ABORT] == {S.PREPARE_ABORT}
    assert VALID_PREVIOUS[S.PREPARE_EPOCH_FENCE] == {S.ONGOING}
    assert VALID_PREVIOUS[S.DEAD] == {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}
    assert S.PREPARE_EPOCH_FENCE in VALID_PREVIOUS[S.PREPARE_ABORT]


@pytest.mark.parametrize(
    ("previous", "new"),
    [
        (S.EMPTY, S.PREPARE_COMMIT),
        (S.ONGOING, S.COMPLETE_COMMIT),
        (S.PREPARE_COMMIT, S.PREPARE_ABORT),
        (S.PREPARE_ABORT, S.COMPLETE_COMMIT),
        (S.ONGOING, S.EMPTY),
        (S.ONGOING, S.DEAD),
        (S.DEAD, S.EMPTY),
    ],
)
def test_forbidden_transitions_raise(previous: TxnState, new: TxnState) -> None:
    assert not is_valid_transition(previous, new)
    with pytest.raises(IllegalTransition):
        check_transition(previous, new)


def test_expiration_only_without_an_open_transaction() -> None:
    assert {s for s in TxnState if s.expiration_allowed} == {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}

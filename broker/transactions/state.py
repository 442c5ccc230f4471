"""The transaction state machine, as data: each state, what it means, and the states it may follow.

A transactional id moves through these states (Kafka's `TransactionState`, same names and ids):

- **Empty** (0): the producer is initialised and no transaction is open. Left by AddPartitionsToTxn /
  AddOffsetsToTxn (-> Ongoing), a new InitProducerId (-> Empty, epoch bumped) or expiry (-> Dead).
- **Ongoing** (1): partitions have been added; records may be in the data logs. Left by EndTxn
  (-> PrepareCommit / PrepareAbort), more AddPartitions (-> Ongoing), or by a fence (an
  InitProducerId of a new producer instance, or the transaction timing out) which aborts it.
- **PrepareCommit** (2): the commit decision is durable; the markers are being written. Left only
  when every partition has its COMMIT marker (-> CompleteCommit), by the coordinator itself.
- **PrepareAbort** (3): the abort decision is durable; ABORT markers are being written. Left when
  every partition has its marker (-> CompleteAbort). Transaction version 2 (KIP-890) also lets an
  abort start from Empty, CompleteCommit or CompleteAbort, so the table allows those.
- **CompleteCommit** (4) / **CompleteAbort** (5): the transaction is over and its partitions are
  cleared. Left by the next AddPartitions (-> Ongoing), InitProducerId (-> Empty) or expiry (-> Dead).
- **PrepareEpochFence** (7): a fence in progress: the epoch is bumped so the old producer instance
  is fenced, and the ongoing transaction is aborted (-> PrepareAbort). As in Kafka it is a *pending*
  state only: the record written for a fence is the PrepareAbort with the bumped epoch.
- **Dead** (6): the id expired (`transactional.id.expiration.ms`) and is being removed: a pending
  state too; what reaches the log is the tombstone.

The coordinator checks every transition it makes against `VALID_PREVIOUS` (a bug, not a client
error, if one fails: `IllegalTransition`).
"""

from __future__ import annotations

from enum import Enum


class TxnState(Enum):
    """A transaction's state; `value` is its name as DescribeTransactions/ListTransactions show it."""

    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"

    @property
    def id(self) -> int:
        """The byte the `__transaction_state` value stores for this state."""
        return _IDS[self]

    @classmethod
    def from_id(cls, state_id: int) -> TxnState:
        try:
            return _BY_ID[state_id]
        except KeyError:
            raise ValueError(f"unknown transaction state id {state_id}") from None

    @classmethod
    def from_name(cls, name: str) -> TxnState | None:
        return _BY_NAME.get(name)

    @property
    def expiration_allowed(self) -> bool:
        """Whether an idle transactional id in this state may expire (no transaction open)."""
        return self in _EXPIRABLE

    @property
    def is_prepare(self) -> bool:
        """The decision is durable and markers are (or must be) on their way."""
        return self in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)

    @property
    def is_complete(self) -> bool:
        return self in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


_IDS: dict[TxnState, int] = {
    TxnState.EMPTY: 0,
    TxnState.ONGOING: 1,
    TxnState.PREPARE_COMMIT: 2,
    TxnState.PREPARE_ABORT: 3,
    TxnState.COMPLETE_COMMIT: 4,
    TxnState.COMPLETE_ABORT: 5,
    TxnState.DEAD: 6,
    TxnState.PREPARE_EPOCH_FENCE: 7,
}
_BY_ID = {v: k for k, v in _IDS.items()}
_BY_NAME = {s.value: s for s in TxnState}
_EXPIRABLE = frozenset({TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT})

_S = TxnState
VALID_PREVIOUS: dict[TxnState, frozenset[TxnState]] = {
    _S.EMPTY: frozenset({_S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.ONGOING: frozenset({_S.ONGOING, _S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.PREPARE_COMMIT: frozenset({_S.ONGOING}),
    _S.PREPARE_ABORT: frozenset(
        {_S.ONGOING, _S.PREPARE_EPOCH_FENCE, _S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}
    ),
    _S.COMPLETE_COMMIT: frozenset({_S.PREPARE_COMMIT}),
    _S.COMPLETE_ABORT: frozenset({_S.PREPARE_ABORT}),
    _S.DEAD: frozenset({_S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.PREPARE_EPOCH_FENCE: frozenset({_S.ONGOING}),
}


class IllegalTransition(RuntimeError):
    """The coordinator tried a transition the table forbids: a bug in the coordinator."""


def is_valid_transition(previous: TxnState, new: TxnState) -> bool:
    return previous in VALID_PREVIOUS[new]


def check_transition(previous: TxnState, new: TxnState) -> None:
    if not is_valid_transition(previous, new):
        raise IllegalTransition(f"transaction cannot go from {previous.value} to {new.value}")

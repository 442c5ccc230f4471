"""The coordinator's own timers: aborting timed-out transactions and removing expired ids.

Every `transaction.abort.timed.out.transaction.cleanup.interval.ms` the coordinator looks for
Ongoing transactions older than their `transaction.timeout.ms` and aborts them itself, bumping the
epoch (as Kafka's abortTimedOutTransactions does) so the producer that let it time out is fenced.
Every `transaction.remove.expired.transaction.cleanup.interval.ms` it removes ids idle (no open
transaction) for `transactional.id.expiration.ms`, with a tombstone. Both run on the injected
timer; a restarted coordinator finds timed-out transactions from their recorded start time.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from kafkito.broker.transactions.metadata import (
    TransactionMetadata,
    TransactionTombstone,
    prepare_dead,
)
from kafkito.broker.transactions.runtime import TxnRuntime
from kafkito.broker.transactions.state import TxnState
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import TimerTask

log = structlog.get_logger("kafkito.transactions")


class Expiry:
    """The two periodic scans. `abort` is how a timed-out transaction is fenced and aborted."""

    __slots__ = ("_abort", "_rt", "_tasks")

    def __init__(
        self, rt: TxnRuntime, abort: Callable[[TransactionMetadata, Callable[[ErrorCode], None]], None]
    ) -> None:
        self._rt = rt
        self._abort = abort
        self._tasks: dict[str, TimerTask] = {}

    def start(self) -> None:
        config = self._rt.config
        self._every("abort", config.abort_timed_out_interval_ms, self.abort_timed_out)
        self._every("expire", config.remove_expired_interval_ms, self.remove_expired)

    def stop(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()

    def _every(self, name: str, interval_ms: int, scan: Callable[[], None]) -> None:
        def run() -> None:
            self._tasks[name] = self._rt.schedule(interval_ms, run)
            scan()

        self._tasks[name] = self._rt.schedule(interval_ms, run)

    def timed_out(self) -> list[TransactionMetadata]:
        """Ongoing transactions past their timeout, with no write in flight."""
        now = self._rt.now_ms()
        return [
            meta
            for txn_id, meta in self._rt.transactions.items()
            if meta.state is TxnState.ONGOING
            and txn_id not in self._rt.pending
            and meta.start_ms + meta.timeout_ms < now
        ]

    def abort_timed_out(self) -> None:
        for meta in self.timed_out():
            log.info(
                "txn.timed_out",
                transactional_id=meta.transactional_id,
                producer_id=meta.producer_id,
                producer_epoch=meta.producer_epoch,
                timeout_ms=meta.timeout_ms,
            )
            self._abort(meta, _logged(meta.transactional_id))

    def expired(self) -> list[TransactionMetadata]:
        """Idle ids whose last update is `transactional.id.expiration.ms` old."""
        cutoff = self._rt.now_ms() - self._rt.config.transactional_id_expiration_ms
        return [
            meta
            for txn_id, meta in self._rt.transactions.items()
            if meta.state.expiration_allowed
            and txn_id not in self._rt.pending
            and meta.last_update_ms <= cutoff
        ]

    def remove_expired(self) -> None:
        for meta in self.expired():
            prepare_dead(meta)  # checks the transition
            self._rt.write(
                TransactionTombstone(meta.transactional_id), TxnState.DEAD, _logged(meta.transactional_id)
            )


def _logged(transactional_id: str) -> Callable[[ErrorCode], None]:
    def done(error: ErrorCode) -> None:
        if error is not ErrorCode.NONE:
            log.warning("txn.background_write_failed", transactional_id=transactional_id, error=error.name)

    return done

"""How long a parked request may wait for its answer, and the answer it gets when the wait runs out.

A handler that parks a request (JoinGroup, SyncGroup, Fetch, ShareFetch, Produce with acks=all, a
write waiting to be durable) returns an awaitable; the connection answers in order, so one that never
completes would hold its connection forever. Each parked request gets a deadline on the broker's timer
(the purgatory timer, which `Broker.steering.advance` moves): its own bound, then `SAFETY_MARGIN_MS`.

Its own bound is what the request says it may wait, so a wait Kafka allows is never cut short:
Produce's `timeout_ms`, Fetch's and ShareFetch's `max_wait_ms`, any other API's `timeout_ms`; a
JoinGroup or SyncGroup waits for the group's rebalance, which lasts up to the longest rebalance timeout
of its members (unknown here, so the largest session timeout a member may have,
`group.max.session.timeout.ms`, or this request's own timeouts if larger) after the
`group.initial.rebalance.delay.ms`. An API with no such field has a bound of 0.

The margin is 30 s, the default `request.timeout.ms` of Kafka's clients: Kafka's broker has no such
setting for requests it holds (each of its purgatories times its own operations); past it, a client
with the default has given up on the request. When the deadline passes the request is answered with
its API's timeout error: COORDINATOR_NOT_AVAILABLE for the group and transaction coordinators' APIs
(Kafka's coordinators turn a timed-out write into it, so the client looks the coordinator up again),
REQUEST_TIMED_OUT for the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.config import Config
    from kafkito.purgatory.timer import Timer

SAFETY_MARGIN_MS = 30_000
_PRODUCE, _FETCH, _JOIN_GROUP, _SYNC_GROUP, _SHARE_FETCH = 0, 1, 11, 14, 78
# APIs answered by the group or transaction coordinator, whose timed-out work is COORDINATOR_NOT_AVAILABLE.
_COORDINATOR_APIS = frozenset({8, 9, 11, 12, 13, 14, 22, 24, 25, 26, 28, 42, 47, 68, 69, 76, 77, 90, 91, 92})


def own_bound_ms(config: Config, api_key: int, version: int, request: Any) -> int:
    """How long the request itself may legitimately wait for its answer (0: no bound of its own)."""
    if api_key in (_FETCH, _SHARE_FETCH):
        return max(getattr(request, "max_wait_ms", 0) or 0, 0)
    if api_key in (_JOIN_GROUP, _SYNC_GROUP):
        own = max(
            getattr(request, "rebalance_timeout_ms", 0) or 0, getattr(request, "session_timeout_ms", 0) or 0
        )
        longest = max(own, config.group_max_session_timeout_ms)
        return longest + config.group_initial_rebalance_delay_ms
    timeout = getattr(request, "timeout_ms", None)  # Produce and the admin APIs that wait
    return timeout if isinstance(timeout, int) and timeout > 0 else 0


def deadline_ms(config: Config, api_key: int, version: int, request: Any) -> int:
    """Milliseconds from parking after which the broker answers the request itself."""
    return own_bound_ms(config, api_key, version, request) + SAFETY_MARGIN_MS


def timeout_error(api_key: int) -> ErrorCode:
    """The error a request answered at its deadline carries."""
    return (
        ErrorCode.COORDINATOR_NOT_AVAILABLE if api_key in _COORDINATOR_APIS else ErrorCode.REQUEST_TIMED_OUT
    )


def with_deadline(
    timer: Timer,
    delay_ms: int,
    pending: Awaitable[Any],
    on_deadline: Callable[[], Any],
    on_failure: Callable[[BaseException], Any],
) -> asyncio.Future[Any]:
    """A future of what `pending` resolves to; of `on_deadline()` if `delay_ms` pass first on `timer`
    (`pending` is then cancelled); of `on_failure(exc)` if `pending` raises. Cancelling the future (the
    client went away) cancels `pending`."""
    inner = asyncio.ensure_future(pending)
    outer: asyncio.Future[Any] = inner.get_loop().create_future()

    def expire() -> None:
        if not outer.done():
            _settle(outer, on_deadline, None)
            inner.cancel()

    task = timer.schedule(delay_ms, expire)

    def finished(done: asyncio.Future[Any]) -> None:
        task.cancel()
        if outer.done():
            return
        if done.cancelled():
            outer.cancel()
            return
        exc = done.exception()
        if exc is None:
            outer.set_result(done.result())
        else:
            _settle(outer, on_failure, exc)

    def abandoned(done: asyncio.Future[Any]) -> None:
        if done.cancelled():
            task.cancel()
            inner.cancel()

    inner.add_done_callback(finished)
    outer.add_done_callback(abandoned)
    return outer


def _settle(outer: asyncio.Future[Any], answer: Callable[..., Any], exc: BaseException | None) -> None:
    """Resolve `outer` with `answer(...)`, or with the exception it raises (a close of the connection)."""
    try:
        outer.set_result(answer() if exc is None else answer(exc))
    except Exception as raised:  # a close of the connection: handed to it
        outer.set_exception(raised)

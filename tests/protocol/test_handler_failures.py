"""A handler that raises, and a parked request whose completion never comes, over real TCP.

The failing and the stuck handlers are registered for one API version in dispatch's route table (a
test-only handler, as a new API module would be): a raise is answered UNKNOWN_SERVER_ERROR in the
API's error shape and the connection keeps being served; a parked request is answered at its
deadline on the broker clock, moved with `steering.advance` (no real waiting).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from kafkito.broker import dispatch
from kafkito.broker.context import RequestContext
from kafkito.broker.parked_deadline import SAFETY_MARGIN_MS, deadline_ms, own_bound_ms
from kafkito.protocol.codec import is_flexible, response_header_v1
from kafkito.protocol.errors import ErrorCode
from tests.conftest import make_config
from tests.support.brokers import ThreadBroker
from tests.support.waiting import wait_until
from tests.support.wire import WireClient

E = ErrorCode
SCRAM, CREATE_TOPICS, JOIN_GROUP = 51, 19, 11


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadBroker]:
    thread = ThreadBroker(make_config(Path(tmp_path_factory.mktemp("failures")))).start()
    yield thread
    thread.stop()


class _Raising:
    API_KEY, VERSIONS = SCRAM, (0, 0)

    def handle(self, ctx: RequestContext, request: Any) -> Any:
        raise RuntimeError("a bug in a handler")


class _Stuck:
    """Parks every request on a future nobody completes."""

    API_KEY, VERSIONS = CREATE_TOPICS, (7, 7)

    def __init__(self) -> None:
        self.parked: list[asyncio.Future[Any]] = []

    def handle(self, ctx: RequestContext, request: Any) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.parked.append(future)
        return future


def _install(monkeypatch: pytest.MonkeyPatch, handler: Any, version: int) -> None:
    route = (
        handler,
        is_flexible(handler.API_KEY, version),
        response_header_v1(handler.API_KEY, version),
        None,
    )
    monkeypatch.setitem(dispatch._routes, (handler.API_KEY, version), route)


def test_a_handler_that_raises_is_answered_unknown_server_error_and_the_connection_goes_on(
    broker: ThreadBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(monkeypatch, _Raising(), 0)
    with capture_logs() as logs, WireClient(broker.bootstrap, client_id="buggy") as client:
        response = client.request(SCRAM, 0, deletions=[{"name": "ann", "mechanism": 1}], upsertions=[])
        assert [(r.user, r.error_code, r.error_message) for r in response.results] == [
            ("ann", E.UNKNOWN_SERVER_ERROR, None)
        ]
        assert client.request(18, 0).error_code == E.NONE  # the same connection is still served
    failures = [e for e in logs if e["event"] == "request.failed"]
    assert len(failures) == 1
    assert {k: failures[0][k] for k in ("api", "version", "correlation_id", "client_id")} == {
        "api": SCRAM,
        "version": 0,
        "correlation_id": 1,
        "client_id": "buggy",
    }
    assert isinstance(failures[0]["exc_info"], RuntimeError)
    assert not [e for e in logs if e["event"] == "connection.closed"]


def test_a_parked_request_that_never_completes_is_answered_at_its_deadline(
    broker: ThreadBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    stuck = _Stuck()
    _install(monkeypatch, stuck, 7)
    running = broker.broker
    assert running is not None
    topics = [{"name": "t", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}]
    with WireClient(broker.bootstrap) as client:
        client.send(CREATE_TOPICS, 7, topics=topics, timeout_ms=1_000, validate_only=False)
        wait_until(lambda: broker.call(lambda: len(stuck.parked)) == 1, 10, "the request to be parked")
        # The broker clock also moves with real time: stop well short of the deadline, then pass it.
        broker.call(lambda: running.steering.advance(1_000 + SAFETY_MARGIN_MS // 2))
        assert broker.call(lambda: [f.done() for f in stuck.parked]) == [False]  # still waiting
        broker.call(lambda: running.steering.advance(SAFETY_MARGIN_MS // 2 + 1))
        response = client.recv(CREATE_TOPICS, 7)
        assert [(t.name, t.error_code) for t in response.topics] == [("t", E.REQUEST_TIMED_OUT)]
        assert broker.call(lambda: [f.cancelled() for f in stuck.parked]) == [True]
        assert client.request(18, 0).error_code == E.NONE  # the connection moved on


def test_a_long_wait_kafka_allows_is_inside_the_deadline(broker: ThreadBroker) -> None:
    running = broker.broker
    assert running is not None
    config = running.config

    class Join:
        rebalance_timeout_ms, session_timeout_ms = 300_000, 45_000

    class Fetch:
        max_wait_ms = 500

    join_bound = own_bound_ms(config, JOIN_GROUP, 9, Join())
    assert join_bound >= 300_000 + config.group_initial_rebalance_delay_ms
    assert deadline_ms(config, JOIN_GROUP, 9, Join()) > join_bound
    assert deadline_ms(config, 1, 12, Fetch()) > 500

"""`start()` and `KafkitoHandle`: a kafkito broker in a background thread of the test process, on its
own event loop, and every steering operation called on that loop from the test's thread."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from kafkito.testing.faults import Fault

if TYPE_CHECKING:
    from kafkito.broker.app import Broker
    from kafkito.broker.config import Config
    from kafkito.broker.steering import Steering
    from kafkito.protocol.errors import ErrorCode

T = TypeVar("T")
DEFAULTS = {"group.initial.rebalance.delay.ms": "0"}
_START_TIMEOUT_S = 60.0
# Brokers left as a SIGKILL leaves a process: never stopped, kept referenced so that nothing of
# theirs is closed or flushed by a finalizer (one loop and a few descriptors per `restart(kill=True)`).
_KILLED: list[tuple[Broker, asyncio.AbstractEventLoop]] = []


@dataclass(frozen=True, slots=True)
class Node:
    """One broker node of the cluster; `live` is False while it is stopped (`stop_node`)."""

    node_id: int
    host: str
    port: int
    live: bool = True

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"


def property_names(props: Mapping[str, Any]) -> dict[str, str]:
    """Broker properties as Kafka names: `session_timeout_ms` is `session.timeout.ms`."""
    return {name.replace("_", "."): _text(value) for name, value in props.items()}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def start(
    properties: Mapping[str, Any] | None = None,
    /,
    *,
    data_dir: str | Path | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    nodes: int = 1,
    as_version: str | None = None,
    log_level: str = "info",
    **props: Any,
) -> KafkitoHandle:
    """Start a broker in this process and return its handle (a context manager; `stop()` ends it).

    Broker properties come as a mapping of Kafka names and/or as keyword arguments with dots written
    as underscores (`session_timeout_ms=6000`). The defaults are Kafka's, except
    `group.initial.rebalance.delay.ms=0`. Without `data_dir` the data lives in a temporary directory
    removed by `stop()`. `port=0` takes a free port. The broker logs to stderr at `log_level`,
    unless the process configured structlog itself.

    `nodes=N` runs a cluster of N nodes (ids `node.id`, `node.id` + 1, ...), each with its own
    listener: on free ports with `port=0`, else on `port`, `port + 1`, ...

    `as_version="3.9"` makes the broker advertise and accept only the API versions of that Kafka
    release, 0.10.0 to 4.4 (`kafkito.as.version`: docs/testing.md); ValueError for another name.
    """
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
        raise ValueError(f"nodes must be a whole number of at least 1, not {nodes!r}")
    _configure_logging(log_level)
    merged = dict(DEFAULTS)
    merged.update(property_names(properties or {}))
    merged.update(property_names(props))
    if as_version is not None:
        from kafkito.protocol.kafka_releases import release_name

        merged["kafkito.as.version"] = release_name(as_version)
    owned = data_dir is None
    path = Path(tempfile.mkdtemp(prefix="kafkito-")) if data_dir is None else Path(data_dir)
    handle = KafkitoHandle(merged, path, host, port, owns_data_dir=owned, nodes=nodes)
    try:
        handle._launch()
    except BaseException:
        if owned:
            shutil.rmtree(path, ignore_errors=True)
        raise
    return handle


def _configure_logging(level: str) -> None:
    import structlog

    from kafkito.broker.logging_setup import configure_logging

    if not structlog.is_configured():
        configure_logging(level, "console")


class KafkitoHandle:
    """A running broker: `bootstrap_servers` for clients, and the broker's steering for the test.

    Every method may be called from any thread except the broker's own; each runs on the broker's
    loop and returns its result.
    """

    def __init__(
        self,
        properties: dict[str, str],
        data_dir: Path,
        host: str,
        port: int,
        *,
        owns_data_dir: bool,
        nodes: int = 1,
    ) -> None:
        self.properties = properties
        self.node_count = nodes
        self._ports: list[int] | None = None  # every node's, once bound (a restart keeps them)
        self.data_dir = data_dir
        self.host = host
        self._port = port
        self._owns_data_dir = owns_data_dir
        self._broker: Broker | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._advanced_ms = 0  # the clock's advance, kept across restarts

    # -- identity -------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    @property
    def bootstrap_servers(self) -> str:
        """`host:port` of every node, comma-separated (one node: its own)."""
        if self._ports is None or len(self._ports) == 1:
            return f"{self.host}:{self._port}"
        return ",".join(f"{self.host}:{port}" for port in self._ports)

    @property
    def broker(self) -> Broker:
        """The running `Broker` (its methods must run on `loop`: use `call`)."""
        if self._broker is None:
            raise RuntimeError("the broker is not running")
        return self._broker

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError("the broker is not running")
        return self._loop

    @property
    def running(self) -> bool:
        return self._broker is not None

    @property
    def nodes(self) -> list[Node]:
        """Every node, stopped ones too (`live` False)."""
        described = self.call(lambda: self.broker.nodes.describe())
        return [Node(n["node_id"], n["host"], n["port"], n["live"]) for n in described]

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<KafkitoHandle {self.bootstrap_servers} {state} data_dir={self.data_dir}>"

    # -- running on the broker's loop -----------------------------------------------------------

    def call(self, fn: Callable[..., T], *args: Any, timeout: float = 60.0, **kwargs: Any) -> T:
        """Run `fn(*args, **kwargs)` on the broker's loop and return its result (or raise its error)."""
        if threading.current_thread() is self._thread:
            return fn(*args, **kwargs)
        return self._submit(fn, *args, **kwargs).result(timeout)

    def _submit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> Future[T]:
        loop = self.loop
        done: Future[T] = Future()

        def run() -> None:
            if not done.set_running_or_notify_cancel():
                return
            try:
                done.set_result(fn(*args, **kwargs))
            except BaseException as exc:
                done.set_exception(exc)

        loop.call_soon_threadsafe(run)
        return done

    @property
    def steering(self) -> Steering:
        return self.broker.steering

    # -- clock ----------------------------------------------------------------------------------

    def now_ms(self) -> int:
        """The broker clock: epoch milliseconds moving with the monotonic clock, plus every `advance`."""
        return self.call(lambda: self.steering.now_ms())

    def advance(self, ms: int) -> int:
        """Move the broker clock `ms` forward and fire everything due by then; returns the broker time.

        Session and rebalance timeouts, delayed joins, transaction timeouts, transactional-id
        expiration and offset retention act as if `ms` had passed. Clients keep real time.
        """
        return self.call(lambda: self.steering.advance(ms))

    # -- faults ---------------------------------------------------------------------------------

    def inject(
        self,
        api: str | int,
        error: str | int | ErrorCode | None,
        count: int | None = 1,
        *,
        topic: str | None = None,
        partition: int | None = None,
        group: str | None = None,
        client_id: str | None = None,
        delay_ms: int = 0,
    ) -> Fault:
        """Answer the next `count` requests of `api` that match with `error` (and/or delay them).

        `api` and `error` take Kafka's names ("Produce", "NOT_LEADER_OR_FOLLOWER") or numbers;
        `count=None` lasts until `remove()`. With `topic`/`partition` only those partitions of a
        request are answered with the error. See `Steering.inject`.
        """
        rule = self.call(
            lambda: self.steering.inject(
                api,
                error,
                count,
                topic=topic,
                partition=partition,
                group=group,
                client_id=client_id,
                delay_ms=delay_ms,
            )
        )
        return Fault(rule, self)

    def faults(self) -> list[Fault]:
        """The rules still in force."""
        return [Fault(rule, self) for rule in self.call(lambda: self.steering.faults())]

    def clear_faults(self) -> None:
        self.call(lambda: self.steering.clear_faults())

    # -- clients ----------------------------------------------------------------------------------

    def disconnect(self, client_id: str | None = None) -> int:
        """Drop the connections of `client_id` (all connections when None) now; returns how many."""
        return self.call(lambda: self.steering.disconnect(client_id))

    def blackhole(self, client_id: str) -> None:
        """Read `client_id`'s requests and never answer them, so that the client times out."""
        self.call(lambda: self.steering.blackhole(client_id))

    def unblackhole(self, client_id: str) -> None:
        """Answer `client_id` again (its connections holding unanswered requests are dropped)."""
        self.call(lambda: self.steering.unblackhole(client_id))

    # -- groups ---------------------------------------------------------------------------------

    def describe_group(self, group_id: str) -> dict[str, Any] | None:
        """State, generation, protocol and members of a group; None if there is no such group."""
        return self.call(lambda: self.steering.describe_group(group_id))

    def group_timeline(self, group_id: str) -> list[dict[str, Any]]:
        """The group's recorded transitions and member events, with broker time, generation and reason."""
        return self.call(lambda: self.steering.group_timeline(group_id))

    def wait_for_group(
        self, group_id: str, state: str = "Stable", members: int | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Wait until the group is in `state` (with `members` members, if given); returns its description.

        Raises TimeoutError, saying the last state seen, when that does not happen within `timeout` s.
        """
        deadline = time.monotonic() + timeout
        seen: dict[str, Any] | None = None
        while True:
            seen = self.describe_group(group_id)
            if seen is not None and _group_is(seen, state, members):
                return seen
            if time.monotonic() >= deadline:
                raise TimeoutError(_not_reached(group_id, state, members, seen, timeout))
            time.sleep(0.02)  # polling the broker for the condition, not modelling elapsed time

    async def wait_for_group_async(
        self, group_id: str, state: str = "Stable", members: int | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """`wait_for_group` for asyncio tests (aiokafka): it waits without blocking the caller's loop."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            steering = self.steering
            seen = await asyncio.wrap_future(self._submit(steering.describe_group, group_id))
            if seen is not None and _group_is(seen, state, members):
                return seen
            if loop.time() >= deadline:
                raise TimeoutError(_not_reached(group_id, state, members, seen, timeout))
            await asyncio.sleep(0.02)  # polling the broker for the condition

    def expire_member(self, group_id: str, member_id: str, timeout: float = 10.0) -> dict[str, Any]:
        """Expire a member's session: move the broker clock past its session timeout and wait until
        the coordinator has removed it (as if its client had stopped heartbeating); returns the group.

        ValueError when it is not a member; TimeoutError, naming its session timeout and what was
        waited for, when it is still in the group `timeout` s later (a member parked in a rebalance's
        JoinGroup or SyncGroup is kept alive, as in Kafka).
        """
        from kafkito.testing.sessions import member_session, still_there

        session = self.call(lambda: member_session(self.broker.coordinator, group_id, member_id))
        advanced_ms = session.session_timeout_ms + 1
        self.advance(advanced_ms)
        deadline = time.monotonic() + timeout
        while True:
            seen = self.describe_group(group_id) or {"state": "Dead", "members": []}
            if all(m["member_id"] != member_id for m in seen["members"]):
                return seen
            if time.monotonic() >= deadline:
                raise TimeoutError(still_there(group_id, member_id, session, advanced_ms, timeout, seen))
            time.sleep(0.02)  # polling the broker for the condition, not modelling elapsed time

    # -- cluster topology -----------------------------------------------------------------------

    def topology(self, internal: bool = False) -> dict[str, Any]:
        """Cluster id, controller, nodes and each partition's leader, replicas and ISR by topic
        (`__consumer_offsets` and `__transaction_state` too with `internal`)."""
        return self.call(lambda: self.steering.topology(internal))

    def leader(self, topic: str, partition: int) -> int:
        """The node leading the partition (-1: none)."""
        return int(self.topology(internal=True)["topics"][topic][partition]["leader"])

    def coordinator(self, key: str, *, transaction: bool = False) -> int:
        """The node coordinating a group (a transactional id, with `transaction`); -1 when none."""
        return self.call(lambda: self.steering.coordinator(key, transaction=transaction))

    def stop_node(self, node_id: int) -> None:
        """Take a node down: its listener goes, its connections close, its partitions elect other
        leaders among their live in-sync replicas (none: leader -1) and its coordinators move with them."""
        self.call(lambda: self.steering.stop_node(node_id))

    def start_node(self, node_id: int) -> None:
        """Bring a stopped node back on its port; it leads again where it is the preferred leader."""
        started = asyncio.run_coroutine_threadsafe(self.steering.start_node(node_id), self.loop)
        started.result(_START_TIMEOUT_S)

    def move_leader(self, topic: str, partition: int, node_id: int) -> dict[str, Any]:
        """Make `node_id` the partition's leader; returns its leader, replicas and ISR."""
        return self.call(lambda: self.steering.move_leader(topic, partition, node_id))

    def move_coordinator(self, key: str, node_id: int, *, transaction: bool = False) -> dict[str, Any]:
        """Move the coordinator of group `key` (of transactional id `key`, with `transaction`) to
        `node_id`: the leader of its `__consumer_offsets` (`__transaction_state`) partition moves."""
        return self.call(lambda: self.steering.move_coordinator(key, node_id, transaction=transaction))

    # -- lifecycle ------------------------------------------------------------------------------

    def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = -1, **configs: Any
    ) -> None:
        """Create a topic (configs as Kafka names, dots written as underscores allowed); the replication
        factor (default: `default.replication.factor`) may be up to the number of nodes."""
        values: dict[str, str | None] = dict(property_names(configs))
        topics = self.broker.services.topics
        self.call(lambda: topics.create(name, partitions, replication_factor, values, validate_only=False))

    def restart(self, kill: bool = False) -> KafkitoHandle:
        """Stop and start again on the same data dir and port.

        `kill=False` stops gracefully (logs closed and flushed). `kill=True` leaves the data as a
        SIGKILL would: connections cut, nothing closed or flushed beyond what was already written,
        so that the new broker recovers the logs as after a crash. The broker clock keeps what
        `advance` added; injected faults and black holes do not survive (they belong to the broker).
        """
        if kill:
            self._kill()
        else:
            self._shutdown()
        self._launch()
        return self

    def stop(self) -> None:
        """Stop the broker gracefully; a temporary data dir made by `start()` is removed."""
        self._shutdown()
        if self._owns_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> KafkitoHandle:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _config(self) -> Config:
        from kafkito.broker.config import Config

        config = Config(host=self.host, port=self._port, log_dirs=str(self.data_dir))
        for name, value in self.properties.items():
            config.set(name, value)
        return config

    def _launch(self) -> None:
        from kafkito.broker.app import Broker

        config = self._config()
        started: Future[tuple[Broker, asyncio.AbstractEventLoop]] = Future()
        broker = Broker(config, self.node_count, self._ports)
        broker.clock.skip_to(broker.clock.now_ms() + self._advanced_ms)  # the broker's time goes on
        thread = threading.Thread(target=_serve, args=(broker, started), name="kafkito-broker", daemon=True)
        thread.start()
        _, loop = started.result(_START_TIMEOUT_S)
        self._broker, self._loop, self._thread = broker, loop, thread
        self._port = broker.bound_port
        self._ports = [broker.nodes.port_for(n) for n in broker.nodes.ids]

    def _shutdown(self) -> None:
        broker, loop, thread = self._broker, self._loop, self._thread
        if broker is None or loop is None or thread is None:
            return
        self._advanced_ms = broker.clock.offset_ms
        self._broker = self._loop = self._thread = None
        if not loop.is_closed():
            asyncio.run_coroutine_threadsafe(broker.stop(), loop).result(_START_TIMEOUT_S)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(_START_TIMEOUT_S)

    def _kill(self) -> None:
        broker, loop, thread = self._broker, self._loop, self._thread
        if broker is None or loop is None or thread is None:
            return
        self.call(broker.crash)
        self._advanced_ms = broker.clock.offset_ms
        self._broker = self._loop = self._thread = None
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_START_TIMEOUT_S)
        _KILLED.append((broker, loop))


def _serve(broker: Broker, started: Future[tuple[Broker, asyncio.AbstractEventLoop]]) -> None:
    """The broker thread: start the broker on a new loop, then run the loop until told to stop."""
    loop = _new_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(broker.start())
    except BaseException as exc:
        started.set_exception(exc)
        loop.close()
        return
    started.set_result((broker, loop))
    loop.run_forever()
    if not broker.crashed:  # a killed broker's loop is left as it was (see _KILLED)
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is optional off Linux/macOS
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _group_is(seen: dict[str, Any], state: str, members: int | None) -> bool:
    if seen["state"].lower() != state.lower():
        return False
    return members is None or len(seen["members"]) == members


def _not_reached(
    group_id: str, state: str, members: int | None, seen: dict[str, Any] | None, timeout: float
) -> str:
    wanted = state if members is None else f"{state} with {members} members"
    if seen is None:
        return f"group {group_id!r} did not reach {wanted} within {timeout} s: the group does not exist"
    return (
        f"group {group_id!r} did not reach {wanted} within {timeout} s: last seen {seen['state']} "
        f"with {len(seen['members'])} members (generation {seen.get('generation')})"
    )

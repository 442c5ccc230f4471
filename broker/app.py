"""The Broker: owns config, listener, topics, coordinator and timers; started and stopped in one place."""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.cluster.nodes import Nodes, build_topology
from kafkito.broker.config import Config
from kafkito.broker.connections import Connections
from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator import CoordinatorConfig, GroupCoordinator
from kafkito.broker.coordinator.streams.config import StreamsConfig
from kafkito.broker.fetch_wait import DelayedFetch
from kafkito.broker.log.dir_lock import DataDirLock
from kafkito.broker.log.manager import LogManager
from kafkito.broker.log.partition_log import wall_clock_ms
from kafkito.broker.offsets import OffsetsConfig, OffsetsManager
from kafkito.broker.offsets.cleaning import BackgroundCleaner
from kafkito.broker.producer_ids import ProducerIdManager
from kafkito.broker.services import (
    BrokerConfigs,
    Cluster,
    Fetches,
    OnFirstUse,
    Services,
    Topics,
    TopicsOfGroups,
)
from kafkito.broker.shutdown import StopSignals, StopSteps, close_logs
from kafkito.broker.steering import Steering
from kafkito.purgatory import Purgatory, SteerableClock, Timer, TimerTask

if TYPE_CHECKING:
    from kafkito.broker.cluster import Topology
    from kafkito.broker.coordinator.share.config import ShareConfig
    from kafkito.broker.security.authorizer import Authorizer
    from kafkito.broker.security.store import SecurityStore
    from kafkito.broker.share.dead_letters import DeadLetters
    from kafkito.broker.share.manager import ShareManager
    from kafkito.broker.transactions import TransactionCoordinator
    from kafkito.broker.transactions.manager import TransactionsManager

log = structlog.get_logger("kafkito.broker")

TRANSACTION_STATE_TOPIC = "__transaction_state"  # transactions.codec's, named here not to import it
SHARE_STATE_TOPIC = "__share_group_state"  # share.state_codec's, named here not to import it
SECURITY_FILES = "security-*"  # the security store's journal (security.store), named here likewise


def _read_meta(path: Path) -> dict[str, str]:
    meta: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                meta[k.strip()] = v.strip()
    return meta


def _new_cluster_id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def _share_config_at_start(config: Config) -> Callable[[], ShareConfig]:
    """The share group coordinator's `group.share.*` settings as given at start, built when its first
    share group needs them: `coordinator.share.config` is not imported by every start (~1 ms)."""
    given = {name: value for name, value in config.extra.items() if name.startswith("group.share.")}

    def build() -> ShareConfig:
        from kafkito.broker.coordinator.share.config import ShareConfig

        return ShareConfig.from_config(SimpleNamespace(extra=given))

    return build


class Broker:
    """One kafkito broker. `await start()`, then `await stop()`; `serve()` runs until a signal."""

    def __init__(
        self,
        config: Config,
        nodes: int = 1,
        ports: list[int] | None = None,
        clock: SteerableClock | None = None,
    ) -> None:
        if nodes < 1:
            raise ValueError(f"a cluster has at least one node, not {nodes}")
        self.config = config
        self.connections = Connections(config)  # open connections, their limits and memory pool
        # Epoch ms moving with the monotonic clock; tests move it ahead through `steering.advance`.
        self.clock = clock or SteerableClock()
        self.timer = Timer(self.clock)
        self.fetch_purgatory: Purgatory[DelayedFetch] = Purgatory("Fetch", self.timer)
        self.fetches = Fetches(self.fetch_purgatory)
        self.coordinator = GroupCoordinator(
            CoordinatorConfig.from_config(config),
            self.clock,
            self.timer,
            share_config=_share_config_at_start(config),
            streams_config=StreamsConfig.from_config(config),
        )
        self._logs: LogManager | None = None
        self.producer_ids: ProducerIdManager
        self.services: Services  # what handlers see; built by start() once the logs are open
        self.context_type: type[RequestContext]  # dispatch's per-request context, bound to the services
        self.offsets: OffsetsManager
        self.transactions: TransactionCoordinator | None = None  # built on first use (_transactions)
        self.transactions_log: TransactionsManager | None = None
        self.security_store: SecurityStore | None = None  # built on first use (security)
        self.share: ShareManager | None = None  # share partitions, built on first use (_share)
        self._cleaner: BackgroundCleaner | None = None
        self.cluster_id = config.cluster_id or ""
        self._periodic: dict[str, asyncio.TimerHandle | TimerTask] = {}
        self.steering = Steering(self)
        # Several nodes: requests are routed (broker/cluster/routing.py) on dispatch's steered path.
        self.routing = nodes > 1
        self.steered = self.routing  # or a fault rule or black hole is in force (kafkito.testing)
        self.nodes = Nodes(self, nodes, ports)
        self.topology: Topology | None = None  # a multi-node cluster's, built by start()
        self._serving = False
        self._stopped: asyncio.Event | None = None  # created by start(), inside the loop
        self._stop_task: asyncio.Future[bool] | None = None
        self.crashed = False  # by crash(): left as a SIGKILL leaves a process
        self._dir_lock: DataDirLock | None = None  # held from start() until stopped or crashed

    # identity ------------------------------------------------------------------
    @property
    def bound_port(self) -> int:
        """The first node's port."""
        port = self._bound_port()
        if port is None:
            raise RuntimeError("broker not started")
        return port

    @property
    def advertised(self) -> tuple[str, int]:
        return self.services.cluster.advertised

    def _bound_port(self) -> int | None:
        return self.nodes.bound.get(self.config.node_id)

    def _load_identity(self) -> None:
        data_dir = self.config.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        meta_path = data_dir / "meta.properties"
        meta = _read_meta(meta_path)
        stored = meta.get("cluster.id")
        if self.config.cluster_id and stored and stored != self.config.cluster_id:
            raise RuntimeError(f"{meta_path} belongs to cluster {stored}, not {self.config.cluster_id}")
        self.cluster_id = self.config.cluster_id or stored or _new_cluster_id()
        if stored != self.cluster_id:
            tmp = meta_path.with_suffix(".tmp")
            tmp.write_text(f"version=1\ncluster.id={self.cluster_id}\nnode.id={self.config.node_id}\n")
            tmp.replace(meta_path)

    # topics ----------------------------------------------------------------------
    @property
    def logs(self) -> LogManager:
        if self._logs is None:
            raise RuntimeError("broker not started")
        return self._logs

    def _build_services(self, logs: LogManager) -> Services:
        self.coordinator.topics = TopicsOfGroups(logs)
        return Services(
            cluster=Cluster(self.config, self.cluster_id, self._bound_port),
            topics=Topics(logs, self.fetches, self.coordinator.on_topics_changed, self.offsets.ensure_topic),
            fetches=self.fetches,
            configs=BrokerConfigs(self.config, logs),
            producer_ids=self.producer_ids,
            groups=self.coordinator,
            transactions=OnFirstUse(self._transactions),
            security=OnFirstUse(self.security),
            share=OnFirstUse(self._share),
            authorizer=self._authorizer(),
        )

    def _authorizer(self) -> Authorizer | None:
        """None without `authorizer.class.name`: the ACL modules (~2 ms) are imported only with one."""
        if not self.config.authorizer_class_name.strip():
            return None
        from kafkito.broker.security.authorizer import authorizer_for

        return authorizer_for(self.config, self.security)

    def _share(self) -> ShareManager:
        """The share partitions over `__share_group_state` (reloaded as they are built), woken by appends.

        Built at start when the topic exists, else by the first share request or the first call of
        the share group coordinator's persister (set by `start`).
        """
        if self.share is not None:
            return self.share
        from kafkito.broker.share.config import share_settings
        from kafkito.broker.share.manager import ShareManager

        logs = self.logs
        limits, state_config = share_settings(self.config)
        manager = ShareManager(logs, self.timer, limits, state_config, self.clock.now_ms)
        manager.load()
        configs = self.coordinator.share_group_configs
        manager.start_offset = configs.start_offset
        manager.lock_duration = lambda group_id: int(configs.value(group_id, "share.record.lock.duration.ms"))
        manager.dead_letters = self._dead_letters()
        logs.on_append.append(manager.wake)
        self.every_on_clock(
            "share-state-cold-snapshots", state_config.cold_snapshot_interval_ms, manager.state.snapshot_cold
        )
        self.every_on_clock("share-state-prune", state_config.prune_interval_ms, manager.state.prune)
        self.share = manager
        return manager

    def _dead_letters(self) -> DeadLetters:
        """Share groups' dead-letter queues (KIP-1191), written through the topics service."""
        from kafkito.broker.features import SHARE_VERSION
        from kafkito.broker.share.dead_letters import DeadLetters, DeadLetterSettings

        configs, groups = self.services.configs, self.coordinator.share_group_configs

        def broker_setting(name: str) -> str | None:
            for level in (configs.dynamic, configs.dynamic_default):
                if name in level:
                    return level[name]
            return configs.static_value(name)

        settings = DeadLetterSettings(
            groups.dead_letter_topic,
            groups.copy_to_dead_letters,
            broker_setting,
            lambda: configs.features.levels.get(SHARE_VERSION, 0) >= 2,
        )
        return DeadLetters(self.services.topics, settings, self.clock.now_ms)

    def _transactions(self) -> TransactionCoordinator:
        """The transaction coordinator over `__transaction_state`, built and loaded on first use.

        That is at start when the topic exists (its transactions must be completed or timed out), else
        the first request that needs it: a broker no transactional client uses never imports it.
        """
        if self.transactions is not None:
            return self.transactions
        from kafkito.broker.transactions import TransactionConfig, TransactionCoordinator
        from kafkito.broker.transactions.manager import TransactionsManager
        from kafkito.broker.transactions.marker_writer import BrokerMarkerWriter

        # AddOffsetsToTxn must name the partition the group coordinator really uses.
        config = TransactionConfig.from_config(self.config)
        config = replace(config, offsets_topic_num_partitions=self.offsets.num_partitions)
        segment_bytes = self.config.transaction_state_log_segment_bytes
        logs = self.logs
        self.transactions_log = TransactionsManager(logs, config, segment_bytes, self.clock)
        markers = BrokerMarkerWriter(logs.get_log, self.coordinator)
        self.transactions = TransactionCoordinator(
            config, self.clock, self.timer, markers, self.producer_ids, self.transactions_log.sink
        )
        self.transactions_log.load(self.transactions, asyncio.get_running_loop().call_soon)
        return self.transactions

    def security(self) -> SecurityStore:
        """The ACLs, client quotas and SCRAM credentials (`security-*` files), loaded on first use.

        That is at start when the files exist, else the first request that needs them.
        """
        if self.security_store is None:
            from kafkito.broker.security.store import SecurityStore
            from kafkito.broker.security.tokens import TokenLimits

            config = self.config
            limits = TokenLimits(
                config.delegation_token_secret_key,
                config.delegation_token_max_lifetime_ms,
                config.delegation_token_expiry_time_ms,
            )
            self.security_store = SecurityStore(config.data_dir, token_limits=limits).load()
        return self.security_store

    def every(self, name: str, interval_ms: int, work: Callable[[], object]) -> None:
        """Run `work` every `interval_ms` on the loop until the broker stops (periodic housekeeping)."""
        loop = asyncio.get_running_loop()

        def tick() -> None:
            try:
                work()
            except Exception:
                log.exception("broker.periodic_task_failed", task=name)
            self._periodic[name] = loop.call_later(interval_ms / 1000, tick)

        self._periodic[name] = loop.call_later(interval_ms / 1000, tick)

    def every_on_clock(self, name: str, interval_ms: int, work: Callable[[], object]) -> None:
        """`every`, on the broker clock's timer: housekeeping whose time a test may advance (retention)."""

        def tick() -> None:
            self._periodic[name] = self.timer.schedule(interval_ms, tick)
            try:
                work()
            except Exception:
                log.exception("broker.periodic_task_failed", task=name)

        self._periodic[name] = self.timer.schedule(interval_ms, tick)

    # lifecycle -------------------------------------------------------------------
    async def start(self) -> None:
        """Lock the data dir (DataDirInUse when another broker holds it), then start everything."""
        self._dir_lock = DataDirLock.acquire(self.config.data_dir)
        try:
            await self._start()
        except BaseException:
            self._dir_lock.release()
            raise

    async def _start(self) -> None:
        self._load_identity()
        loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        self._logs = LogManager(self.config.data_dir, self.config.explicit_properties())
        self.producer_ids = ProducerIdManager(self.config.data_dir)
        self._logs.on_append.append(self.fetches.wake)
        self.timer.attach_loop(loop)
        offsets_config = OffsetsConfig.from_broker(self.config)
        self.offsets = OffsetsManager(self._logs, offsets_config, self.clock)
        self.services = self._build_services(self._logs)
        self.services.configs.groups.restore(lambda: self.coordinator.all_group_configs)
        if self.routing:
            self.topology = build_topology(self, self.nodes.count)
        self.context_type = self.nodes.build(self.services, self.topology)
        self.coordinator.sink = self.offsets.sink
        self.offsets.load(self.coordinator, loop.call_soon)
        if self._logs.topic(TRANSACTION_STATE_TOPIC) is not None:
            self._transactions()
        from kafkito.broker.share.on_first_use import SharePersisterOnFirstUse

        share_persister = SharePersisterOnFirstUse(self._share)
        self.coordinator.share_persister = share_persister
        self.coordinator.share_log_offsets = share_persister.log_offsets
        if self._logs.topic(SHARE_STATE_TOPIC) is not None:
            self._share()
        if any(self.config.data_dir.glob(SECURITY_FILES)):
            self.security()
        self.every_on_clock("offsets-expiry", offsets_config.retention_check_interval_ms, self.offsets.expire)
        if self.config.delegation_token_secret_key:  # Kafka's controller sweeps expired tokens likewise
            self.every_on_clock(
                "delegation-token-expiry",
                self.config.delegation_token_expiry_check_interval_ms,
                lambda: self.security().remove_expired_tokens(self.clock.now_ms()),
            )
        self.every("log-retention", self.config.log_retention_check_interval_ms, self._logs.enforce_retention)
        # Compaction plans off the loop (seconds on a big segment), __consumer_offsets first.
        self._cleaner = BackgroundCleaner(self._logs, wall_clock_ms)
        self.every("log-cleaner", self.config.log_cleaner_backoff_ms, self._cleaner.kick)
        if self.config.log_flush_interval_ms is not None:
            self.every("log-flush", self.config.log_flush_interval_ms, self._logs.flush_due)
        self.every("connections", self.connections.housekeeping_interval_ms, self.connections.housekeeping)
        self._serving = True
        for node_id in self.nodes.ids:
            host, port = await self.nodes.open(node_id)
            several = {"node_id": node_id} if self.routing else {}
            log.info(
                "broker.started",
                host=host,
                port=port,
                **several,
                advertised="{}:{}".format(*self.nodes.clusters[node_id].advertised),
                cluster_id=self.cluster_id,
                data_dir=str(self.config.data_dir),
            )

    async def stop(self) -> bool:
        """Stop every component, each on its own; True when all closed cleanly (failures are logged).

        Calls after the first wait for it and return its result.
        """
        if self._stop_task is None:
            self._stop_task = asyncio.ensure_future(self._stop_components())
        return await asyncio.shield(self._stop_task)

    async def _stop_components(self) -> bool:
        log.info("broker.stopping", connections=len(self.connections))
        steps = StopSteps()
        try:
            if self._serving:
                self._serving = False
                steps.run("listener", self.nodes.close_listeners)
                await steps.run_async("connections", self.connections.close_all())
            steps.run("periodic tasks", self._cancel_periodic)
            if self._cleaner is not None:
                steps.run("log cleaner", self._cleaner.stop)
            if self._logs is not None:
                steps.run("offsets load", self.offsets.stop_loading)
            if self.transactions_log is not None:
                steps.run("transactions load", self.transactions_log.stop_loading)
            if self.transactions is not None:
                steps.run("transaction coordinator", self.transactions.shutdown)
            steps.run("timer", self.timer.close)
            if self.security_store is not None:
                steps.run("security store", self.security_store.close)
            if self._logs is not None:
                # Closing fsyncs every partition: off the loop, so that a second signal is still heard.
                await steps.run_async("logs", asyncio.to_thread(close_logs, self._logs, steps))
        finally:
            if self._dir_lock is not None:
                self._dir_lock.release()
            if self._stopped is not None:
                self._stopped.set()
        log.info("broker.stopped", clean=steps.clean, failed=steps.failed)
        return steps.clean

    def crash(self) -> None:
        """Die in-process as a SIGKILL would leave the broker (`kafkito.testing`'s `restart(kill=True)`):
        listener and connections cut, no timer or housekeeping firing again, and nothing closed,
        flushed or written on the way out (the logs hold what was written, and recover on restart)."""
        self.crashed = True
        self._serving = False
        self.nodes.close_listeners()
        for conn in list(self.connections):
            conn.kill()
        self._cancel_periodic()
        if self._cleaner is not None:
            self._cleaner.stop()
        if self._logs is not None:
            self.offsets.stop_loading()
        if self.transactions_log is not None:
            self.transactions_log.stop_loading()
        self.timer.close()
        if self._dir_lock is not None:  # as the kernel drops a killed process's flock
            self._dir_lock.release()
        log.warning("broker.crashed", reason="killed by a test")

    def _cancel_periodic(self) -> None:
        for handle in self._periodic.values():
            handle.cancel()
        self._periodic.clear()

    def request_stop(self) -> None:
        """Start stopping (from a signal handler or any loop callback); the outcome is logged by stop()."""
        task = asyncio.ensure_future(self.stop())
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def serve(self) -> int:
        """Start, run until SIGINT/SIGTERM, stop; returns the exit status: 0 clean, 1 unclean.

        A second SIGINT/SIGTERM while stopping exits the process at once (status 128 + signal).
        """
        await self.start()
        signals = StopSignals(asyncio.get_running_loop(), self.request_stop)
        assert self._stopped is not None
        await self._stopped.wait()
        clean = await self.stop()
        signals.remove()
        return 0 if clean else 1

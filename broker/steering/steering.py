"""`Steering`: what a test may do to a running broker: move its clock, inject faults, drop or ignore
clients, and look at its groups. Every method runs on the broker's event loop (the in-process handle
and the HTTP control endpoint both call it there)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import structlog

from kafkito.broker.cluster import control as cluster_control
from kafkito.broker.steering.rules import FaultRule, FaultRules, api_key_of, error_of
from kafkito.broker.steering.shapes import check_faultable
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.app import Broker
    from kafkito.broker.coordinator.classic.group import ClassicGroup
    from kafkito.broker.coordinator.consumer.results import ConsumerGroupDescription
    from kafkito.broker.coordinator.results import GroupSummary

log = structlog.get_logger("kafkito.steering")


class Steering:
    """The broker's steering wheel for tests; built by `Broker` as `broker.steering`."""

    def __init__(self, broker: Broker) -> None:
        self._broker = broker
        self.rules = FaultRules(self._update)
        # client id -> the requests it sent that are never answered (cancelled by `unblackhole`)
        self.blackholed: dict[str, set[asyncio.Future[Any]]] = {}

    # -- time -----------------------------------------------------------------------------------

    def now_ms(self) -> int:
        """The broker's clock: epoch milliseconds moving with the monotonic clock, plus every `advance`."""
        return self._broker.clock.now_ms()

    def advance(self, ms: int) -> int:
        """Move the broker clock `ms` forward, firing every timer due on the way, in deadline order.

        The clock stops at each due deadline so that a task runs at its own time and what it schedules
        inside the window fires too (a session expiry's rebalance, a transaction's abort). Covers the
        purgatory's timer: group sessions, rebalances and delayed joins, transaction timeouts and
        transactional-id expiration, offset retention. Returns the new broker time in ms.
        Every client looks silent for `ms`: a live member whose session is shorter is evicted too.
        """
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            raise ValueError(f"advance takes a whole, non-negative number of ms, not {ms!r}")
        clock = self._broker.clock
        timer = self._broker.timer
        target = clock.now_ms() + ms
        log.info("clock.advance", ms=ms)
        while True:
            deadline = timer.next_deadline_ms()
            if deadline is None or deadline > target:
                break
            clock.skip_to(deadline)
            timer.advance_clock()
        clock.skip_to(target)
        timer.advance_clock()
        return clock.now_ms()

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
    ) -> FaultRule:
        """Answer the next `count` matching requests (None: until removed) with `error`, after `delay_ms`.

        With `topic` (and `partition`), only requests carrying that partition match, and only those
        partitions are answered with the error: the others are served. A faulted Produce appends
        nothing and a faulted OffsetCommit stores nothing. `error` None (or "NONE") with a delay only
        slows the requests down.
        """
        rule = FaultRule(
            api_key_of(api),
            error_of(error),
            count,
            topic=topic,
            partition=partition,
            group=group,
            client_id=client_id,
            delay_ms=delay_ms,
        )
        check_faultable(rule)
        self.rules.add(rule)
        log.info("fault.injected", **rule.as_dict())
        return rule

    def faults(self) -> list[FaultRule]:
        """The rules still in force, oldest first."""
        return list(self.rules)

    def fault(self, rule_id: int) -> FaultRule | None:
        return self.rules.get(rule_id)

    def remove_fault(self, rule_id: int) -> bool:
        rule = self.rules.get(rule_id)
        if rule is None:
            return False
        rule.remove()
        return True

    def clear_faults(self) -> None:
        self.rules.clear()

    # -- connections ----------------------------------------------------------------------------

    def disconnect(self, client_id: str | None = None) -> int:
        """Drop, now, every connection of `client_id` (every connection when None); returns how many."""
        dropped = 0
        for conn in list(self._broker.connections):
            if client_id is None or getattr(conn, "client_id", None) == client_id:
                conn.kill()
                dropped += 1
        log.info("connections.dropped", client_id=client_id, dropped=dropped)
        return dropped

    def blackhole(self, client_id: str) -> None:
        """Stop answering `client_id`: its requests are read and never answered, so that it times out."""
        self.blackholed.setdefault(client_id, set())
        self._update()
        log.info("client.blackholed", client_id=client_id)

    def unblackhole(self, client_id: str) -> None:
        """Answer `client_id` again; the connections holding unanswered requests are dropped."""
        pending = self.blackholed.pop(client_id, None)
        for future in pending or ():
            future.cancel()
        self._update()
        log.info("client.unblackholed", client_id=client_id)

    def swallow(self, client_id: str) -> asyncio.Future[Any]:
        """A reply that never comes, for a request of a black-holed client."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        pending = self.blackholed[client_id]
        pending.add(future)
        future.add_done_callback(pending.discard)
        return future

    # -- groups ---------------------------------------------------------------------------------

    def describe_group(self, group_id: str) -> dict[str, Any] | None:
        """The group's type, state, generation (a consumer group's epoch), protocol and members, or None
        for a group that does not exist. States are Kafka's names ("Stable", "PreparingRebalance",
        "Reconciling", ...)."""
        coordinator = self._broker.coordinator
        group = coordinator.get_group(group_id)
        if group is not None:
            return _classic(group_id, coordinator.describe_groups([group_id])[0].summary, group)
        if coordinator.get_consumer_group(group_id) is not None:
            return _consumer(coordinator.describe_consumer_groups([group_id])[0])
        return None

    def group_timeline(self, group_id: str) -> list[dict[str, Any]]:
        """What the coordinator recorded for the group (transitions, member events), oldest first."""
        return [dict(event) for event in self._broker.coordinator.group_timeline(group_id)]

    # -- cluster topology (broker/cluster/control.py) ------------------------------------------

    def topology(self, internal: bool = False) -> dict[str, Any]:
        """Cluster id, controller, nodes (`live` or not) and each partition's leader, replicas and ISR
        (internal topics too with `internal`)."""
        return cluster_control.describe(self._broker, internal=internal)

    def stop_node(self, node_id: int) -> None:
        """Take a node down: its listener and connections close, its partitions elect other leaders."""
        cluster_control.stop_node(self._broker, node_id)

    async def start_node(self, node_id: int) -> None:
        """Bring a stopped node back on its port; it leads again where it is the preferred leader."""
        await cluster_control.start_node(self._broker, node_id)

    def move_leader(self, topic: str, partition: int, node_id: int) -> dict[str, Any]:
        """Make `node_id` the partition's leader; returns its leader, replicas and ISR."""
        return cluster_control.move_leader(self._broker, topic, partition, node_id)

    def move_coordinator(self, key: str, node_id: int, *, transaction: bool = False) -> dict[str, Any]:
        """Move the coordinator of a group (of a transactional id, with `transaction`) to `node_id`."""
        return cluster_control.move_coordinator(self._broker, key, node_id, transaction=transaction)

    def coordinator(self, key: str, *, transaction: bool = False) -> int:
        """The node coordinating a group (a transactional id, with `transaction`); -1 when none."""
        return cluster_control.coordinator(self._broker, key, transaction=transaction)

    # -------------------------------------------------------------------------------------------

    def _update(self) -> None:
        """Dispatch takes the steered path only while a rule or a black hole is in force (always with
        several nodes, whose requests are routed)."""
        broker = self._broker
        broker.steered = broker.routing or bool(len(self.rules) or self.blackholed)


def _classic(group_id: str, summary: GroupSummary, group: ClassicGroup) -> dict[str, Any]:
    return {
        "group_id": group_id,
        "type": "classic",
        "state": summary.state,
        "protocol_type": summary.protocol_type,
        "protocol": summary.protocol or None,
        "generation": group.generation_id,
        "leader": group.leader_id,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
            }
            for m in summary.members
        ],
    }


def _consumer(described: ConsumerGroupDescription) -> dict[str, Any]:
    return {
        "group_id": described.group_id,
        "type": "consumer",
        "state": described.state.capitalize(),  # the wire's "stable" is Kafka's Stable
        "protocol_type": "consumer",
        "protocol": described.assignor_name,
        "generation": described.group_epoch,
        "assignment_epoch": described.assignment_epoch,
        "leader": None,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "member_epoch": m.member_epoch,
            }
            for m in described.members
        ],
    }

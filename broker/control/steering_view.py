"""What the control endpoint needs of the broker: its `Steering` and its topology, typed as protocols.

`broker.steering.Steering` (built by the `Broker`) satisfies `SteeringView`; the endpoint depends
on these few methods only, so it can be read, and type-checked, without the steering's internals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class FaultRuleView(Protocol):
    """One injected fault rule: its id, how often it fired, its JSON form; `remove()` retires it."""

    @property
    def id(self) -> Any: ...

    @property
    def fired(self) -> int: ...

    def remove(self) -> None: ...

    def as_dict(self) -> dict[str, Any]: ...


class SteeringView(Protocol):
    """The operations `broker.steering.Steering` offers (issue 15, docs/testing.md)."""

    def now_ms(self) -> int: ...

    def advance(self, ms: int) -> int: ...

    def inject(
        self,
        api: str | int,
        error: str | int | None,
        count: int | None = 1,
        *,
        topic: str | None = None,
        partition: int | None = None,
        group: str | None = None,
        client_id: str | None = None,
        delay_ms: int = 0,
    ) -> FaultRuleView: ...

    def faults(self) -> Sequence[FaultRuleView]: ...

    def clear_faults(self) -> None: ...

    def disconnect(self, client_id: str | None = None) -> int: ...

    def blackhole(self, client_id: str) -> None: ...

    def unblackhole(self, client_id: str) -> None: ...

    def describe_group(self, group_id: str) -> dict[str, Any] | None: ...

    def group_timeline(self, group_id: str) -> list[dict[str, Any]]: ...

    def topology(self, internal: bool = False) -> dict[str, Any]: ...

    def stop_node(self, node_id: int) -> None: ...

    async def start_node(self, node_id: int) -> None: ...

    def move_leader(self, topic: str, partition: int, node_id: int) -> dict[str, Any]: ...

    def move_coordinator(self, key: str, node_id: int, *, transaction: bool = False) -> dict[str, Any]: ...

    def coordinator(self, key: str, *, transaction: bool = False) -> int: ...


class BrokerView(Protocol):
    """The broker the endpoint serves: `steering` once built, and its topology once started."""

    def topology(self) -> dict[str, Any]: ...

    def steering(self) -> SteeringView: ...

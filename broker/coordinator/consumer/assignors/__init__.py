"""KIP-848 server-side assignors (`uniform`, `range`): the contract, the registry by name, and the
parsing of `group.consumer.assignors` (first = the group's default)."""

from __future__ import annotations

from collections.abc import Mapping

from kafkito.broker.coordinator.consumer.assignors.range_assignor import RangeAssignor
from kafkito.broker.coordinator.consumer.assignors.spec import (
    Assignment,
    Assignor,
    AssignorError,
    GroupAssignment,
    MemberSpec,
    TopicSpec,
)
from kafkito.broker.coordinator.consumer.assignors.uniform_assignor import UniformAssignor

__all__ = [
    "ASSIGNORS",
    "Assignment",
    "Assignor",
    "AssignorError",
    "GroupAssignment",
    "MemberSpec",
    "RangeAssignor",
    "TopicSpec",
    "UniformAssignor",
    "parse_assignors",
]

ASSIGNORS: Mapping[str, Assignor] = {"uniform": UniformAssignor(), "range": RangeAssignor()}

# Kafka's configuration also names the built-in assignors by their class (its default before 4.0).
_CLASS_NAMES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}


def parse_assignors(value: str) -> tuple[Assignor, ...]:
    """`group.consumer.assignors` (a comma list of names) as assignors, the default first. An unknown
    or repeated name, or an empty list, is a ValueError naming the problem."""
    names = [part.strip() for part in value.split(",") if part.strip()]
    if not names:
        raise ValueError(f"group.consumer.assignors must name at least one of {', '.join(ASSIGNORS)}")
    chosen: list[Assignor] = []
    for name in names:
        assignor = ASSIGNORS.get(_CLASS_NAMES.get(name, name))
        if assignor is None:
            raise ValueError(
                f"group.consumer.assignors: unknown assignor {name!r} (supported: {', '.join(ASSIGNORS)})"
            )
        if assignor in chosen:
            raise ValueError(f"group.consumer.assignors: {name!r} is listed twice")
        chosen.append(assignor)
    return tuple(chosen)

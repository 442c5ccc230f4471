"""The `streams.*` GROUP configs of Kafka 4.4's GroupConfig: each group's overrides of the broker's
`group.streams.*`, checked as Kafka checks them (its ConfigDef's type and lower bound first, then the
broker's bounds), with Kafka's messages.

DescribeConfigs lists seven of them, as Kafka does; `streams.num.warmup.replicas`,
`streams.acceptable.recovery.lag`, `streams.task.offset.interval.ms` and `streams.assignor.offload.enable`
are Kafka's internal group configs: they may be set, and are not listed. kafkito has one assignor
(sticky, its assignment off-loading is moot) and no rack-aware standby placement: those two are
kept and described, and change nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkito.broker.coordinator.streams.assignor import NAME as STICKY

if TYPE_CHECKING:
    from kafkito.broker.coordinator.streams.config import StreamsConfig

Value = int | str | bool
ASSIGNORS = (STICKY,)


@dataclass(frozen=True, slots=True)
class Spec:
    """One config: its StreamsConfig attribute, type, ConfigDef lower bound, whether Describe lists it,
    and the broker's further check (the message of a refusal, or None)."""

    attribute: str
    kind: str  # INT, LONG, LIST, BOOLEAN, STRING
    at_least: int | None = None
    listed: bool = True
    bounds: Callable[[StreamsConfig, str, int], str | None] | None = None


def _range(low: str, high: str) -> Callable[[StreamsConfig, str, int], str | None]:
    def check(c: StreamsConfig, name: str, value: int) -> str | None:
        lo, hi = getattr(c, low), getattr(c, high)
        return None if lo <= value <= hi else f"{name} must be in the range {lo} to {hi} inclusive."

    return check


def _at_most(high: str) -> Callable[[StreamsConfig, str, int], str | None]:
    def check(c: StreamsConfig, name: str, value: int) -> str | None:
        hi = getattr(c, high)
        return None if value <= hi else f"{name} must be less than or equal to {hi}"

    return check


def _at_least(low: str) -> Callable[[StreamsConfig, str, int], str | None]:
    def check(c: StreamsConfig, name: str, value: int) -> str | None:
        lo = getattr(c, low)
        return None if value >= lo else f"{name} must be greater than or equal to {lo}"

    return check


SPECS: dict[str, Spec] = {
    "streams.session.timeout.ms": Spec(
        "session_timeout_ms", "INT", 1, bounds=_range("min_session_timeout_ms", "max_session_timeout_ms")
    ),
    "streams.heartbeat.interval.ms": Spec(
        "heartbeat_interval_ms",
        "INT",
        1,
        bounds=_range("min_heartbeat_interval_ms", "max_heartbeat_interval_ms"),
    ),
    "streams.num.standby.replicas": Spec(
        "num_standby_replicas", "INT", 0, bounds=_at_most("max_standby_replicas")
    ),
    "streams.initial.rebalance.delay.ms": Spec("initial_rebalance_delay_ms", "INT", 0),
    "streams.assignment.interval.ms": Spec(
        "assignment_interval_ms",
        "INT",
        0,
        bounds=_range("min_assignment_interval_ms", "max_assignment_interval_ms"),
    ),
    "streams.rack.aware.assignment.tags": Spec("rack_aware_assignment_tags", "LIST"),
    "streams.assignor.name": Spec("assignor_name", "STRING"),
    "streams.num.warmup.replicas": Spec(
        "num_warmup_replicas", "INT", 0, listed=False, bounds=_at_most("max_warmup_replicas")
    ),
    "streams.acceptable.recovery.lag": Spec("acceptable_recovery_lag", "LONG", 0, listed=False),
    "streams.task.offset.interval.ms": Spec(
        "task_offset_interval_ms", "INT", 1, listed=False, bounds=_at_least("min_task_offset_interval_ms")
    ),
    "streams.assignor.offload.enable": Spec("assignor_offload_enable", "BOOLEAN", listed=False),
}
GROUP_CONFIG_NAMES = {name: spec.attribute for name, spec in SPECS.items()}
_INT_RANGES = {"INT": (-(2**31), 2**31 - 1), "LONG": (-(2**63), 2**63 - 1)}


class StreamsConfigError(ValueError):
    """A value Kafka refuses, with its message."""


def parse(name: str, raw: str, config: StreamsConfig) -> Value:
    """The value of `raw` for config `name`, or StreamsConfigError with Kafka's message."""
    spec = SPECS.get(name)
    if spec is None:
        raise StreamsConfigError(f"Unknown group config name: {name}")
    if spec.kind == "BOOLEAN":
        if raw.strip().lower() not in ("true", "false"):
            raise StreamsConfigError(
                f"Invalid value {raw} for configuration {name}: Expected value to be either true or false"
            )
        return raw.strip().lower() == "true"
    if spec.kind == "LIST":
        return ",".join(part.strip() for part in raw.split(",") if part.strip())
    if spec.kind == "STRING":
        if name == "streams.assignor.name" and raw not in ASSIGNORS:
            registered = ", ".join(ASSIGNORS)
            raise StreamsConfigError(
                f"{name} '{raw}' is not a registered task assignor. Registered assignors are: [{registered}]."
            )
        return raw
    return _number(spec, name, raw, config)


def _number(spec: Spec, name: str, raw: str, config: StreamsConfig) -> int:
    low, high = _INT_RANGES[spec.kind]
    not_a_number = f"Invalid value {raw} for configuration {name}: Not a number of type {spec.kind}"
    try:
        value = int(raw.strip())
    except ValueError:
        raise StreamsConfigError(not_a_number) from None
    if not low <= value <= high:
        raise StreamsConfigError(not_a_number)
    if spec.at_least is not None and value < spec.at_least:
        raise StreamsConfigError(
            f"Invalid value {value} for configuration {name}: Value must be at least {spec.at_least}"
        )
    problem = spec.bounds(config, name, value) if spec.bounds is not None else None
    if problem is not None:
        raise StreamsConfigError(problem)
    return value


class StreamsGroupConfigs:
    """The GROUP configs of streams groups, over the broker's values."""

    __slots__ = ("_groups", "config")

    def __init__(self, config: StreamsConfig) -> None:
        self.config = config
        self._groups: dict[str, dict[str, Value]] = {}

    def set(self, group_id: str, name: str, value: Value | None) -> str | None:
        """Set (None: remove) one config of a group; the reason it is refused, or None."""
        try:
            checked = (
                None
                if value is None
                else parse(name, str(value).lower() if isinstance(value, bool) else str(value), self.config)
            )
        except StreamsConfigError as exc:
            return str(exc)
        configs = self._groups.setdefault(group_id, {})
        attribute = SPECS[name].attribute
        if checked is None:
            configs.pop(attribute, None)
        else:
            configs[attribute] = checked
        return None

    def _get(self, group_id: str, attribute: str) -> Value:
        value = self._groups.get(group_id, {}).get(attribute)
        return value if value is not None else getattr(self.config, attribute)

    def _int(self, group_id: str, attribute: str) -> int:
        return int(self._get(group_id, attribute))

    def session_timeout_ms(self, group_id: str) -> int:
        return self._int(group_id, "session_timeout_ms")

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self._int(group_id, "heartbeat_interval_ms")

    def num_standby_replicas(self, group_id: str) -> int:
        return self._int(group_id, "num_standby_replicas")

    def initial_rebalance_delay_ms(self, group_id: str) -> int:
        return self._int(group_id, "initial_rebalance_delay_ms")

    def assignment_interval_ms(self, group_id: str) -> int:
        return self._int(group_id, "assignment_interval_ms")

    def acceptable_recovery_lag(self, group_id: str) -> int:
        return self._int(group_id, "acceptable_recovery_lag")

    def task_offset_interval_ms(self, group_id: str) -> int:
        return self._int(group_id, "task_offset_interval_ms")

    def assignment_configs(self, group_id: str) -> tuple[tuple[str, str], ...]:
        """What the group metadata record keeps of the configs its last assignment used."""
        return (("num.standby.replicas", str(self.num_standby_replicas(group_id))),)

    # -- the GROUP config resource (DescribeConfigs, IncrementalAlterConfigs) --------------------

    def describe(self, group_id: str) -> list[tuple[str, int | str, bool]]:
        """(name, effective value, whether the group overrides it) for every listed streams config."""
        overrides = self._groups.get(group_id, {})
        described: list[tuple[str, int | str, bool]] = []
        for name, spec in sorted(SPECS.items()):
            if spec.listed:
                value = self._get(group_id, spec.attribute)
                shown = str(value).lower() if isinstance(value, bool) else value
                described.append((name, shown, spec.attribute in overrides))
        return described

    def alter(
        self, group_id: str, set_: Mapping[str, str], delete: Collection[str], validate_only: bool = False
    ) -> None:
        """Set and delete overrides (all or nothing); GroupConfigError names the first problem."""
        from kafkito.broker.coordinator.consumer.group_configs import GroupConfigError

        values: dict[str, Value | None] = dict.fromkeys(delete)
        for name in delete:
            if name not in SPECS:
                raise GroupConfigError(f"Unknown group config name: {name}")
        for name, raw in set_.items():
            try:
                values[name] = parse(name, raw, self.config)
            except StreamsConfigError as exc:
                raise GroupConfigError(str(exc)) from None
        if not validate_only:
            configs = self._groups.setdefault(group_id, {})
            for name, value in values.items():
                if value is None:
                    configs.pop(SPECS[name].attribute, None)
                else:
                    configs[SPECS[name].attribute] = value

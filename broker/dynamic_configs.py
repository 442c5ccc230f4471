"""Which broker configs Kafka lets an admin change at run time (KIP-226, `DynamicBrokerConfig`), and
its checks of such a change, with its messages.

A change names the cluster-wide default (`""`) or one broker. As Kafka: a config Kafka knows but does
not reconfigure at run time is refused ("Cannot update these configs dynamically: Set(...)"); a
security config without a listener prefix is refused; a listener config may only be set per broker;
a value must parse as the config's type. Each refusal is INVALID_REQUEST for the whole resource (as
Kafka's ConfigAdminManager wraps them). A config Kafka does not know is accepted and kept, as Kafka
keeps it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache

from kafkito.broker.config import PROPERTIES, Config, ConfigError

# Listener configs: per broker only (the cluster default cannot hold them).
PER_BROKER_ONLY = frozenset({"listeners", "advertised.listeners", "listener.security.protocol.map"})


@cache
def _kafka_tables() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(Kafka's broker config names, those it changes at run time, the security configs it changes only
    per listener), from Kafka 4.4's definitions; loaded on the first config change or description (the
    table is not needed to start)."""
    from kafkito.broker.kafka_config_defs import BROKER_CONFIG_DEFS, DYNAMIC_SECURITY_CONFIGS

    dynamic = frozenset(n for n, d in BROKER_CONFIG_DEFS.items() if d.dynamic)
    return frozenset(BROKER_CONFIG_DEFS), dynamic, DYNAMIC_SECURITY_CONFIGS


def is_read_only(name: str) -> bool:
    """Whether DescribeConfigs reports `name` as read-only: Kafka's DynamicBrokerConfig does not change it
    at run time (a listener-prefixed name is read-only there too, though it can be set per broker)."""
    return name not in _kafka_tables()[1]


def is_static(name: str) -> bool:
    """Whether a change of `name` is refused as not dynamic: a Kafka broker config DynamicBrokerConfig does
    not change, or a property of kafkito's own table (kafkito changes none of them at run time)."""
    known, dynamic, _ = _kafka_tables()
    if name in dynamic or name.startswith("listener.name."):
        return False
    return name in known or name in PROPERTIES


def _scala_set(names: Iterable[str]) -> str:
    return "Set(" + ", ".join(sorted(names)) + ")"


_INT_BOUNDS = {"SHORT": 2**15, "INT": 2**31, "LONG": 2**63}


def kafka_type(name: str) -> str | None:
    """ConfigDef.Type name of a Kafka broker config (a listener-prefixed one has its base config's
    type), or None for a name Kafka does not define."""
    from kafkito.broker.kafka_config_defs import BROKER_CONFIG_DEFS

    d = BROKER_CONFIG_DEFS.get(name)
    if d is None and name.startswith("listener.name."):
        parts = name.split(".")[3:]  # listener.name.<listener>.[<mechanism>.]<config>
        d = BROKER_CONFIG_DEFS.get(".".join(parts)) or BROKER_CONFIG_DEFS.get(".".join(parts[1:]))
    return None if d is None else d.type


def _parses(kind: str, value: str) -> bool:
    text = value.strip()
    try:
        if kind in _INT_BOUNDS:
            return -_INT_BOUNDS[kind] <= int(text) < _INT_BOUNDS[kind]
        if kind == "DOUBLE":
            float(text)
        elif kind == "BOOLEAN":
            return text.lower() in ("true", "false")
    except ValueError:
        return False
    return True


def _check_value(name: str, value: str) -> str | None:
    """Kafka's message when `value` does not parse as the type of `name` (Kafka's type for its configs,
    kafkito's for its own), else None."""
    kind = kafka_type(name)
    if kind is None:
        prop = PROPERTIES.get(name)
        if prop is None:
            return None
        try:
            Config().set(name, value)
            return None
        except ConfigError:
            kind = {int: "INT", bool: "BOOLEAN"}.get(prop.type, "STRING")
    elif _parses(kind, value):
        return None
    expected = (
        "Expected value to be either true or false" if kind == "BOOLEAN" else f"Not a number of type {kind}"
    )
    return f"Invalid value {value} for configuration {name}: {expected}"


def refusal(changes: Mapping[str, str], per_broker: bool) -> str | None:
    """Why Kafka refuses setting `changes` on a broker resource (INVALID_REQUEST), or None."""
    names = set(changes)
    static = {n for n in names if is_static(n)}
    if static:
        return f"Cannot update these configs dynamically: {_scala_set(static)}"
    unprefixed = names & _kafka_tables()[2]
    if unprefixed:
        return (
            "These security configs can be dynamically updated only per-listener using the listener "
            f"prefix: {_scala_set(unprefixed)}"
        )
    for name in sorted(names):
        bad = _check_value(name, changes[name])
        if bad is not None:
            return bad
    if not per_broker:
        listener = {n for n in names if n in PER_BROKER_ONLY or n.startswith("listener.name.")}
        if listener:
            return (
                "Cannot update these configs at default cluster level, broker id must be specified: "
                f"{_scala_set(listener)}"
            )
    return None

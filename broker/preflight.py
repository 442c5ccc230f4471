"""Checks `kafkito serve` makes before it touches anything: each failure is one line saying what is
wrong and what to do, and nothing is created on disk before all of them pass.

Values are refused as Kafka refuses them at start (its ConfigDef ranges and the group coordinator's
min/max requirements); unknown property names are only warned about, with the nearest known name,
as Kafka logs "supplied but isn't a known config".
"""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path
from typing import Any

from kafkito.broker.config import PROPERTIES, Config
from kafkito.broker.listeners import numeric_address


class PreflightError(Exception):
    """A reason the broker cannot start, as one line for a person."""


# Kafka's lower bounds (ConfigDef `atLeast`) of the properties kafkito reads.
AT_LEAST: dict[str, int] = {
    "num.partitions": 1,
    "default.replication.factor": 1,
    "message.max.bytes": 0,
    "log.segment.bytes": 14,
    "log.retention.check.interval.ms": 1,
    "log.cleaner.backoff.ms": 0,
    "log.cleaner.delete.retention.ms": 0,
    "log.flush.interval.messages": 1,
    "socket.request.max.bytes": 1,
    "max.connections": 0,
    "max.connections.per.ip": 0,
    "group.max.size": 1,
    "group.initial.rebalance.delay.ms": 0,
    "group.consumer.session.timeout.ms": 1,
    "group.consumer.min.session.timeout.ms": 1,
    "group.consumer.max.session.timeout.ms": 1,
    "group.consumer.heartbeat.interval.ms": 1,
    "group.consumer.min.heartbeat.interval.ms": 1,
    "group.consumer.max.heartbeat.interval.ms": 1,
    "group.consumer.assignment.interval.ms": 0,
    "group.consumer.max.size": 1,
    "offsets.topic.num.partitions": 1,
    "offsets.retention.minutes": 1,
    "offsets.retention.check.interval.ms": 1,
    "offsets.topic.segment.bytes": 1,
    "offsets.commit.timeout.ms": 1,
    "transaction.max.timeout.ms": 1,
    "transactional.id.expiration.ms": 1,
    "transaction.state.log.num.partitions": 1,
    "transaction.state.log.segment.bytes": 1,
    "producer.id.expiration.ms": 1,
}
ONE_OF: dict[str, tuple[str, ...]] = {
    "log.message.timestamp.type": ("CreateTime", "LogAppendTime"),
    "group.consumer.migration.policy": ("disabled", "downgrade", "upgrade", "bidirectional"),
}
# (smaller, larger): Kafka's group coordinator requires smaller <= larger.
ORDERED: tuple[tuple[str, str], ...] = (
    ("group.min.session.timeout.ms", "group.max.session.timeout.ms"),
    ("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
    ("group.consumer.min.session.timeout.ms", "group.consumer.session.timeout.ms"),
    ("group.consumer.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
    ("group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
    ("group.consumer.min.heartbeat.interval.ms", "group.consumer.heartbeat.interval.ms"),
    ("group.consumer.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
)


def _value(config: Config, name: str) -> object:
    return getattr(config, PROPERTIES[name].attr)


def check_values(config: Config) -> None:
    """Refuse a value Kafka would refuse at start."""
    for name, low in AT_LEAST.items():
        value = _value(config, name)
        if isinstance(value, int) and value < low:
            raise PreflightError(f"invalid value {value} for {name}: it must be at least {low}")
    for name, allowed in ONE_OF.items():
        if _value(config, name) not in allowed:
            raise PreflightError(
                f"invalid value {_value(config, name)!r} for {name}: one of {', '.join(allowed)}"
            )
    policy = {p.strip() for p in config.log_cleanup_policy.split(",")}
    if not policy <= {"delete", "compact"}:
        raise PreflightError(
            f"invalid value {config.log_cleanup_policy!r} for log.cleanup.policy: delete, compact or both"
        )
    for small, large in ORDERED:
        a, b = _value(config, small), _value(config, large)
        if isinstance(a, int) and isinstance(b, int) and a > b:
            raise PreflightError(f"{small}={a} is above {large}={b}: Kafka requires {small} <= {large}")
    for name in ("port", "advertised.port"):
        port = _value(config, name)
        if (isinstance(port, int) and not 0 <= port <= 65535) or (name == "advertised.port" and port == 0):
            raise PreflightError(f"--{name.replace('.', '-')} {port} is not a port: use 1-65535")


def topic_default_properties() -> frozenset[str]:
    """Broker properties that give topics their defaults (log.roll.ms, compression.type, ...)."""
    from kafkito.broker.log.config import TOPIC_CONFIGS

    names = {d.broker_name for d in TOPIC_CONFIGS.values() if d.broker_name}
    return frozenset(names | {"log.roll.hours", "log.roll.jitter.hours"})


def unknown_properties(config: Config, known_elsewhere: frozenset[str]) -> list[tuple[str, str | None]]:
    """(name, nearest known name or None) for each given property kafkito does not know."""
    unknown = sorted(
        name for name in config.extra if name not in known_elsewhere and not name.startswith("listener.name.")
    )  # `listener.name.<listener>.<property>`: read by the listener it names (broker.listeners)
    if not unknown:
        return []
    from kafkito.broker.share.properties import PROPERTIES as SHARE_PROPERTIES  # read where used

    unknown = [name for name in unknown if name not in SHARE_PROPERTIES]
    if not unknown:
        return []
    import difflib  # only when a name is unknown: its imports cost every start a few ms

    known = sorted(
        set(PROPERTIES)
        | set(SHARE_PROPERTIES)
        | known_elsewhere
        | {"listeners", "advertised.listeners", "broker.id", "log.dir"}
    )
    found: list[tuple[str, str | None]] = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        found.append((name, close[0] if close else None))
    return found


def check_data_dir(path: Path) -> None:
    """The data dir is a directory we can write, or can be made in one (nothing is created here)."""
    if path.exists():
        if not path.is_dir():
            raise PreflightError(f"data dir {path} is a file, not a directory: pass --data-dir DIR")
        if not _writable(path):
            raise PreflightError(
                f"data dir {path} is not writable: fix its permissions or pass --data-dir DIR"
            )
        return
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise PreflightError(f"data dir {path} cannot be created: {parent} is a file; pass --data-dir DIR")
    if not _writable(parent):
        raise PreflightError(
            f"data dir {path} cannot be created in {parent} (not writable): pass --data-dir DIR"
        )


def _writable(directory: Path) -> bool:
    """Whether a file can be created in `directory`: tried (and removed at once), since permission bits
    say nothing for root or a read-only mount."""
    if not os.access(directory, os.W_OK | os.X_OK):
        return False
    probe = directory / f".kafkito-probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:  # left by a process with our pid that died: ours to remove
        probe.unlink()
        return _writable(directory)
    except OSError:
        return False
    os.close(fd)
    probe.unlink()
    return True


def check_port_free(host: str, port: int) -> None:
    """Nothing listens on host:port yet (bound and released at once, as the listener will bind it)."""
    if port == 0:
        return
    literal = numeric_address(host, port)
    address: tuple[Any, ...]
    if literal is not None:  # an address literal: bound as the listener binds it, with no getaddrinfo
        family, address = literal
        kind, proto = socket.SOCK_STREAM, 0
    else:
        try:
            infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except socket.gaierror as exc:
            raise PreflightError(
                f"--host {host!r} cannot be resolved ({exc.strerror}): pass --host ADDRESS"
            ) from None
        family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PreflightError(
                    f"port {port} on {host} is already in use (another broker?): stop it or pass --port N"
                ) from None
            raise PreflightError(
                f"cannot listen on {host}:{port} ({exc.strerror}): pass --host/--port"
            ) from None


def check(config: Config, nodes: int = 1) -> None:
    """Every check, cheapest first; raises PreflightError on the first failure. A cluster of `nodes`
    listens on the port and the ones after it."""
    check_values(config)
    if config.port and config.port + nodes - 1 > 65535:
        raise PreflightError(
            f"--nodes {nodes} from --port {config.port} goes past port 65535: pass a lower --port"
        )
    check_data_dir(config.data_dir)
    for port in range(config.port, config.port + nodes) if config.port else [0]:
        check_port_free(config.host, port)
    if config.listeners:
        check_listeners(config)
    if config.authorizer_class_name.strip():
        check_authorizer(config.authorizer_class_name.strip())
    if config.group_consumer_assignors != PROPERTIES["group.consumer.assignors"].default:
        check_assignors(config.group_consumer_assignors)


def check_assignors(value: str) -> None:
    """`group.consumer.assignors` names assignors kafkito has (uniform, range, or Kafka's class names)."""
    from kafkito.broker.coordinator.consumer.assignors import parse_assignors

    try:
        parse_assignors(value)
    except ValueError as exc:
        raise PreflightError(str(exc)) from None


def check_authorizer(name: str) -> None:
    """`authorizer.class.name` names an authorizer kafkito provides (Kafka's StandardAuthorizer rules)."""
    from kafkito.broker.security.authorizer import AUTHORIZER_CLASSES

    if name not in AUTHORIZER_CLASSES:
        known = " or ".join(sorted(AUTHORIZER_CLASSES))
        raise PreflightError(f"authorizer.class.name={name} is not available: use {known}")


def check_listeners(config: Config) -> None:
    """`listeners` parses, and each listener's TLS stores and SASL settings load (broker.auth)."""
    from kafkito.broker.listeners import listeners_of

    for listener in listeners_of(config)[1:]:
        if listener.port:
            check_port_free(listener.host, listener.port)
    from kafkito.broker.auth.listener_security import check_listener_settings

    check_listener_settings(config)


def check_ready_file(path: Path) -> None:
    """`--ready-file PATH` can be written once the broker serves: its directory exists and is writable."""
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise PreflightError(f"--ready-file {path} is a directory: pass a file path")
    if not parent.is_dir() or not _writable(parent):
        raise PreflightError(f"--ready-file {path}: {parent} is not a writable directory")

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

from kafkito.broker.config import PROPERTIES, Config, ConfigError

# DynamicLogConfig: the broker synonyms of topic configs (every topic without an override follows).
_LOG = {
    "log.segment.bytes", "log.roll.ms", "log.roll.hours", "log.roll.jitter.ms", "log.roll.jitter.hours",
    "log.index.size.max.bytes", "log.flush.interval.messages", "log.flush.interval.ms",
    "log.retention.bytes", "log.retention.ms", "log.retention.minutes", "log.retention.hours",
    "message.max.bytes", "log.index.interval.bytes", "log.cleaner.delete.retention.ms",
    "log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", "log.segment.delete.delay.ms",
    "log.cleaner.min.cleanable.ratio", "log.cleanup.policy", "unclean.leader.election.enable",
    "min.insync.replicas", "compression.type", "compression.gzip.level", "compression.lz4.level",
    "compression.zstd.level", "log.preallocate", "log.message.timestamp.type",
    "log.message.timestamp.difference.max.ms", "log.message.timestamp.before.max.ms",
    "log.message.timestamp.after.max.ms", "log.message.downconversion.enable", "log.local.retention.ms",
    "log.local.retention.bytes",
}  # fmt: skip
_CLEANER = {
    "log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.size",
    "log.cleaner.io.buffer.load.factor", "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms",
}  # fmt: skip
_THREADS = {
    "num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir", "background.threads",
    "num.network.threads",
}  # fmt: skip
_SOCKET = {"max.connections.per.ip", "max.connections.per.ip.overrides", "max.connections",
           "max.connection.creation.rate"}  # fmt: skip
_OTHER = {
    "metric.reporters", "producer.id.expiration.ms", "transaction.partition.verification.enable",
    "leader.replication.throttled.rate", "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second", "remote.log.index.file.cache.total.size.bytes",
    "remote.fetch.max.wait.ms", "remote.log.manager.copy.max.bytes.per.second",
    "remote.log.manager.fetch.max.bytes.per.second", "remote.log.reader.threads",
    "remote.log.manager.copier.thread.pool.size", "remote.log.manager.expiration.thread.pool.size",
    "remote.list.offsets.request.timeout.ms",
}  # fmt: skip
# Listener configs: per broker only (the cluster default cannot hold them).
PER_BROKER_ONLY = frozenset({"listeners", "advertised.listeners", "listener.security.protocol.map"})
# Security configs that are dynamic only with a listener prefix (`listener.name.<l>.<config>`).
SECURITY_CONFIGS = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.type", "ssl.truststore.location",
    "ssl.truststore.password", "ssl.truststore.certificates", "ssl.client.auth", "ssl.protocol",
    "ssl.enabled.protocols", "ssl.cipher.suites", "ssl.endpoint.identification.algorithm",
    "ssl.secure.random.implementation", "sasl.jaas.config", "sasl.enabled.mechanisms",
    "sasl.kerberos.service.name", "sasl.login.class", "sasl.server.callback.handler.class",
})  # fmt: skip

DYNAMIC_BROKER_CONFIGS = frozenset(
    _LOG | _CLEANER | _THREADS | _SOCKET | _OTHER | PER_BROKER_ONLY | SECURITY_CONFIGS
)

# Kafka broker configs kafkito does not keep in its table but knows to be static.
_KNOWN_STATIC = frozenset({
    "log.dirs", "log.dir", "broker.id", "node.id", "process.roles", "controller.quorum.voters",
    "controller.quorum.bootstrap.servers", "controller.listener.names", "inter.broker.listener.name",
    "security.inter.broker.protocol", "zookeeper.connect", "broker.rack", "metadata.log.dir",
    "log.message.format.version", "inter.broker.protocol.version", "authorizer.class.name",
})  # fmt: skip


def is_read_only(name: str) -> bool:
    """Whether DescribeConfigs reports `name` as read-only (not changeable at run time)."""
    return name not in DYNAMIC_BROKER_CONFIGS and not name.startswith("listener.name.")


def _scala_set(names: Iterable[str]) -> str:
    return "Set(" + ", ".join(sorted(names)) + ")"


def _check_value(name: str, value: str) -> str | None:
    prop = PROPERTIES.get(name)
    if prop is None:
        return None
    try:
        Config().set(name, value)
    except ConfigError:
        kind = {int: "INT", bool: "BOOLEAN"}.get(prop.type) or (
            "LONG" if "int" in str(prop.type) else "STRING"
        )
        expected = (
            "Expected value to be either true or false"
            if kind == "BOOLEAN"
            else f"Not a number of type {kind}"
        )
        return f"Invalid value {value} for configuration {name}: {expected}"
    return None


def refusal(changes: Mapping[str, str], per_broker: bool) -> str | None:
    """Why Kafka refuses setting `changes` on a broker resource (INVALID_REQUEST), or None."""
    names = set(changes)
    static = {n for n in names if (n in PROPERTIES or n in _KNOWN_STATIC) and is_read_only(n)}
    if static:
        return f"Cannot update these configs dynamically: {_scala_set(static)}"
    unprefixed = names & SECURITY_CONFIGS
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

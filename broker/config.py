"""The broker's configuration: the one table of Kafka properties (name, type, default, doc) and `Config`.

Every broker property is one line of `Config`: `attribute: type = prop(default, "doc")`. Its Kafka name
is the attribute with dots for underscores (`group_max_size` is `group.max.size`) unless `_ALIASES`
says otherwise. The typed views other packages use (`CoordinatorConfig`, `OffsetsConfig`,
`TransactionConfig`, the topic configs of `broker.log.config`) take their defaults from here through
`default("kafka.name")`.
"""

from __future__ import annotations

import builtins
import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
    """A property that does not exist or does not parse."""


_BOOL_TRUE = {"true", "1", "yes", "on"}
_BOOL_FALSE = {"false", "0", "no", "off"}


def prop(default: T, doc: str = "") -> T:
    """One property of the table: its default and what it does (kept in the field's metadata)."""
    spec: T = field(default=default, metadata={"doc": doc})  # a Field that the dataclass unwraps
    return spec


@dataclass(slots=True)
class Config:
    """Every property kafkito knows, by Kafka's name with underscores; `set()` takes the dotted name."""

    # listeners
    host: str = prop("127.0.0.1", "address the listener binds (from `listeners`)")
    port: int = prop(9092, "port the listener binds (from `listeners`; 0 picks a free one)")
    advertised_host: str | None = prop(None, "host clients are told to connect to (`advertised.listeners`)")
    advertised_port: int | None = prop(None, "port clients are told to connect to (`advertised.listeners`)")
    listeners: str | None = prop(None, "NAME://host:port,... (unset: one PLAINTEXT on host:port)")
    advertised_listeners: str | None = prop(None, "NAME://host:port,... what clients are told, per listener")
    listener_security_protocol_map: str = prop(
        "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
        "listener name -> security protocol",
    )
    inter_broker_listener_name: str | None = prop(None, "accepted; one process has no inter-broker traffic")
    node_id: int = prop(1, "this broker's id (`node.id`, `broker.id`)")
    cluster_id: str | None = prop(None, "the cluster id; kept in meta.properties, generated when absent")
    # storage
    log_dirs: str = prop("./data", "where topic logs live (the first directory of the list)")
    num_partitions: int = prop(1, "partitions of a topic created without a count")
    default_replication_factor: int = prop(1, "replication factor of a topic created without one")
    auto_create_topics_enable: bool = prop(True, "Metadata for an unknown topic creates it")
    delete_topic_enable: bool = prop(True, "DeleteTopics is allowed")
    message_max_bytes: int = prop(1048588, "largest record batch accepted (topic: max.message.bytes)")
    log_segment_bytes: int = prop(1073741824, "segment size before rolling (topic: segment.bytes)")
    log_retention_ms: int | None = prop(None, "time records are kept (topic: retention.ms)")
    log_retention_minutes: int | None = prop(None, "log.retention.ms in minutes, when that is unset")
    log_retention_hours: int = prop(168, "log.retention.ms in hours, when it and the minutes are unset")
    log_retention_bytes: int = prop(-1, "bytes a partition keeps, -1 for no limit (topic: retention.bytes)")
    log_retention_check_interval_ms: int = prop(300000, "how often retention runs")
    log_cleanup_policy: str = prop("delete", "delete, compact or both (topic: cleanup.policy)")
    log_message_timestamp_type: str = prop("CreateTime", "CreateTime or LogAppendTime")
    log_flush_interval_messages: int = prop(9223372036854775807, "fsync after this many messages")
    log_flush_interval_ms: int | None = prop(None, "fsync a log this long after its last fsync")
    log_cleaner_delete_retention_ms: int = prop(86400000, "tombstones survive compaction this long")
    log_cleaner_backoff_ms: int = prop(15000, "pause between compaction passes")
    producer_id_expiration_ms: int = prop(86400000, "an idle producer id's state is dropped after this")
    # network
    socket_request_max_bytes: int = prop(104857600, "largest request frame accepted")
    connections_max_idle_ms: int = prop(600000, "idle or slow-request connections close after; -1: never")
    max_connections: int = prop(2147483647, "open connections; more are closed as they arrive")
    max_connections_per_ip: int = prop(2147483647, "open connections from one address; more are closed")
    max_request_partition_size_limit: int = prop(2000, "most partitions a DescribeTopicPartitions page holds")
    queued_max_request_bytes: int = prop(-1, "request bytes held before reading pauses; -1: no limit")
    # security (per listener: `listener.name.<name>.<property>` overrides any of these)
    sasl_enabled_mechanisms: str = prop("GSSAPI", "PLAIN, SCRAM-SHA-256/512, OAUTHBEARER")
    sasl_mechanism_inter_broker_protocol: str = prop("GSSAPI", "accepted; no inter-broker traffic")
    connections_max_reauth_ms: int = prop(0, "SASL session lifetime (KIP-368); 0: none")
    sasl_server_max_receive_size: int = prop(524288, "largest frame before SASL authentication completes")
    connection_failed_authentication_delay_ms: int = prop(100, "a failed login's connection closes after")
    ssl_keystore_type: str = prop("JKS", "PEM is the one kafkito reads")
    ssl_keystore_location: str | None = prop(None, "PEM file: the certificate chain and the private key")
    ssl_keystore_password: str | None = prop(None, "accepted (PEM keystores have none)")
    ssl_key_password: str | None = prop(None, "password of the encrypted private key")
    ssl_keystore_certificate_chain: str | None = prop(None, "PEM certificate chain, inline")
    ssl_keystore_key: str | None = prop(None, "PEM private key, inline")
    ssl_truststore_type: str = prop("JKS", "PEM is the one kafkito reads")
    ssl_truststore_location: str | None = prop(None, "PEM file of trusted CA certificates")
    ssl_truststore_password: str | None = prop(None, "accepted (PEM truststores have none)")
    ssl_truststore_certificates: str | None = prop(None, "PEM trusted CA certificates, inline")
    ssl_client_auth: str = prop("none", "client certificates: none, requested or required")
    ssl_principal_mapping_rules: str = prop("DEFAULT", "certificate subject -> principal name rules")
    ssl_enabled_protocols: str = prop("TLSv1.2,TLSv1.3", "TLS versions accepted")
    authorizer_class_name: str = prop("", "StandardAuthorizer (or AclAuthorizer) enforces ACLs; empty: none")
    super_users: str | None = prop(None, "principals every action is allowed to, `;`-separated")
    allow_everyone_if_no_acl_found: bool = prop(False, "an action no ACL applies to is allowed")
    delegation_token_secret_key: str | None = prop(
        None, "HMAC key of delegation tokens; unset or empty: token APIs are DELEGATION_TOKEN_AUTH_DISABLED"
    )
    delegation_token_max_lifetime_ms: int = prop(604800000, "a token's lifetime, renewals included, at most")
    delegation_token_expiry_time_ms: int = prop(86400000, "a token expires this long after issue or renewal")
    delegation_token_expiry_check_interval_ms: int = prop(3600000, "how often expired tokens are removed")
    # protocol
    kafkito_api_versions_kafka4_minimums: bool = prop(
        False, "kafkito: advertise and accept Kafka 4's lowest API versions (KIP-896) instead of Kafka 3.9's"
    )
    kafkito_as_version: str | None = prop(
        None, "kafkito: advertise and accept only the API versions of this Kafka release (0.10.0 ... 4.4)"
    )
    # groups
    group_min_session_timeout_ms: int = prop(6000, "smallest session timeout a member may ask for")
    group_max_session_timeout_ms: int = prop(1800000, "largest session timeout a member may ask for")
    group_initial_rebalance_delay_ms: int = prop(3000, "wait for more members before the first rebalance")
    group_max_size: int = prop(2147483647, "members a group may hold")
    group_consumer_session_timeout_ms: int = prop(45000, "KIP-848 member session timeout")
    group_consumer_min_session_timeout_ms: int = prop(45000, "smallest consumer.session.timeout.ms")
    group_consumer_max_session_timeout_ms: int = prop(60000, "largest consumer.session.timeout.ms")
    group_consumer_heartbeat_interval_ms: int = prop(5000, "KIP-848 heartbeat interval given to members")
    group_consumer_min_heartbeat_interval_ms: int = prop(5000, "smallest consumer.heartbeat.interval.ms")
    group_consumer_max_heartbeat_interval_ms: int = prop(15000, "largest consumer.heartbeat.interval.ms")
    group_consumer_assignment_interval_ms: int = prop(
        1000, "KIP-848: compute a group's target assignment at most once per interval (0: at every change)"
    )
    group_consumer_max_size: int = prop(2147483647, "members a KIP-848 consumer group may hold")
    group_consumer_assignors: str = prop("uniform,range", "server-side assignors, the first is the default")
    group_consumer_migration_policy: str = prop(
        "bidirectional", "classic <-> consumer conversions: disabled, downgrade, upgrade or bidirectional"
    )
    # streams groups (KIP-1071)
    group_streams_session_timeout_ms: int = prop(45000, "streams group member session timeout")
    group_streams_min_session_timeout_ms: int = prop(45000, "smallest streams.session.timeout.ms")
    group_streams_max_session_timeout_ms: int = prop(60000, "largest streams.session.timeout.ms")
    group_streams_heartbeat_interval_ms: int = prop(5000, "streams group heartbeat interval")
    group_streams_min_heartbeat_interval_ms: int = prop(5000, "smallest streams.heartbeat.interval.ms")
    group_streams_max_heartbeat_interval_ms: int = prop(15000, "largest streams.heartbeat.interval.ms")
    group_streams_num_standby_replicas: int = prop(0, "standby replicas of each streams task")
    group_streams_max_standby_replicas: int = prop(2, "largest streams.num.standby.replicas")
    group_streams_max_size: int = prop(2147483647, "members a streams group may hold")
    group_streams_num_warmup_replicas: int = prop(2, "warm-up replicas of each streams task")
    group_streams_max_warmup_replicas: int = prop(20, "largest streams.num.warmup.replicas")
    group_streams_acceptable_recovery_lag: int = prop(10000, "offsets a caught-up streams task may lag")
    group_streams_task_offset_interval_ms: int = prop(60000, "how often streams members report task offsets")
    group_streams_initial_rebalance_delay_ms: int = prop(
        3000, "a new streams group's first target assignment waits this long for more members"
    )
    group_streams_assignment_interval_ms: int = prop(
        1000, "a streams group's target assignment is computed at most once per interval (0: at every change)"
    )
    group_streams_min_assignment_interval_ms: int = prop(0, "smallest streams.assignment.interval.ms")
    group_streams_max_assignment_interval_ms: int = prop(15000, "largest streams.assignment.interval.ms")
    group_streams_min_task_offset_interval_ms: int = prop(15000, "smallest streams.task.offset.interval.ms")
    group_timeline_max_events: int = prop(500, "kafkito: events the group timeline keeps per group; 0: none")
    # offsets
    offsets_topic_num_partitions: int = prop(50, "partitions of __consumer_offsets (fixed once created)")
    offsets_retention_minutes: int = prop(10080, "committed offsets of an empty group are kept this long")
    offsets_retention_check_interval_ms: int = prop(600000, "how often expired offsets are removed")
    offset_metadata_max_bytes: int = prop(4096, "largest metadata string of a committed offset")
    offsets_topic_segment_bytes: int = prop(104857600, "segment size of __consumer_offsets")
    offsets_commit_timeout_ms: int = prop(5000, "an offset commit waits this long for its append")
    # transactions
    transaction_max_timeout_ms: int = prop(900000, "largest transaction.timeout.ms a producer may ask for")
    transactional_id_expiration_ms: int = prop(604800000, "an id with no open transaction is removed after")
    transaction_abort_timed_out_transaction_cleanup_interval_ms: int = prop(
        10000, "how often timed-out transactions are looked for and aborted"
    )
    transaction_remove_expired_transaction_cleanup_interval_ms: int = prop(
        3600000, "how often expired transactional ids are removed"
    )
    transaction_state_log_num_partitions: int = prop(50, "partitions of __transaction_state (fixed)")
    transaction_state_log_segment_bytes: int = prop(104857600, "segment size of __transaction_state")
    transaction_state_log_replication_factor: int = prop(3, "accepted; one node keeps one replica")
    transaction_state_log_min_isr: int = prop(2, "accepted; one node is its own in-sync replica")
    # anything else given (kept, so a server.properties written for Kafka loads)
    extra: dict[str, str] = field(default_factory=dict)
    # the Kafka names given explicitly (file, --set, flags): DescribeConfigs reports the others as defaults
    explicit: builtins.set[str] = field(default_factory=builtins.set)  # (`set` is a method here)

    @property
    def data_dir(self) -> Path:
        return Path(self.log_dirs.split(",")[0])

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60_000

    def set(self, name: str, value: str) -> None:
        """Set one property by its Kafka name (`group.initial.rebalance.delay.ms`) from a string."""
        name = name.strip()
        value = value.strip()
        self.explicit.add(name)
        if name in ("listeners", "advertised.listeners"):
            host, port = _parse_listener(value)  # the first listener's (--host/--port still apply)
            if name == "listeners":
                self.host, self.port, self.listeners = host, port, value
            else:
                self.advertised_host, self.advertised_port, self.advertised_listeners = host, port, value
            return
        attr = _ALIASES.get(name, name.replace(".", "_").replace("-", "_"))
        if attr in ("extra", "explicit") or attr not in _FIELD_TYPES:
            self.extra[name] = value
            return
        setattr(self, attr, _parse(name, value, _FIELD_TYPES[attr]))

    def update(self, values: dict[str, str]) -> None:
        for name, value in values.items():
            self.set(name, value)

    def load_properties(self, path: str | Path) -> None:
        """Read a Java-style `server.properties` file."""
        for lineno, raw in enumerate(Path(path).read_text().splitlines(), 1):
            line = raw.strip()
            if not line or line[0] in "#!":
                continue
            sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
            if sep < 0:
                raise ConfigError(f"{path}:{lineno}: expected name=value, got {raw!r}")
            self.set(line[:sep], line[sep + 1 :])

    def to_properties(self) -> dict[str, Any]:
        """Every property by its Kafka name, defaults included."""
        out: dict[str, Any] = {}
        for name, p in PROPERTIES.items():
            out[name] = getattr(self, p.attr)
        out.update(self.extra)
        return out

    def explicit_properties(self) -> dict[str, Any]:
        """Only the properties that were given (their effective values); the rest are Kafka's defaults."""
        props = self.to_properties()
        return {name: props[name] for name in self.explicit if name in props}


_ALIASES = {"broker.id": "node_id", "node.id": "node_id", "log.dir": "log_dirs"}
_REVERSE_ALIASES = {"node_id": "node.id"}


def _type_hints(cls: type) -> dict[str, Any]:
    """`typing.get_type_hints(cls)` for its plain annotations, each distinct one evaluated once: the ~90
    fields share a dozen (`int`, `str | None`...), and get_type_hints compiles every one (~2 ms a start)."""
    namespace = dict(vars(cls))  # as get_type_hints: the class's names first (`set` is a method here)
    evaluated: dict[str, Any] = {}
    hints: dict[str, Any] = {}
    for name, annotation in cls.__annotations__.items():
        if annotation not in evaluated:
            evaluated[annotation] = eval(annotation, globals(), namespace)
        hints[name] = evaluated[annotation]
    return hints


_FIELD_TYPES: dict[str, Any] = _type_hints(Config)


class Property(NamedTuple):
    """One row of the table: Kafka's name, the `Config` attribute, its type, default and doc (a
    NamedTuple: ~50 µs to define against ~500 µs for a frozen dataclass, at every start)."""

    name: str
    attr: str
    type: Any
    default: Any
    doc: str


PROPERTIES: dict[str, Property] = {
    _REVERSE_ALIASES.get(f.name, f.name.replace("_", ".")): Property(
        _REVERSE_ALIASES.get(f.name, f.name.replace("_", ".")),
        f.name,
        _FIELD_TYPES[f.name],
        f.default,
        f.metadata.get("doc", ""),
    )
    for f in dataclasses.fields(Config)
    if f.name not in ("extra", "explicit")
}


def default(name: str) -> Any:
    """Kafka's default of one broker property, by its Kafka name (`group.max.size`)."""
    try:
        return PROPERTIES[name].default
    except KeyError:
        raise ConfigError(f"no broker property {name!r}") from None


def _parse_listener(value: str) -> tuple[str, int]:
    first = value.split(",")[0]
    if "://" in first:
        first = first.split("://", 1)[1]
    host, _, port = first.rpartition(":")
    if not port.isdigit():
        raise ConfigError(f"listener {value!r} has no port")
    return host or "0.0.0.0", int(port)


def _parse(name: str, value: str, typ: Any) -> Any:
    if isinstance(typ, types.UnionType):
        if value.lower() in ("", "null", "none"):
            return None
        typ = next(t for t in typing.get_args(typ) if t is not type(None))
    try:
        if typ is bool:
            low = value.lower()
            if low in _BOOL_TRUE:
                return True
            if low in _BOOL_FALSE:
                return False
            raise ValueError(value)
        if typ is int:
            return int(value)
        return typ(value)
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not a valid {typ.__name__}") from exc

"""`BrokerConfigs`, the service handlers see for the broker's configuration: the static properties
(file, flags), the dynamic ones an admin set (cluster-wide default and per broker, as Kafka's
KIP-226), kept durably in the data dir's dynamic state and applied over the static ones at start and
on each change, and the cluster's finalized feature levels.

The effective value of a property is this broker's dynamic value, else the cluster default's, else
the static one (Kafka's order). Topic logs follow the new broker defaults at once. GROUP resources'
dynamic configs are kept in the same store (`durable_group_configs`).

As a Kafka 4.4 cluster (eligible leader replicas on, the default of a new cluster), the cluster default
always holds `min.insync.replicas`: Kafka's controller adds it, with the static value, when it is
missing, and refuses to remove it. Here it is the static value until an admin sets it.

`synonyms` gives, for DescribeConfigs, every level that sets a config (KIP-226's synonyms).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import structlog

from kafkito.broker.config import PROPERTIES, Config
from kafkito.broker.durable_group_configs import DurableGroupConfigs
from kafkito.broker.dynamic_configs import refusal
from kafkito.broker.dynamic_state import DEFAULT_SCOPE, DynamicStateStore
from kafkito.broker.feature_updates import FeatureLevels
from kafkito.broker.log.config import LogConfig, broker_defaults
from kafkito.broker.log.errors import InvalidConfig, KafkaStorageError

if TYPE_CHECKING:
    from kafkito.broker.log.manager import LogManager

log = structlog.get_logger("kafkito.config")


# DescribeConfigs' config sources of the broker levels.
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5
MIN_INSYNC_REPLICAS = "min.insync.replicas"
_CLUSTER_MIN_ISR_REMOVAL = "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
# Kafka's names of one kafkito property (KafkaConfig copies node.id and broker.id to each other).
_SAME_PROPERTY = {"broker.id": "node.id", "node.id": "broker.id"}


class DynamicConfigError(Exception):
    """A dynamic broker config change Kafka refuses (INVALID_REQUEST), with Kafka's message."""


@cache
def kafka_default(name: str) -> str | None:
    """The default DescribeConfigs reports for broker config `name`: kafkito's for a property of its
    table, else Kafka's (None: none, or null)."""
    prop = PROPERTIES.get(name)
    if prop is not None:
        return None if prop.default is None else _as_text(prop.default)
    from kafkito.broker.kafka_config_defs import BROKER_CONFIG_DEFS  # the first description loads it

    d = BROKER_CONFIG_DEFS.get(name)
    return None if d is None else d.default


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


class BrokerConfigs:
    """The broker's configuration: static, dynamic (persisted) and the feature levels."""

    __slots__ = ("_logs", "_static", "_static_explicit", "config", "features", "groups", "store")

    def __init__(self, config: Config, logs: LogManager) -> None:
        self.config = config
        self._logs = logs
        self._static = {name: _as_text(v) for name, v in config.to_properties().items()}
        self._static_explicit = set(config.explicit)
        self.store = DynamicStateStore(config.data_dir)
        self.features = FeatureLevels(self.store, config.node_id)
        self.groups = DurableGroupConfigs(self.store)
        if self.store.state.broker_configs:
            self._apply(set())
            log.info("config.dynamic_loaded", configs=self.store.state.broker_configs)

    @property
    def _scope(self) -> str:
        return str(self.config.node_id)

    @property
    def dynamic(self) -> dict[str, str]:
        """This broker's own dynamic configs (DYNAMIC_BROKER_CONFIG)."""
        return dict(self.store.state.broker_configs.get(self._scope, {}))

    def static_value(self, name: str) -> str | None:
        """The value `name` was given at start (file, flags), or None when it was not given."""
        if name not in self._static_explicit:
            name = _SAME_PROPERTY.get(name, "")
            if name not in self._static_explicit:
                return None
        return self._static.get(name, self._static.get("node.id") if name == "broker.id" else None)

    def dynamic_of(self, broker: str) -> dict[str, str]:
        """The dynamic configs set for one broker id."""
        return dict(self.store.state.broker_configs.get(broker, {}))

    @property
    def dynamic_default(self) -> dict[str, str]:
        """The cluster-wide default dynamic configs (DYNAMIC_DEFAULT_BROKER_CONFIG), min.insync.replicas
        always among them (see the module's docstring)."""
        stored = self.store.state.broker_configs.get(DEFAULT_SCOPE, {})
        if MIN_INSYNC_REPLICAS in stored:
            return dict(stored)
        static = self.static_value(MIN_INSYNC_REPLICAS) or kafka_default(MIN_INSYNC_REPLICAS) or "1"
        return {MIN_INSYNC_REPLICAS: static, **stored}

    def names_set(self, broker: str | None) -> set[str]:
        """The names some level above the defaults sets (this broker's dynamic configs, the cluster
        default's, the static ones): every other config is at its default."""
        names = set(self._static_explicit) | set(self.dynamic_default)
        names |= {_SAME_PROPERTY[n] for n in names if n in _SAME_PROPERTY}
        if broker is not None:
            names |= set(self.store.state.broker_configs.get(broker, {}))
        return names

    def synonyms(
        self, names: Sequence[str], first: str, broker: str | None
    ) -> list[tuple[str, str | None, int]]:
        """(name, value, source) of each level that sets one of `names` (a config and the configs that
        stand in for it, in Kafka's order), as Kafka lists them: this broker's dynamic values (none when
        `broker` is None: the cluster default resource), the cluster default's, the static ones, the
        defaults; from the first that names `first` (Kafka drops those before it)."""
        levels: list[tuple[Mapping[str, str], int]] = []
        if broker is not None:
            levels.append((self.store.state.broker_configs.get(broker, {}), DYNAMIC_BROKER_CONFIG))
        levels.append((self.dynamic_default, DYNAMIC_DEFAULT_BROKER_CONFIG))
        out: list[tuple[str, str | None, int]] = []
        for values, source in levels:
            out += [(n, values[n], source) for n in names if n in values]
        for n in names:
            static = self.static_value(n)
            if static is not None:
                out.append((n, static, STATIC_BROKER_CONFIG))
        for n in names:
            default = kafka_default(n)
            if default is not None:
                out.append((n, default, DEFAULT_CONFIG))
        for i, (n, _, _) in enumerate(out):
            if n == first:
                return out[i:]
        return []

    def alter(
        self, scope: str, to_set: Mapping[str, str], to_delete: Iterable[str] = (), *, replace: bool = False,
        validate_only: bool = False,
    ) -> None:  # fmt: skip
        """Set and delete dynamic configs of `scope` ("" or a broker id); `replace` drops the others
        (legacy AlterConfigs). Checked as Kafka checks them, then saved, then applied.

        Raises DynamicConfigError when Kafka would refuse the change, InvalidConfig when it removes the
        cluster's min.insync.replicas, KafkaStorageError when it cannot be saved (nothing changes then).
        """
        message = refusal(to_set, per_broker=scope != DEFAULT_SCOPE)
        if message is not None:
            raise DynamicConfigError(message)
        removes = replace or MIN_INSYNC_REPLICAS in to_delete
        if scope == DEFAULT_SCOPE and removes and MIN_INSYNC_REPLICAS not in to_set:
            raise InvalidConfig(_CLUSTER_MIN_ISR_REMOVAL)
        state = self.store.state
        current = {} if replace else dict(state.broker_configs.get(scope, {}))
        for name in to_delete:
            current.pop(name, None)
        current.update(to_set)
        self._check_log_defaults(scope, current)
        if validate_only:
            return
        before = {k: dict(v) for k, v in state.broker_configs.items()}
        if current:
            state.broker_configs[scope] = current
        else:
            state.broker_configs.pop(scope, None)
        try:
            self.store.save()
        except OSError as exc:  # nothing changed: the client gets KAFKA_STORAGE_ERROR
            state.broker_configs = before
            log.error("config.dynamic_save_failed", path=str(self.store.path), error=str(exc))
            raise KafkaStorageError(f"could not save the dynamic broker configs: {exc}") from exc
        self._apply(set().union(*before.values()) if before else set())
        log.info("config.dynamic_altered", scope=scope or "<default>", configs=current)

    def set_dynamic(self, values: Iterable[tuple[str, str]]) -> None:
        """Set this broker's dynamic configs (SET of IncrementalAlterConfigs)."""
        self.alter(self._scope, dict(values))

    def _effective_dynamic(self) -> dict[str, str]:
        configs = self.store.state.broker_configs
        return {**configs.get(DEFAULT_SCOPE, {}), **configs.get(self._scope, {})}

    def _check_log_defaults(self, scope: str, proposed: Mapping[str, str]) -> None:
        """The topic defaults the change would give must resolve (a bad log.cleanup.policy, ...)."""
        configs = dict(self.store.state.broker_configs)
        configs[scope] = dict(proposed)
        merged = {**self._static, **configs.get(DEFAULT_SCOPE, {}), **configs.get(self._scope, {})}
        try:
            LogConfig.from_properties(None, broker_defaults({k: v for k, v in merged.items() if v != ""}))
        except InvalidConfig as exc:
            raise DynamicConfigError(exc.message) from None

    def _apply(self, previously: set[str]) -> None:
        """Put the effective values on the Config (the dynamic one, else the static one) and hand the
        new broker defaults to the logs."""
        config = self.config
        dynamic = self._effective_dynamic()
        for name in previously | set(dynamic):
            if name in dynamic:
                config.set(name, dynamic[name])
            elif name in self._static and name in PROPERTIES:
                config.set(name, self._static[name])
            else:
                config.extra.pop(name, None)
        config.explicit = self._static_explicit | set(dynamic)
        self._logs.update_broker_config(config.explicit_properties())

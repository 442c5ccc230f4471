"""`BrokerConfigs`, the service handlers see for the broker's configuration: the static properties
(file, flags), the dynamic ones an admin set (cluster-wide default and per broker, as Kafka's
KIP-226), kept durably in the data dir's dynamic state and applied over the static ones at start and
on each change, and the cluster's finalized feature levels.

The effective value of a property is this broker's dynamic value, else the cluster default's, else
the static one (Kafka's order). Topic logs follow the new broker defaults at once. GROUP resources'
dynamic configs are kept in the same store (`durable_group_configs`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


class DynamicConfigError(Exception):
    """A dynamic broker config change Kafka refuses (INVALID_REQUEST), with Kafka's message."""


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
        return self._static.get(name) if name in self._static_explicit else None

    def dynamic_of(self, broker: str) -> dict[str, str]:
        """The dynamic configs set for one broker id."""
        return dict(self.store.state.broker_configs.get(broker, {}))

    @property
    def dynamic_default(self) -> dict[str, str]:
        """The cluster-wide default dynamic configs (DYNAMIC_DEFAULT_BROKER_CONFIG)."""
        return dict(self.store.state.broker_configs.get(DEFAULT_SCOPE, {}))

    def alter(
        self, scope: str, to_set: Mapping[str, str], to_delete: Iterable[str] = (), *, replace: bool = False,
        validate_only: bool = False,
    ) -> None:  # fmt: skip
        """Set and delete dynamic configs of `scope` ("" or a broker id); `replace` drops the others
        (legacy AlterConfigs). Checked as Kafka checks them, then saved, then applied.

        Raises DynamicConfigError when Kafka would refuse the change, KafkaStorageError when it cannot be
        saved (nothing changes then).
        """
        message = refusal(to_set, per_broker=scope != DEFAULT_SCOPE)
        if message is not None:
            raise DynamicConfigError(message)
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

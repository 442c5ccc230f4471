"""IncrementalAlterConfigs (44): SET/DELETE/APPEND/SUBTRACT topic configs; dynamic broker configs
(persisted, `broker/broker_configs.py`); log levels by logger name (BROKER_LOGGER, in memory as in
Kafka); group configs (GROUP resource).

v1 flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Protocol

import structlog

from kafkito.broker.broker_configs import DynamicConfigError
from kafkito.broker.context import RequestContext
from kafkito.broker.coordinator.consumer.group_configs import GroupConfigError
from kafkito.broker.handlers.config_resources import (
    BROKER,
    BROKER_LOGGER,
    GROUP,
    TOPIC,
    InvalidResource,
    check_broker_name,
    resource_result,
    warn_deprecated,
)
from kafkito.broker.log.errors import InvalidConfig
from kafkito.broker.logger_levels import LEVELS, ROOT, VALID_LEVELS

log = structlog.get_logger("kafkito.config")

API_KEY = 44
VERSIONS = (0, 1)

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


class AlterableConfig(Protocol):
    name: str
    config_operation: int
    value: str | None


class AlterConfigsResource(Protocol):
    resource_type: int
    resource_name: str
    configs: Sequence[AlterableConfig]


class IncrementalAlterConfigsRequest(Protocol):
    """The fields of kafka-python's IncrementalAlterConfigsRequest this handler reads."""

    resources: Sequence[AlterConfigsResource]
    validate_only: bool


def _alter_topic(
    ctx: RequestContext, name: str, configs: Sequence[AlterableConfig], validate_only: bool
) -> None:
    topics = ctx.topics
    current = {e.name: e.value for e in topics.describe_config(name)}
    to_set: dict[str, str] = {}
    to_delete: list[str] = []
    for c in configs:
        op = c.config_operation
        if op == SET:
            to_set[c.name] = c.value or ""
        elif op == DELETE:
            to_delete.append(c.name)
        elif op in (APPEND, SUBTRACT):
            to_set[c.name] = _list_op(op, current.get(c.name), c.value)
        else:
            raise InvalidResource(f"unknown config operation {op}")
    topics.alter_config(name, to_set, to_delete, validate_only=validate_only)
    warn_deprecated(name, to_set)


def _list_op(op: int, current: str | None, value: str | None) -> str:
    """APPEND or SUBTRACT `value`'s items to or from a comma-separated list."""
    items = [v for v in (current or "").split(",") if v]
    given = [v for v in (value or "").split(",") if v]
    if op == APPEND:
        return ",".join(items + [v for v in given if v not in items])
    return ",".join(v for v in items if v not in given)


def _alter_broker(
    ctx: RequestContext, name: str, configs: Sequence[AlterableConfig], validate_only: bool
) -> None:
    """Dynamic broker configs of this broker (its id) or of the cluster default (""), as Kafka."""
    check_broker_name(name, ctx.cluster.node_id)
    broker_configs = ctx.configs
    current = broker_configs.config.to_properties()
    to_set: dict[str, str] = {}
    to_delete: list[str] = []
    for c in configs:
        if c.config_operation == SET:
            to_set[c.name] = c.value or ""
        elif c.config_operation == DELETE:
            to_delete.append(c.name)
        elif c.config_operation in (APPEND, SUBTRACT):
            before = current.get(c.name)
            to_set[c.name] = _list_op(c.config_operation, None if before is None else str(before), c.value)
        else:
            raise InvalidResource(f"unknown config operation {c.config_operation}")
    try:
        broker_configs.alter(name, to_set, to_delete, validate_only=validate_only)
    except DynamicConfigError as exc:
        raise InvalidResource(str(exc)) from exc


def _alter_logger(
    ctx: RequestContext, name: str, configs: Sequence[AlterableConfig], validate_only: bool
) -> None:
    """Log levels by logger name (BROKER_LOGGER), checked as Kafka checks them; not persisted."""
    check_broker_name(name, ctx.cluster.node_id)
    for c in configs:
        op = c.config_operation
        if op in (APPEND, SUBTRACT):
            kind = "APPEND" if op == APPEND else "SUBTRACT"
            raise InvalidResource(f"{kind} operation is not allowed for the BROKER_LOGGER resource")
        if op not in (SET, DELETE):
            message = f"Unknown operation type {op} is not allowed for the BROKER_LOGGER resource"
            raise InvalidResource(message)
        if not LEVELS.exists(c.name):
            raise InvalidConfig(f"Logger {c.name} does not exist!")
        if op == SET and c.value not in VALID_LEVELS:
            raise InvalidConfig(
                f"Cannot set the log level of {c.name} to {c.value} as it is not a supported log level. "
                f"Valid log levels are {', '.join(VALID_LEVELS)}"
            )
        if op == DELETE and c.name == ROOT:
            raise InvalidResource(f"Removing the log level of the {ROOT} logger is not allowed")
    if validate_only:
        return
    for c in configs:
        if c.config_operation == SET:
            LEVELS.set(c.name, c.value or "")
        else:
            LEVELS.delete(c.name)
    log.info("logger.levels_altered", levels={c.name: c.value for c in configs})


def _alter_group(
    ctx: RequestContext, name: str, configs: Sequence[AlterableConfig], validate_only: bool
) -> None:
    """A group's configs, consumer.* and share.* (SET and DELETE; they are not lists)."""
    to_set = {c.name: c.value or "" for c in configs if c.config_operation == SET}
    to_delete = [c.name for c in configs if c.config_operation == DELETE]
    try:
        if len(to_set) + len(to_delete) != len(configs):
            raise GroupConfigError("Only SET and DELETE apply to group configs.")
        ctx.configs.groups.alter(ctx.groups.all_group_configs, name, to_set, to_delete, validate_only)
    except GroupConfigError as exc:
        raise InvalidConfig(exc.message) from exc


def _alter(ctx: RequestContext, resource: AlterConfigsResource, validate_only: bool) -> None:
    if resource.resource_type == TOPIC:
        _alter_topic(ctx, resource.resource_name, resource.configs, validate_only)
    elif resource.resource_type == BROKER:
        _alter_broker(ctx, resource.resource_name, resource.configs, validate_only)
    elif resource.resource_type == BROKER_LOGGER:
        _alter_logger(ctx, resource.resource_name, resource.configs, validate_only)
    elif resource.resource_type == GROUP:
        _alter_group(ctx, resource.resource_name, resource.configs, validate_only)
    else:
        raise InvalidResource(f"unsupported resource type {resource.resource_type}")


def handle(ctx: RequestContext, request: IncrementalAlterConfigsRequest) -> Any:
    validate_only = bool(request.validate_only)
    return ctx.response(
        throttle_time_ms=0,
        responses=[resource_result(r, partial(_alter, ctx, r, validate_only))[0] for r in request.resources],
    )

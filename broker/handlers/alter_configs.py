"""AlterConfigs (33, legacy): the given configs replace all of a topic's overrides, or all of the
dynamic configs of a broker (its id) or of the cluster default (""), checked as Kafka checks them.
BROKER_LOGGER is IncrementalAlterConfigs' only, as in Kafka.

v1 no change; v2 flexible.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Protocol

from kafkito.broker.broker_configs import DynamicConfigError
from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.config_resources import (
    BROKER,
    TOPIC,
    InvalidResource,
    check_broker_name,
    resource_result,
    warn_deprecated,
)

API_KEY = 33
VERSIONS = (0, 2)


class AlterableConfig(Protocol):
    name: str
    value: str | None


class AlterConfigsResource(Protocol):
    resource_type: int
    resource_name: str
    configs: Sequence[AlterableConfig]


class AlterConfigsRequest(Protocol):
    """The fields of kafka-python's AlterConfigsRequest this handler reads."""

    resources: Sequence[AlterConfigsResource]
    validate_only: bool


def _alter(ctx: RequestContext, resource: AlterConfigsResource, validate_only: bool) -> None:
    configs = {c.name: c.value or "" for c in resource.configs}
    if resource.resource_type == BROKER:
        check_broker_name(resource.resource_name, ctx.cluster.node_id)
        try:
            ctx.configs.alter(resource.resource_name, configs, replace=True, validate_only=validate_only)
        except DynamicConfigError as exc:
            raise InvalidResource(str(exc)) from exc
        return
    if resource.resource_type != TOPIC:
        raise InvalidResource(f"unsupported resource type {resource.resource_type}")
    ctx.topics.replace_config(resource.resource_name, configs, validate_only=validate_only)
    warn_deprecated(resource.resource_name, configs)


def handle(ctx: RequestContext, request: AlterConfigsRequest) -> Any:
    validate_only = bool(request.validate_only)
    return ctx.response(
        throttle_time_ms=0,
        responses=[resource_result(r, partial(_alter, ctx, r, validate_only))[0] for r in request.resources],
    )

"""ListConfigResources (74): the resources that have configs, by type (KIP-1142; v0 was
ListClientMetricsResources).

v0 lists client-metrics resources only; v1 the types asked for, or with none asked every type Kafka
lists: TOPIC (every topic, internal ones included), BROKER and BROKER_LOGGER (each live node's id),
CLIENT_METRICS (kafkito keeps no client-metrics configs: none) and GROUP (the groups with dynamic
configs). A type outside those fails the request with UNSUPPORTED_VERSION, as Kafka answers it.
Needs DESCRIBE_CONFIGS on the cluster (api_checks).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.protocol.errors import ErrorCode

API_KEY = 74
VERSIONS = (0, 1)

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
SUPPORTED = {0: (CLIENT_METRICS,), 1: (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)}


class ListConfigResourcesRequest(Protocol):
    resource_types: Sequence[int]  # v1+


def _names(ctx: RequestContext, resource_type: int) -> list[str]:
    if resource_type == GROUP:
        return [group for group, values in ctx.configs.groups.saved.items() if values]
    if resource_type in (BROKER, BROKER_LOGGER):
        return [str(node_id) for node_id in ctx.cluster.live_nodes()]
    if resource_type == TOPIC:
        return [info.name for info in ctx.topics.all()]
    return []  # CLIENT_METRICS


def handle(ctx: RequestContext, request: ListConfigResourcesRequest) -> Any:
    supported = SUPPORTED[min(ctx.version, 1)]
    wanted = list(request.resource_types) if ctx.version >= 1 else []
    if not wanted:
        wanted = list(supported)
    if any(t not in supported for t in wanted):
        return ctx.response(throttle_time_ms=0, error_code=ErrorCode.UNSUPPORTED_VERSION, config_resources=[])
    resources = [
        {"resource_name": name, "resource_type": t}
        for t in (GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC)
        if t in wanted
        for name in _names(ctx, t)
    ]
    return ctx.response(throttle_time_ms=0, error_code=0, config_resources=resources)

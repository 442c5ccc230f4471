"""StreamsGroupTopologyDescriptionUpdate (93, KIP-1331): a Streams client pushes its topology description.

Kafka stores descriptions through the plugin `group.streams.topology.description.plugin.class` names,
and a broker has none by default; kafkito has none at all, so every push is answered as such a Kafka
4.4 broker answers it: UNSUPPORTED_VERSION with the coordinator's message, before any member or group
check (no heartbeat asks for a push either: TopologyDescriptionRequired is always false). With
`streams.version` at 0, UNSUPPORTED_VERSION with no message.
"""

from __future__ import annotations

from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.handlers.streams_group_heartbeat import streams_groups_off
from kafkito.protocol.errors import ErrorCode

API_KEY = 93
VERSIONS = (0, 0)
NO_PLUGIN = "The broker has no streams group topology description plugin configured."


class StreamsGroupTopologyDescriptionUpdateRequestBody(Protocol):
    group_id: str
    member_id: str
    topology_epoch: int


def handle(ctx: RequestContext, request: StreamsGroupTopologyDescriptionUpdateRequestBody) -> Any:
    message = None if streams_groups_off(ctx) else NO_PLUGIN
    return ctx.response(throttle_time_ms=0, error_code=ErrorCode.UNSUPPORTED_VERSION, error_message=message)

"""What a handler is given for one request: the broker, the parsed header and the peer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkito.protocol.codec import RequestHeader, build_response

if TYPE_CHECKING:
    from kafkito.broker.app import Broker
    from kafkito.broker.coordinator import GroupCoordinator


@dataclass(slots=True)
class RequestContext:
    broker: Broker
    header: RequestHeader
    peer_host: str

    @property
    def groups(self) -> GroupCoordinator:
        """The group coordinator (group handlers use this, not `broker.coordinator`)."""
        return self.broker.coordinator

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str:
        return self.header.client_id or ""

    def response(self, **fields: Any) -> Any:
        """Build this request's response (same API and version) from plain values."""
        return build_response(self.header.api_key, self.header.api_version, **fields)

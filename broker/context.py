"""What a handler is given for one request: the broker's narrow services, the parsed header and the peer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkito.protocol.codec import RequestHeader, build_response

if TYPE_CHECKING:
    from kafkito.broker.app import Broker
    from kafkito.broker.coordinator import GroupCoordinator
    from kafkito.broker.producer_ids import ProducerIdManager
    from kafkito.broker.services import BrokerConfigs, Cluster, Fetches, Services, Topics


@dataclass(slots=True)
class RequestContext:
    """Built per request (three slots: cheap); the services themselves are built once by the Broker."""

    services: Services
    header: RequestHeader
    peer_host: str

    @property
    def cluster(self) -> Cluster:
        return self.services.cluster

    @property
    def topics(self) -> Topics:
        return self.services.topics

    @property
    def fetches(self) -> Fetches:
        return self.services.fetches

    @property
    def configs(self) -> BrokerConfigs:
        return self.services.configs

    @property
    def producer_ids(self) -> ProducerIdManager:
        return self.services.producer_ids

    @property
    def groups(self) -> GroupCoordinator:
        """The group coordinator (the group handlers' one service)."""
        return self.services.groups

    @property
    def broker(self) -> Broker:
        """Transitional, for group handlers not yet on `groups`/`topics`/`cluster`; goes away with them."""
        return self.services.broker

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str:
        return self.header.client_id or ""

    def response(self, **fields: Any) -> Any:
        """Build this request's response (same API and version) from plain values."""
        return build_response(self.header.api_key, self.header.api_version, **fields)

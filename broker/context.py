"""What a handler is given for one request: the broker's narrow services, the parsed header and the peer."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

from kafkito.protocol.codec import RequestHeader, build_response

if TYPE_CHECKING:
    from kafkito.broker.coordinator import GroupCoordinator
    from kafkito.broker.producer_ids import ProducerIdManager
    from kafkito.broker.security.authorizer import Authorizer
    from kafkito.broker.security.store import SecurityStore
    from kafkito.broker.services import BrokerConfigs, Cluster, Fetches, Services, Topics
    from kafkito.broker.share.manager import ShareManager
    from kafkito.broker.transactions import TransactionCoordinator


@dataclass(slots=True)
class RequestContext:
    """One request's header and peer host, and the services of the broker that received it.

    The services are class attributes of a subclass made once per broker by `bind`: a context built per
    request then stores two references, and `ctx.topics` is a plain attribute read, not a property call
    (dispatch runs for every request; see `broker/services.py` for what each service offers).
    """

    header: RequestHeader
    peer_host: str

    cluster: ClassVar[Cluster]
    topics: ClassVar[Topics]
    fetches: ClassVar[Fetches]
    configs: ClassVar[BrokerConfigs]
    producer_ids: ClassVar[ProducerIdManager]
    groups: ClassVar[GroupCoordinator]
    transactions: ClassVar[TransactionCoordinator]
    security: ClassVar[SecurityStore]
    share: ClassVar[ShareManager]
    authorizer: ClassVar[Authorizer | None]  # None: no ACL enforcement (the default)
    # The connection's: the listener it came in on (None: the first) and its authenticated principal
    # (Kafka's `User:ANONYMOUS` on PLAINTEXT), for the authorizer. Set by `for_listener`/`for_principal`.
    listener: ClassVar[str | None] = None
    principal: ClassVar[str] = "User:ANONYMOUS"
    token_authenticated: ClassVar[bool] = False  # authenticated with a delegation token (SCRAM tokenauth)

    @staticmethod
    def bind(services: Services) -> type[RequestContext]:
        """The RequestContext class whose instances see `services` (call once per broker)."""
        attributes = {f.name: getattr(services, f.name) for f in dataclasses.fields(services)}
        return cast(
            type[RequestContext],
            type("BoundRequestContext", (RequestContext,), {"__slots__": (), **attributes}),
        )

    @classmethod
    def for_listener(cls, listener: str) -> type[RequestContext]:
        """This context class, for the connections of one listener (once per listener at start)."""
        return type(f"{cls.__name__}_{listener}", (cls,), {"__slots__": (), "listener": listener})

    @classmethod
    def for_principal(cls, principal: str, token_authenticated: bool = False) -> type[RequestContext]:
        """This context class, for one authenticated connection (once, when it authenticates)."""
        attributes = {"__slots__": (), "principal": principal, "token_authenticated": token_authenticated}
        return type("AuthenticatedRequestContext", (cls,), attributes)

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str:
        return self.header.client_id or ""

    def response(self, **fields: Any) -> Any:
        """Build this request's response (same API and version) from plain values."""
        return build_response(self.header.api_key, self.header.api_version, **fields)

"""Message classes of the delegation token APIs kafka-python lacks: CreateDelegationToken (38),
RenewDelegationToken (39), ExpireDelegationToken (40) and DescribeDelegationToken (41), built by
kafka-python's own machinery from Kafka 4.4's JSON schemas in `protocol/schemas/`. The codec imports
this module on the first request of any of them (MESSAGES)."""

from __future__ import annotations

from kafka.protocol.api_message import ApiMessage

_SCHEMAS = "kafkito.protocol.schemas"


class CreateDelegationTokenRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class CreateDelegationTokenResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class RenewDelegationTokenRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class RenewDelegationTokenResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class ExpireDelegationTokenRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class ExpireDelegationTokenResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class DescribeDelegationTokenRequest(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


class DescribeDelegationTokenResponse(ApiMessage, load_json=_SCHEMAS):  # type: ignore[call-arg,misc]
    pass


__all__ = [
    "CreateDelegationTokenRequest",
    "CreateDelegationTokenResponse",
    "DescribeDelegationTokenRequest",
    "DescribeDelegationTokenResponse",
    "ExpireDelegationTokenRequest",
    "ExpireDelegationTokenResponse",
    "RenewDelegationTokenRequest",
    "RenewDelegationTokenResponse",
]

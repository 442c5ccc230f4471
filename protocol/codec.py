"""Codec facade over kafka-python's `kafka.protocol`: request decoding and response building/encoding."""

from __future__ import annotations

import importlib
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kafkito.protocol import kafka_python  # noqa: F401  (kafka-python's codec without its client __init__)
from kafkito.protocol.nullability import null_check
from kafkito.protocol.primitives import WireFormatError, skip_tagged_fields

_HEADER_FIXED = struct.Struct(">hhih")


class MalformedRequest(Exception):
    """A frame that cannot be parsed as a request."""


# api_key -> (kafka.protocol module, name stem of its `<stem>Request`/`<stem>Response` classes).
# kafka-python builds every message class from its JSON schema when its module loads (~50 ms for all of
# them), so a class is loaded when its API is first used, not at start-up. Importing one module runs its
# package's __init__ (all of kafka.protocol.admin for one admin API): paid once, on that API's first request.
MESSAGES: dict[int, tuple[str, str]] = {
    0: ("kafka.protocol.producer.produce", "Produce"),
    1: ("kafka.protocol.consumer.fetch", "Fetch"),
    2: ("kafka.protocol.consumer.offsets", "ListOffsets"),
    3: ("kafka.protocol.metadata.metadata", "Metadata"),
    8: ("kafka.protocol.consumer.group", "OffsetCommit"),
    9: ("kafka.protocol.consumer.group", "OffsetFetch"),
    10: ("kafka.protocol.metadata.find_coordinator", "FindCoordinator"),
    11: ("kafka.protocol.consumer.group", "JoinGroup"),
    12: ("kafka.protocol.consumer.group", "Heartbeat"),
    13: ("kafka.protocol.consumer.group", "LeaveGroup"),
    14: ("kafka.protocol.consumer.group", "SyncGroup"),
    15: ("kafka.protocol.admin.groups", "DescribeGroups"),
    16: ("kafka.protocol.admin.groups", "ListGroups"),
    17: ("kafka.protocol.sasl", "SaslHandshake"),
    18: ("kafkito.protocol.api_versions", "ApiVersions"),
    19: ("kafka.protocol.admin.topics", "CreateTopics"),
    20: ("kafka.protocol.admin.topics", "DeleteTopics"),
    21: ("kafka.protocol.admin.topics", "DeleteRecords"),
    22: ("kafka.protocol.producer.transaction", "InitProducerId"),
    23: ("kafka.protocol.consumer.offsets", "OffsetForLeaderEpoch"),
    24: ("kafka.protocol.producer.transaction", "AddPartitionsToTxn"),
    25: ("kafka.protocol.producer.transaction", "AddOffsetsToTxn"),
    26: ("kafka.protocol.producer.transaction", "EndTxn"),
    27: ("kafka.protocol.producer.transaction", "WriteTxnMarkers"),
    28: ("kafkito.protocol.group_offsets", "TxnOffsetCommit"),
    29: ("kafka.protocol.admin.acl", "DescribeAcls"),
    30: ("kafka.protocol.admin.acl", "CreateAcls"),
    31: ("kafka.protocol.admin.acl", "DeleteAcls"),
    32: ("kafka.protocol.admin.configs", "DescribeConfigs"),
    33: ("kafka.protocol.admin.configs", "AlterConfigs"),
    34: ("kafka.protocol.admin.cluster", "AlterReplicaLogDirs"),
    35: ("kafka.protocol.admin.cluster", "DescribeLogDirs"),
    36: ("kafka.protocol.sasl", "SaslAuthenticate"),
    37: ("kafka.protocol.admin.topics", "CreatePartitions"),
    38: ("kafkito.protocol.delegation_tokens", "CreateDelegationToken"),
    39: ("kafkito.protocol.delegation_tokens", "RenewDelegationToken"),
    40: ("kafkito.protocol.delegation_tokens", "ExpireDelegationToken"),
    41: ("kafkito.protocol.delegation_tokens", "DescribeDelegationToken"),
    42: ("kafkito.protocol.group_offsets", "DeleteGroups"),
    43: ("kafka.protocol.admin.topics", "ElectLeaders"),
    44: ("kafka.protocol.admin.configs", "IncrementalAlterConfigs"),
    45: ("kafka.protocol.admin.topics", "AlterPartitionReassignments"),
    46: ("kafka.protocol.admin.topics", "ListPartitionReassignments"),
    47: ("kafka.protocol.consumer.group", "OffsetDelete"),
    48: ("kafka.protocol.admin.client_quotas", "DescribeClientQuotas"),
    49: ("kafka.protocol.admin.client_quotas", "AlterClientQuotas"),
    50: ("kafka.protocol.admin.users", "DescribeUserScramCredentials"),
    51: ("kafka.protocol.admin.users", "AlterUserScramCredentials"),
    55: ("kafka.protocol.admin.cluster", "DescribeQuorum"),
    57: ("kafka.protocol.admin.cluster", "UpdateFeatures"),
    60: ("kafka.protocol.admin.cluster", "DescribeCluster"),
    61: ("kafka.protocol.admin.transactions", "DescribeProducers"),
    65: ("kafka.protocol.admin.transactions", "DescribeTransactions"),
    66: ("kafka.protocol.admin.transactions", "ListTransactions"),
    68: ("kafkito.protocol.consumer_groups", "ConsumerGroupHeartbeat"),
    69: ("kafkito.protocol.consumer_groups", "ConsumerGroupDescribe"),
    71: ("kafkito.protocol.telemetry", "GetTelemetrySubscriptions"),
    72: ("kafkito.protocol.telemetry", "PushTelemetry"),
    74: ("kafka.protocol.admin.configs", "ListConfigResources"),
    75: ("kafka.protocol.admin.topics", "DescribeTopicPartitions"),
    76: ("kafkito.protocol.share_groups", "ShareGroupHeartbeat"),
    77: ("kafkito.protocol.share_groups", "ShareGroupDescribe"),
    78: ("kafkito.protocol.share_fetch", "ShareFetch"),
    79: ("kafkito.protocol.share_fetch", "ShareAcknowledge"),
    90: ("kafkito.protocol.share_groups", "DescribeShareGroupOffsets"),
    91: ("kafkito.protocol.share_groups", "AlterShareGroupOffsets"),
    88: ("kafkito.protocol.streams_groups", "StreamsGroupHeartbeat"),
    89: ("kafkito.protocol.streams_groups", "StreamsGroupDescribe"),
    92: ("kafkito.protocol.share_groups", "DeleteShareGroupOffsets"),
    93: ("kafkito.protocol.streams_groups", "StreamsGroupTopologyDescriptionUpdate"),
}


class _MessageClasses(Mapping[int, Any]):
    """api_key -> kafka-python request (or response) class, its module imported on first lookup."""

    __slots__ = ("_loaded", "_suffix")

    def __init__(self, suffix: str) -> None:
        self._suffix = suffix
        self._loaded: dict[int, Any] = {}

    def __getitem__(self, api_key: int) -> Any:
        cls = self._loaded.get(api_key)
        if cls is None:
            from kafkito.protocol.limits import install

            install()  # Kafka's limits on declared counts, before any decoder is compiled
            module, stem = MESSAGES[api_key]
            cls = self._loaded[api_key] = getattr(importlib.import_module(module), stem + self._suffix)
        return cls

    def __contains__(self, api_key: object) -> bool:
        return api_key in MESSAGES

    def __iter__(self) -> Iterator[int]:
        return iter(MESSAGES)

    def __len__(self) -> int:
        return len(MESSAGES)


REQUESTS: Mapping[int, Any] = _MessageClasses("Request")
RESPONSES: Mapping[int, Any] = _MessageClasses("Response")
_versioned: dict[tuple[int, int, bool], Any] = {}
_flexible: dict[tuple[int, int], bool] = {}


def request_class(api_key: int, version: int) -> Any:
    """The kafka-python request class of one version (cached)."""
    key = (api_key, version, True)
    cls = _versioned.get(key)
    if cls is None:
        cls = _versioned[key] = REQUESTS[api_key][version]
    return cls


def response_class(api_key: int, version: int) -> Any:
    """The kafka-python response class of one version (cached)."""
    key = (api_key, version, False)
    cls = _versioned.get(key)
    if cls is None:
        cls = _versioned[key] = RESPONSES[api_key][version]
    return cls


def is_flexible(api_key: int, version: int) -> bool:
    flexible = _flexible.get((api_key, version))
    if flexible is None:
        flexible = _flexible[api_key, version] = bool(REQUESTS[api_key].flexible_version_q(version))
    return flexible


@dataclass(slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_offset: int


def parse_request_header(frame: bytes, flexible: bool) -> RequestHeader:
    """Parse request header v1 (or v2 when `flexible`), skipping unknown tagged fields."""
    if len(frame) < 10:
        raise MalformedRequest(f"request frame of {len(frame)} bytes is shorter than a header")
    api_key, api_version, correlation_id, id_len = _HEADER_FIXED.unpack_from(frame, 0)
    pos = 10
    client_id: str | None = None
    if id_len >= 0:
        if pos + id_len > len(frame):
            raise MalformedRequest("client id runs past the end of the frame")
        try:
            client_id = frame[pos : pos + id_len].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedRequest("client id is not UTF-8") from exc
        pos += id_len
    elif id_len != -1:
        raise MalformedRequest(f"invalid client id length {id_len}")
    if flexible:
        try:
            if frame[pos]:
                pos = skip_tagged_fields(frame, pos)
            else:  # no tagged fields, the usual case: one byte
                pos += 1
        except (IndexError, WireFormatError) as exc:
            raise MalformedRequest(f"request header: {exc.__class__.__name__}: {exc}") from None
    return RequestHeader(api_key, api_version, correlation_id, client_id, pos)


def client_id_of(frame: bytes) -> str:
    """The client id in a request frame's header ("" when null or unreadable), without parsing the rest."""
    try:
        (id_len,) = struct.unpack_from(">h", frame, 8)
        return frame[10 : 10 + id_len].decode("utf-8", "replace") if id_len > 0 else ""
    except struct.error:
        return ""


def decode_request(frame: bytes, header: RequestHeader) -> Any:
    """Decode the body of a request whose header is already parsed."""
    cls = request_class(header.api_key, header.api_version)
    try:
        request = cls.decode(memoryview(frame)[header.body_offset :], version=header.api_version)
    except (
        Exception
    ) as exc:  # kafka-python raises IndexError, ValueError, struct.error, UnicodeDecodeError...
        raise MalformedRequest(f"cannot decode {cls.__name__}: {exc.__class__.__name__}: {exc}") from exc
    check = null_check(cls, header.api_version)
    if check is not None and (path := check(request)) is not None:
        raise MalformedRequest(f"{cls.__name__}: non-nullable field {path} was serialized as null")
    return request


def _convert(field: Any, value: Any) -> Any:
    if value is None:
        return None
    if field.is_struct_array():
        cls = field.data_class
        return [cls(**_convert_fields(field, v)) if isinstance(v, dict) else v for v in value]
    if field.is_struct() and isinstance(value, dict):
        return field.data_class(**_convert_fields(field, value))
    return value


def _convert_fields(struct_field: Any, values: dict[str, Any]) -> dict[str, Any]:
    fields = struct_field.fields
    out: dict[str, Any] = {}
    for name, value in values.items():
        field = fields.get(name)
        if field is None:
            raise ValueError(f"{struct_field.name} has no field {name!r}")
        out[name] = _convert(field, value) if (field.is_struct() or field.is_struct_array()) else value
    return out


def build_request(api_key: int, version: int, **fields: Any) -> Any:
    """Build a request of one version from plain values; nested structs may be given as dicts (clients)."""
    cls = request_class(api_key, version)
    return cls(**_convert_fields(cls._struct, fields))


def build_response(api_key: int, version: int, **fields: Any) -> Any:
    """Build a response of one version from plain values; nested structs may be given as dicts."""
    cls = response_class(api_key, version)
    return cls(**_convert_fields(cls._struct, fields))


def encode_response(response: Any, correlation_id: int) -> bytes:
    """Encode a response (its version already set) with its header, size-prefixed."""
    response.with_header(correlation_id=correlation_id)
    return bytes(response.encode(header=True, framed=True))


_RESPONSE_HEADER_V0 = struct.Struct(">ii")
_RESPONSE_HEADER_V1 = struct.Struct(">iiB")


def response_header_v1(api_key: int, version: int) -> bool:
    """Flexible versions take response header v1 (an empty tagged-field section), except ApiVersions."""
    return api_key != 18 and is_flexible(api_key, version)


def frame_body(body: bytes, correlation_id: int, header_v1: bool) -> bytes:
    """Prefix an already encoded response body (a hand-written hot-path encoder) with size and header."""
    if header_v1:
        return _RESPONSE_HEADER_V1.pack(len(body) + 5, correlation_id, 0) + body
    return _RESPONSE_HEADER_V0.pack(len(body) + 4, correlation_id) + body


def frame_response_body(body: bytes, correlation_id: int, api_key: int, version: int) -> bytes:
    """`frame_body` for a response of this API and version."""
    return frame_body(body, correlation_id, response_header_v1(api_key, version))

"""Client quotas as Kafka stores them: entities, the quota keys each accepts, alterations, describe filters.

An entity is a set of (type, name) pairs: `user`, `client-id` (alone or together) or `ip` (alone); a
null name is the type's default entity. User and client-id entities take `producer_byte_rate`,
`consumer_byte_rate` (whole numbers), `request_percentage` and `controller_mutation_rate`; ip entities
take `connection_creation_rate` (a whole number). Every value must be above 0. Quotas are stored and
listed here; nothing enforces them.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Any

from kafkito.broker.security.errors import SecurityError, invalid_request
from kafkito.protocol.errors import ErrorCode

USER, CLIENT_ID, IP = "user", "client-id", "ip"
ENTITY_TYPES = frozenset({USER, CLIENT_ID, IP})

QuotaEntity = tuple[tuple[str, str | None], ...]  # (type, name) pairs sorted by type; name None: default
Record = dict[str, Any]


class ValueType(Enum):
    DOUBLE = "double"
    INT = "int"
    LONG = "long"


USER_AND_CLIENT_KEYS: dict[str, ValueType] = {
    "producer_byte_rate": ValueType.LONG,
    "consumer_byte_rate": ValueType.LONG,
    "request_percentage": ValueType.DOUBLE,
    "controller_mutation_rate": ValueType.DOUBLE,
}
IP_KEYS: dict[str, ValueType] = {"connection_creation_rate": ValueType.INT}
_LIMITS = {ValueType.INT: (1 << 31) - 1, ValueType.LONG: (1 << 63) - 1}


class MatchType(IntEnum):
    """How a DescribeClientQuotas filter component matches an entity type's name."""

    EXACT = 0  # the name given
    DEFAULT = 1  # the default entity (a null name)
    SPECIFIED = 2  # any name, the default included


@dataclass(frozen=True, slots=True)
class QuotaOp:
    """One AlterClientQuotas operation: set `key` to `value`, or remove it."""

    key: str
    value: float
    remove: bool = False


@dataclass(frozen=True, slots=True)
class FilterComponent:
    entity_type: str
    match_type: int
    match: str | None


def is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def quota_entity(pairs: Iterable[tuple[str, str | None]]) -> QuotaEntity:
    """The entity the (type, name) pairs of a request name; SecurityError if they name none."""
    seen: dict[str, str | None] = {}
    for entity_type, name in pairs:
        if entity_type in seen:
            raise invalid_request(f"Invalid client quota entity, duplicate entity entry {entity_type}")
        if entity_type not in ENTITY_TYPES:
            raise invalid_request(f"Unhandled client quota entity type: {entity_type}")
        if name == "":
            raise invalid_request(f"Empty {entity_type} not supported")
        seen[entity_type] = name
    if not seen:
        raise invalid_request("Invalid empty client quota entity")
    return tuple(sorted(seen.items()))


def keys_for(entity: QuotaEntity, ip_valid: Callable[[str], bool]) -> dict[str, ValueType]:
    """The quota keys an entity accepts; SecurityError for an ip combined with others or unresolvable."""
    types = dict(entity)
    if IP not in types:
        return USER_AND_CLIENT_KEYS
    if len(types) > 1:
        raise invalid_request(
            "Invalid quota entity combination, IP entity should not be combined with User or ClientId"
        )
    ip = types[IP]
    if ip is not None and not ip_valid(ip):
        raise invalid_request(f"{ip} is not a valid IP or resolvable host.")
    return IP_KEYS


def check_value(keys: dict[str, ValueType], key: str, value: float) -> None:
    value_type = keys.get(key)
    if value_type is None:
        raise invalid_request(f"Invalid configuration key {key}")
    if math.isnan(value) or value <= 0.0:
        raise invalid_request(f"Quota {key} must be greater than 0")
    if value_type is ValueType.DOUBLE:
        return
    if value > _LIMITS[value_type]:
        raise invalid_request(f"Proposed value for {key} is too large for {value_type.name}.")
    if abs(value % 1.0) > 1e-6:
        raise invalid_request(f"{key} cannot be a fractional value.")


def quota_record(entity: QuotaEntity, key: str, value: float | None) -> Record:
    """A ClientQuotaRecord: set `key` to `value`, or remove it when `value` is None."""
    return {
        "type": "ClientQuotaRecord",
        "entity": [list(pair) for pair in entity],
        "key": key,
        "value": value,
        "remove": value is None,
    }


class ClientQuotas:
    """The quotas set per entity, changed by replaying ClientQuotaRecords."""

    def __init__(self) -> None:
        self.by_entity: dict[QuotaEntity, dict[str, float]] = {}

    def replay(self, record: Record) -> None:
        entity: QuotaEntity = tuple(sorted((t, n) for t, n in record["entity"]))
        if record["remove"]:
            values = self.by_entity.get(entity, {})
            values.pop(record["key"], None)
            if not values:
                self.by_entity.pop(entity, None)
        else:
            self.by_entity.setdefault(entity, {})[record["key"]] = float(record["value"])

    def plan(
        self, entity: QuotaEntity, ops: Sequence[QuotaOp], ip_valid: Callable[[str], bool]
    ) -> list[Record]:
        """The records one entity's alteration writes (only changed values); SecurityError if refused."""
        keys = keys_for(entity, ip_valid)
        wanted: dict[str, float | None] = {}
        for op in ops:
            if op.key in wanted:
                raise invalid_request(f"Duplicate quota key {op.key} not updating quota for this entity")
            wanted[op.key] = None if op.remove else op.value
        current = self.by_entity.get(entity, {})
        records: list[Record] = []
        for key, value in wanted.items():
            if value is None:
                if key in current:
                    records.append(quota_record(entity, key, None))
                continue
            check_value(keys, key, value)
            if current.get(key) != value:
                records.append(quota_record(entity, key, value))
        return records

    def describe(
        self, components: Sequence[FilterComponent], strict: bool
    ) -> list[tuple[QuotaEntity, dict[str, float]]]:
        """The entities a DescribeClientQuotas filter matches, with their quotas."""
        exact, specified = _parse_filter(components)
        out = []
        for entity, values in self.by_entity.items():
            names = dict(entity)
            if strict and len(names) != len(exact) + len(specified):
                continue
            if all(t in names and names[t] == n for t, n in exact.items()) and specified <= names.keys():
                out.append((entity, dict(values)))
        return sorted(out, key=lambda e: [(t, n or "") for t, n in e[0]])


def _parse_filter(components: Sequence[FilterComponent]) -> tuple[dict[str, str | None], set[str]]:
    """(entity type -> the name it must have, entity types that must be present) of a filter."""
    exact: dict[str, str | None] = {}
    specified: set[str] = set()
    for c in components:
        if not c.entity_type:
            raise invalid_request("Invalid empty entity type.")
        if c.entity_type in exact or c.entity_type in specified:
            raise invalid_request(f"Entity type {c.entity_type} cannot appear more than once in the filter.")
        if c.entity_type not in ENTITY_TYPES:
            raise SecurityError(ErrorCode.UNSUPPORTED_VERSION, f"Unsupported entity type {c.entity_type}")
        if _check_match(c) == MatchType.SPECIFIED:
            specified.add(c.entity_type)
        else:
            exact[c.entity_type] = c.match
    types = exact.keys() | specified
    if IP in types and types & {USER, CLIENT_ID}:
        raise invalid_request(
            "Invalid entity filter component combination. IP filter component should not be used "
            "with user or clientId filter component."
        )
    return exact, specified


def _check_match(c: FilterComponent) -> MatchType:
    """A component's match type, checked against its match string (only EXACT carries one)."""
    if c.match_type not in MatchType._value2member_map_:
        raise invalid_request(f"Unknown match type {c.match_type}")
    match_type = MatchType(c.match_type)
    if match_type == MatchType.EXACT and c.match is None:
        raise invalid_request("Request specified MATCH_TYPE_EXACT, but set match string to null.")
    if match_type != MatchType.EXACT and c.match is not None:
        raise invalid_request(
            f"Request specified MATCH_TYPE_{match_type.name}, but also specified a match string."
        )
    return match_type

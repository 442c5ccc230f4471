"""ACLs as Kafka's StandardAuthorizer stores and matches them: bindings, filters, validation, lookup.

An ACL binds a resource pattern (resource type, name, LITERAL or PREFIXED) to an entry (principal,
host, operation, ALLOW or DENY). Filters (DescribeAcls, DeleteAcls) may say ANY for each enum, null
for each string, and MATCH for the pattern type: every pattern that would apply to the named resource
(the literal name, the `*` wildcard and every prefix of it).

`AclSet.authorize` answers one action as the StandardAuthorizer does once super users are set aside:
a DENY that applies wins; else an ALLOW that applies allows; else no ACL applies and the caller's
`allow.everyone.if.no.acl.found` decides (None). An ALLOW for READ, WRITE, DELETE or ALTER also allows
DESCRIBE, and one for ALTER_CONFIGS also allows DESCRIBE_CONFIGS; a DENY applies only to its own
operation (or ALL). `User:*` applies to every principal, host `*` to every host.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from kafkito.broker.security.errors import invalid_request

WILDCARD = "*"  # a LITERAL resource name matching every name, and a host matching every host
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"  # the one name a CLUSTER resource may have


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


IMPLIES_DESCRIBE = frozenset(
    {AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER}
)
IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})


def resource_type(code: int) -> ResourceType:
    """Kafka's `fromCode`: a code this broker does not know reads as UNKNOWN."""
    return ResourceType(code) if code in ResourceType._value2member_map_ else ResourceType.UNKNOWN


def pattern_type(code: int) -> PatternType:
    return PatternType(code) if code in PatternType._value2member_map_ else PatternType.UNKNOWN


def operation(code: int) -> AclOperation:
    return AclOperation(code) if code in AclOperation._value2member_map_ else AclOperation.UNKNOWN


def permission_type(code: int) -> AclPermissionType:
    known = AclPermissionType._value2member_map_
    return AclPermissionType(code) if code in known else AclPermissionType.UNKNOWN


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One stored ACL (Kafka's StandardAcl): a resource pattern and an access control entry."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission: AclPermissionType

    def to_record(self, acl_id: str) -> dict[str, Any]:
        """The AccessControlEntryRecord that stores this ACL under `acl_id`."""
        return {
            "type": "AccessControlEntryRecord",
            "id": acl_id,
            "resource_type": int(self.resource_type),
            "resource_name": self.resource_name,
            "pattern_type": int(self.pattern_type),
            "principal": self.principal,
            "host": self.host,
            "operation": int(self.operation),
            "permission_type": int(self.permission),
        }

    @staticmethod
    def from_record(r: dict[str, Any]) -> AclBinding:
        return AclBinding(
            ResourceType(r["resource_type"]),
            r["resource_name"],
            PatternType(r["pattern_type"]),
            r["principal"],
            r["host"],
            AclOperation(r["operation"]),
            AclPermissionType(r["permission_type"]),
        )


@dataclass(frozen=True, slots=True)
class AclFilter:
    """A DescribeAcls/DeleteAcls filter: ANY (enums) or None (strings) match everything."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission: AclPermissionType = AclPermissionType.ANY

    def matches(self, acl: AclBinding) -> bool:
        return self._matches_pattern(acl) and self._matches_entry(acl)

    def _matches_pattern(self, acl: AclBinding) -> bool:
        if self.resource_type not in (ResourceType.ANY, acl.resource_type):
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, acl.pattern_type):
            return False
        name = self.resource_name
        if name is None:
            return True
        if self.pattern_type in (PatternType.ANY, acl.pattern_type):
            return name == acl.resource_name
        # MATCH: the patterns that apply to a resource called `name`.
        if acl.pattern_type == PatternType.LITERAL:
            return name == acl.resource_name or acl.resource_name == WILDCARD
        return name.startswith(acl.resource_name)

    def _matches_entry(self, acl: AclBinding) -> bool:
        return (
            self.principal in (None, acl.principal)
            and self.host in (None, acl.host)
            and self.operation in (AclOperation.ANY, acl.operation)
            and self.permission in (AclPermissionType.ANY, acl.permission)
        )

    def validate(self) -> None:
        """Refuse a filter holding an UNKNOWN element (Kafka: INVALID_REQUEST)."""
        if self.operation == AclOperation.UNKNOWN or self.permission == AclPermissionType.UNKNOWN:
            raise invalid_request("Unknown entryFilter: the operation or permission type is UNKNOWN.")
        if self.resource_type == ResourceType.UNKNOWN or self.pattern_type == PatternType.UNKNOWN:
            raise invalid_request("Unknown patternFilter: the resource or pattern type is UNKNOWN.")


def validate_new_acl(acl: AclBinding) -> None:
    """Kafka's checks of an ACL to create (broker, then controller); SecurityError if refused."""
    if acl.resource_type == ResourceType.CLUSTER and acl.resource_name != CLUSTER_NAME:
        raise invalid_request(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if not acl.resource_name:
        raise invalid_request("Invalid empty resource name")
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise invalid_request(f"Invalid resourceType {acl.resource_type.name}")
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise invalid_request(f"Invalid patternType {acl.pattern_type.name}")
    if acl.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise invalid_request(f"Invalid operation {acl.operation.name}")
    if acl.permission not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        raise invalid_request(f"Invalid permissionType {acl.permission.name}")
    if ":" not in acl.principal:
        raise invalid_request(
            f"Could not parse principal {acl.principal!r}: a principal is written <type>:<name>"
        )


def acl_host(address: str) -> str:
    """A client's address written as Kafka compares it with an ACL's host (Java's `getHostAddress`):
    IPv4 dotted, IPv6 in full without zero compression (`0:0:0:0:0:0:0:1`), an IPv4-mapped IPv6
    address as its IPv4 address. Anything else is returned as it is."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        scope = address[address.index("%") :] if "%" in address else ""
        return ":".join(f"{int(group, 16):x}" for group in ip.exploded.split(":")) + scope
    return str(ip)


def verdict(acl: AclBinding, principal: str, host: str, op: AclOperation) -> bool | None:
    """What one ACL (whose resource pattern applies) says about an action: allow, deny, or nothing."""
    if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
        return None
    if acl.host != WILDCARD and acl.host != host:
        return None
    allow = acl.permission == AclPermissionType.ALLOW
    if acl.operation != AclOperation.ALL and acl.operation != op:
        if not allow:
            return None
        if op == AclOperation.DESCRIBE and acl.operation in IMPLIES_DESCRIBE:
            return True
        if op == AclOperation.DESCRIBE_CONFIGS and acl.operation in IMPLIES_DESCRIBE_CONFIGS:
            return True
        return None
    return allow


class AclSet:
    """The stored ACLs by id, indexed by resource for the authorizer's lookup."""

    def __init__(self) -> None:
        self.by_id: dict[str, AclBinding] = {}
        self._ids: dict[AclBinding, str] = {}
        self._literal: dict[tuple[ResourceType, str], list[AclBinding]] = {}
        self._prefixed: dict[tuple[ResourceType, str], list[AclBinding]] = {}
        self._prefix_lengths: dict[ResourceType, dict[int, int]] = {}  # length -> PREFIXED ACLs of it

    def __len__(self) -> int:
        return len(self.by_id)

    def __iter__(self) -> Iterator[tuple[str, AclBinding]]:
        return iter(list(self.by_id.items()))

    def __contains__(self, acl: object) -> bool:
        return acl in self._ids

    def id_of(self, acl: AclBinding) -> str | None:
        return self._ids.get(acl)

    def add(self, acl_id: str, acl: AclBinding) -> None:
        if acl_id in self.by_id:
            self.remove(acl_id)
        self.by_id[acl_id] = acl
        self._ids[acl] = acl_id
        key = (acl.resource_type, acl.resource_name)
        if acl.pattern_type == PatternType.PREFIXED:
            self._prefixed.setdefault(key, []).append(acl)
            lengths = self._prefix_lengths.setdefault(acl.resource_type, {})
            lengths[len(acl.resource_name)] = lengths.get(len(acl.resource_name), 0) + 1
        else:
            self._literal.setdefault(key, []).append(acl)

    def remove(self, acl_id: str) -> AclBinding | None:
        acl = self.by_id.pop(acl_id, None)
        if acl is None:
            return None
        del self._ids[acl]
        key = (acl.resource_type, acl.resource_name)
        index = self._prefixed if acl.pattern_type == PatternType.PREFIXED else self._literal
        index[key].remove(acl)
        if not index[key]:
            del index[key]
        if acl.pattern_type == PatternType.PREFIXED:
            lengths = self._prefix_lengths[acl.resource_type]
            lengths[len(acl.resource_name)] -= 1
            if not lengths[len(acl.resource_name)]:
                del lengths[len(acl.resource_name)]
        return acl

    def matching(self, acl_filter: AclFilter) -> list[tuple[str, AclBinding]]:
        """The stored ACLs a filter matches, with their ids, in creation order."""
        return [(i, acl) for i, acl in self.by_id.items() if acl_filter.matches(acl)]

    def applying(self, resource_type: ResourceType, name: str) -> Iterator[AclBinding]:
        """The ACLs whose resource pattern applies to one resource: its literal name, `*`, its prefixes."""
        yield from self._literal.get((resource_type, name), ())
        if name != WILDCARD:
            yield from self._literal.get((resource_type, WILDCARD), ())
        for length in self._prefix_lengths.get(resource_type, {}):
            if length <= len(name):
                yield from self._prefixed.get((resource_type, name[:length]), ())

    def authorize(
        self, principal: str, host: str, op: AclOperation, resource_type: ResourceType, name: str
    ) -> bool | None:
        """True if an ALLOW applies and no DENY; False if a DENY applies; None if no ACL applies.

        `principal` is `<type>:<name>` (`User:alice`), `host` the client's address as Kafka writes it
        (`acl_host`).
        Super users and `allow.everyone.if.no.acl.found` (the None case) are the caller's.
        """
        allowed = False
        for acl in self.applying(resource_type, name):
            said = verdict(acl, principal, host, op)
            if said is False:
                return False
            allowed = allowed or bool(said)
        return True if allowed else None

    def authorize_by_resource_type(
        self,
        principal: str,
        host: str,
        op: AclOperation,
        resource_type: ResourceType,
        *,
        allow_if_no_acl: bool,
    ) -> bool:
        """Kafka's `authorizeByResourceType` (super users aside): may `principal` do `op` on some
        resource of this type? Allowed if the action on an arbitrary name is (with the no-ACL default),
        else if an ALLOW names a resource that no DENY covers. Used for InitProducerId without a
        transactional id (WRITE on any topic) and for transactional id prefixes."""
        if op in (AclOperation.ANY, AclOperation.UNKNOWN):
            raise ValueError(f"operation {op.name} cannot be authorized")
        if resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            raise ValueError(f"resource type {resource_type.name} cannot be authorized")
        single = self.authorize(principal, host, op, resource_type, "hardcode")
        if single or (single is None and allow_if_no_acl):
            return True
        return _any_allowed_name(self._entries_for(principal, host, op, resource_type))

    def _entries_for(
        self, principal: str, host: str, op: AclOperation, resource_type: ResourceType
    ) -> Iterable[AclBinding]:
        for acl in self.by_id.values():
            if (
                acl.resource_type == resource_type
                and acl.host in (host, WILDCARD)
                and acl.principal in (principal, WILDCARD_PRINCIPAL)
                and acl.operation in (op, AclOperation.ALL)
            ):
                yield acl


def _any_allowed_name(acls: Iterable[AclBinding]) -> bool:
    """Whether some ALLOW pattern is left that no DENY dominates (a DENY `*` dominates everything)."""
    deny_literal: set[str] = set()
    deny_prefixed: set[str] = set()
    allows: list[AclBinding] = []
    for acl in acls:
        literal = acl.pattern_type == PatternType.LITERAL
        if acl.permission == AclPermissionType.DENY:
            if literal and acl.resource_name == WILDCARD:
                return False
            (deny_literal if literal else deny_prefixed).add(acl.resource_name)
        elif acl.permission == AclPermissionType.ALLOW:
            allows.append(acl)
    for acl in allows:
        name = acl.resource_name
        if acl.pattern_type == PatternType.LITERAL and name == WILDCARD:
            return True
        if acl.pattern_type == PatternType.LITERAL and name in deny_literal:
            continue
        if not any(name[:i] in deny_prefixed for i in range(1, len(name) + 1)):
            return True
    return False

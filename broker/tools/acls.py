"""`kafkito acls list|add|remove`: what kafka-acls.sh does, over DescribeAcls, CreateAcls and DeleteAcls.

Operations are named as kafka-acls.sh names them (`Read`, `DescribeConfigs`, `All`; any case, `-` or
`_` allowed); `--prefixed` makes the resource name a prefix (KIP-290), literal otherwise.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkito.broker.tools.connect import admin, kafka_errors
from kafkito.broker.tools.output import ToolError, emit

COLUMNS = ("PRINCIPAL", "HOST", "OPERATION", "PERMISSION", "RESOURCE-TYPE", "NAME", "PATTERN")
CLUSTER_NAME = "kafka-cluster"  # the cluster resource's one name


def _pascal(name: str) -> str:
    return "".join(word.capitalize() for word in name.split("_"))


def operation(text: str) -> Any:
    from kafka.admin import ACLOperation

    wanted = text.replace("-", "").replace("_", "").lower()
    for op in ACLOperation:
        if op.name.replace("_", "").lower() == wanted and op not in (ACLOperation.UNKNOWN, ACLOperation.ANY):
            return op
    known = ", ".join(_pascal(op.name) for op in ACLOperation if op.value > 1)
    raise ToolError(f"--operation {text}: not an operation ({known})", 2)


def principal(text: str) -> str:
    kind, sep, name = text.partition(":")
    if not sep or not kind or not name:
        raise ToolError(f"principal {text!r} is not TYPE:NAME (e.g. User:alice)", 2)
    return text


def _pattern(args: argparse.Namespace, for_filter: bool) -> Any:
    from kafka.admin import ACLResourcePatternType, ResourcePattern, ResourcePatternFilter, ResourceType

    pattern_type = ACLResourcePatternType.PREFIXED if getattr(args, "prefixed", False) else None
    if args.topic is not None:
        kind, name = ResourceType.TOPIC, args.topic
    elif args.group is not None:
        kind, name = ResourceType.GROUP, args.group
    elif args.transactional_id is not None:
        kind, name = ResourceType.TRANSACTIONAL_ID, args.transactional_id
    elif args.cluster:
        kind, name = ResourceType.CLUSTER, CLUSTER_NAME
    else:
        return ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)
    if for_filter and not hasattr(args, "prefixed"):  # list: literal and prefixed bindings alike
        return ResourcePatternFilter(kind, name, ACLResourcePatternType.ANY)
    shape = ResourcePatternFilter if for_filter else ResourcePattern
    return shape(kind, name, pattern_type or ACLResourcePatternType.LITERAL)


def _row(acl: Any) -> tuple[Any, ...]:
    pattern = acl.resource_pattern
    return (
        acl.principal,
        acl.host,
        _pascal(acl.operation.name),
        _pascal(acl.permission_type.name),
        _pascal(pattern.resource_type.name),
        pattern.resource_name,
        pattern.pattern_type.name,
    )


def run_list(args: argparse.Namespace) -> int:
    from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType

    who = principal(args.principal) if args.principal else None
    wanted = ACLFilter(who, None, ACLOperation.ANY, ACLPermissionType.ANY, _pattern(args, for_filter=True))
    client = admin(args)
    with kafka_errors():
        acls, error = client.describe_acls(wanted)
    _raise_if_failed(error)
    rows = sorted(_row(acl) for acl in acls)
    emit(COLUMNS, rows, args.json)
    return 0


def _bindings(args: argparse.Namespace, for_filter: bool) -> list[Any]:
    from kafka.admin import ACL, ACLFilter, ACLPermissionType

    people = [(principal(p), ACLPermissionType.ALLOW) for p in args.allow_principal]
    people += [(principal(p), ACLPermissionType.DENY) for p in args.deny_principal]
    if not people:
        raise ToolError("name who: --allow-principal User:NAME or --deny-principal User:NAME", 2)
    pattern = _pattern(args, for_filter)
    kind = ACLFilter if for_filter else ACL
    return [
        kind(who, args.host, operation(op), permission, pattern)
        for who, permission in people
        for op in args.operation
    ]


def run_add(args: argparse.Namespace) -> int:
    acls = _bindings(args, for_filter=False)
    client = admin(args)
    with kafka_errors():
        result = client.create_acls(acls)
    failed = result.get("failed", [])
    if failed:
        raise ToolError("; ".join(f"{_describe(acl)}: {type(error).__name__}" for acl, error in failed))
    for acl in acls:
        print(f"Added ACL {_describe(acl)}")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    filters = _bindings(args, for_filter=True)
    client = admin(args)
    with kafka_errors():
        results = client.delete_acls(filters)
    removed = 0
    for _filter, matched, error in results:
        _raise_if_failed(error)
        for acl in matched:
            print(f"Removed ACL {_describe(acl)}")
            removed += 1
    if not removed:
        print("No ACL matched.")
    return 0


def _raise_if_failed(error: Any) -> None:
    """kafka-python returns a filter's error (NoError when there is none) instead of raising it."""
    code: int = getattr(error, "errno", 0) or 0
    if code:
        raise ToolError(type(error).__name__ + (f": {error}" if str(error) else ""))


def _describe(acl: Any) -> str:
    principal_, host, op, permission, kind, name, pattern = _row(acl)
    return f"{permission} {principal_} {op} on {kind}:{pattern}:{name} from host {host}"

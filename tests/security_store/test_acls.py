"""ACL semantics of the security store: Kafka's filters, validation and the StandardAuthorizer lookup.

The lookup (`AclSet.authorize`, indexed by resource) is held to a reference model that scans every
ACL, on generated ACL sets and actions.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkito.broker.security.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermissionType,
    AclSet,
    PatternType,
    ResourceType,
    acl_host,
)
from kafkito.broker.security.errors import SecurityError
from kafkito.broker.security.store import SecurityStore
from kafkito.protocol.errors import ErrorCode

Op, Perm, RT, PT = AclOperation, AclPermissionType, ResourceType, PatternType


def acl(
    name: str = "orders",
    op: AclOperation = Op.READ,
    perm: AclPermissionType = Perm.ALLOW,
    *,
    rt: ResourceType = RT.TOPIC,
    pt: PatternType = PT.LITERAL,
    principal: str = "User:alice",
    host: str = "*",
) -> AclBinding:
    return AclBinding(rt, name, pt, principal, host, op, perm)


def acl_set(*acls: AclBinding) -> AclSet:
    s = AclSet()
    for i, a in enumerate(acls):
        s.add(str(i), a)
    return s


def topic(
    s: AclSet, op: AclOperation, name: str = "orders", who: str = "User:alice", host: str = "10.0.0.1"
) -> bool | None:
    return s.authorize(who, host, op, RT.TOPIC, name)


# -- the authorizer lookup ------------------------------------------------------------------------


def test_no_acl_that_applies_leaves_the_decision_to_the_caller() -> None:
    s = acl_set(acl("other"), acl(principal="User:bob"), acl(host="10.9.9.9"), acl(op=Op.WRITE))
    assert topic(s, Op.READ) is None
    assert topic(acl_set(), Op.READ) is None


def test_deny_wins_over_allow() -> None:
    s = acl_set(acl(op=Op.ALL), acl(op=Op.READ, perm=Perm.DENY, pt=PT.PREFIXED, name="ord"))
    assert topic(s, Op.READ) is False
    assert topic(s, Op.WRITE) is True


def test_read_write_delete_alter_imply_describe_only_when_allowed() -> None:
    for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER, Op.DESCRIBE):
        assert topic(acl_set(acl(op=op)), Op.DESCRIBE) is True
    for op in (Op.CREATE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS, Op.IDEMPOTENT_WRITE):
        assert topic(acl_set(acl(op=op)), Op.DESCRIBE) is None
    # A DENY for READ denies READ, not DESCRIBE.
    s = acl_set(acl(op=Op.READ, perm=Perm.DENY), acl(op=Op.DESCRIBE))
    assert topic(s, Op.DESCRIBE) is True
    assert topic(s, Op.READ) is False


def test_alter_configs_implies_describe_configs() -> None:
    assert topic(acl_set(acl(op=Op.ALTER_CONFIGS)), Op.DESCRIBE_CONFIGS) is True
    assert topic(acl_set(acl(op=Op.DESCRIBE_CONFIGS)), Op.ALTER_CONFIGS) is None
    assert topic(acl_set(acl(op=Op.ALTER_CONFIGS, perm=Perm.DENY)), Op.DESCRIBE_CONFIGS) is None


def test_all_allows_and_denies_every_operation() -> None:
    for op in (Op.READ, Op.WRITE, Op.DESCRIBE, Op.ALTER_CONFIGS, Op.CLUSTER_ACTION):
        assert topic(acl_set(acl(op=Op.ALL)), op) is True
        assert topic(acl_set(acl(op=Op.ALL, perm=Perm.DENY), acl(op=op)), op) is False


def test_wildcards_principal_host_and_resource_name() -> None:
    assert topic(acl_set(acl(principal="User:*")), Op.READ, who="User:bob") is True
    assert topic(acl_set(acl(principal="User:*")), Op.READ, who="Group:ops") is True
    assert topic(acl_set(acl(principal="Group:*")), Op.READ, who="Group:ops") is None
    assert topic(acl_set(acl(host="10.0.0.1")), Op.READ) is True
    assert topic(acl_set(acl(host="10.0.0.2")), Op.READ) is None
    assert topic(acl_set(acl("*")), Op.READ, name="anything") is True
    # `*` is a wildcard only as a LITERAL name; PREFIXED `*` is the prefix "*".
    assert topic(acl_set(acl("*", pt=PT.PREFIXED)), Op.READ, name="anything") is None


def test_prefixed_and_literal_patterns() -> None:
    s = acl_set(acl("ord", pt=PT.PREFIXED))
    assert topic(s, Op.READ, name="orders") is True
    assert topic(s, Op.READ, name="ord") is True
    assert topic(s, Op.READ, name="or") is None
    assert topic(acl_set(acl("ord")), Op.READ, name="orders") is None


def test_resource_types_do_not_mix() -> None:
    s = acl_set(acl("orders", rt=RT.GROUP))
    assert topic(s, Op.READ) is None
    assert s.authorize("User:alice", "h", Op.READ, RT.GROUP, "orders") is True
    cluster = acl_set(acl("kafka-cluster", Op.IDEMPOTENT_WRITE, rt=RT.CLUSTER))
    assert cluster.authorize("User:alice", "h", Op.IDEMPOTENT_WRITE, RT.CLUSTER, "kafka-cluster") is True


def test_authorize_by_resource_type() -> None:
    def by_type(s: AclSet, default: bool = False) -> bool:
        return s.authorize_by_resource_type("User:alice", "h", Op.WRITE, RT.TOPIC, allow_if_no_acl=default)

    assert by_type(acl_set()) is False
    assert by_type(acl_set(), default=True) is True
    assert by_type(acl_set(acl("t1", Op.WRITE))) is True
    assert by_type(acl_set(acl("t1", Op.READ))) is False
    assert by_type(acl_set(acl("t1", Op.WRITE), acl("t1", Op.WRITE, Perm.DENY))) is False
    assert by_type(acl_set(acl("t1", Op.WRITE), acl("t", Op.WRITE, Perm.DENY, pt=PT.PREFIXED))) is False
    assert by_type(acl_set(acl("t1", Op.WRITE), acl("t1x", Op.WRITE, Perm.DENY, pt=PT.PREFIXED))) is True
    assert by_type(acl_set(acl("*", Op.WRITE), acl("t1", Op.WRITE, Perm.DENY))) is True
    assert by_type(acl_set(acl("t1", Op.WRITE), acl("*", Op.WRITE, Perm.DENY))) is False
    with pytest.raises(ValueError):
        acl_set().authorize_by_resource_type("User:a", "h", Op.ANY, RT.TOPIC, allow_if_no_acl=False)


# -- the reference model --------------------------------------------------------------------------

NAMES = st.sampled_from(["a", "ab", "abc", "b", "*", "ba"])
PRINCIPALS = st.sampled_from(["User:alice", "User:bob", "User:*", "Group:x"])
HOSTS = st.sampled_from(["*", "10.0.0.1", "10.0.0.2"])
OPS = st.sampled_from([o for o in Op if o not in (Op.UNKNOWN, Op.ANY)])
ACLS = st.builds(
    AclBinding,
    st.sampled_from([RT.TOPIC, RT.GROUP]),
    NAMES,
    st.sampled_from([PT.LITERAL, PT.PREFIXED]),
    PRINCIPALS,
    HOSTS,
    OPS,
    st.sampled_from([Perm.ALLOW, Perm.DENY]),
)

IMPLIED = {
    Op.DESCRIBE: {Op.READ, Op.WRITE, Op.DELETE, Op.ALTER},
    Op.DESCRIBE_CONFIGS: {Op.ALTER_CONFIGS},
}


def reference(
    acls: list[AclBinding], who: str, host: str, op: AclOperation, rt: ResourceType, name: str
) -> bool | None:
    """Kafka's rules written plainly: scan every ACL."""
    said: set[AclPermissionType] = set()
    for a in acls:
        if a.resource_type != rt:
            continue
        if a.pattern_type == PT.LITERAL and a.resource_name not in (name, "*"):
            continue
        if a.pattern_type == PT.PREFIXED and not name.startswith(a.resource_name):
            continue
        if a.principal not in (who, "User:*") or a.host not in (host, "*"):
            continue
        ops = {a.operation}
        if a.permission == Perm.ALLOW:
            ops |= {implied for implied, by in IMPLIED.items() if a.operation in by}
        if a.operation == Op.ALL or op in ops:
            said.add(a.permission)
    if Perm.DENY in said:
        return False
    return True if Perm.ALLOW in said else None


@settings(max_examples=300)
@given(
    st.lists(ACLS, max_size=12, unique=True),
    st.lists(st.integers(0, 11), max_size=4),
    PRINCIPALS.filter(lambda p: p != "User:*"),
    st.sampled_from(["10.0.0.1", "10.0.0.2"]),
    OPS,
    st.sampled_from([RT.TOPIC, RT.GROUP]),
    NAMES,
)
def test_authorize_agrees_with_a_scan_of_every_acl(
    acls: list[AclBinding],
    removed: list[int],
    who: str,
    host: str,
    op: AclOperation,
    rt: ResourceType,
    name: str,
) -> None:
    s = acl_set(*acls)
    for i in removed:
        s.remove(str(i))
    left = [a for i, a in enumerate(acls) if i not in removed]
    assert s.authorize(who, host, op, rt, name) == reference(left, who, host, op, rt, name)


FILTERS = st.builds(
    AclFilter,
    st.sampled_from([RT.ANY, RT.TOPIC, RT.GROUP]),
    st.one_of(st.none(), NAMES),
    st.sampled_from([PT.ANY, PT.MATCH, PT.LITERAL, PT.PREFIXED]),
    st.one_of(st.none(), PRINCIPALS),
    st.one_of(st.none(), HOSTS),
    st.sampled_from([Op.ANY, Op.READ, Op.ALL]),
    st.sampled_from([Perm.ANY, Perm.ALLOW, Perm.DENY]),
)


@given(ACLS, FILTERS)
def test_match_filter_selects_the_patterns_that_apply_to_the_name(a: AclBinding, f: AclFilter) -> None:
    pattern_ok = f.resource_type in (RT.ANY, a.resource_type)
    if f.pattern_type == PT.MATCH and f.resource_name is not None:
        applies = (a.pattern_type == PT.LITERAL and a.resource_name in (f.resource_name, "*")) or (
            a.pattern_type == PT.PREFIXED and f.resource_name.startswith(a.resource_name)
        )
        pattern_ok = pattern_ok and applies
    elif f.pattern_type in (PT.LITERAL, PT.PREFIXED):
        pattern_ok = pattern_ok and a.pattern_type == f.pattern_type
        pattern_ok = pattern_ok and f.resource_name in (None, a.resource_name)
    else:
        pattern_ok = pattern_ok and f.resource_name in (None, a.resource_name)
    entry_ok = (
        f.principal in (None, a.principal)
        and f.host in (None, a.host)
        and f.operation in (Op.ANY, a.operation)
        and f.permission in (Perm.ANY, a.permission)
    )
    assert f.matches(a) == (pattern_ok and entry_ok)


# -- create, describe, delete through the store ---------------------------------------------------


def test_create_validates_as_kafka_and_is_idempotent(tmp_path: Path) -> None:
    store = SecurityStore(tmp_path).load()
    bad = {
        acl("orders", rt=RT.CLUSTER): "The only valid name for the CLUSTER resource is kafka-cluster",
        acl(""): "Invalid empty resource name",
        acl(rt=RT.ANY): "Invalid resourceType ANY",
        acl(rt=RT.UNKNOWN): "Invalid resourceType UNKNOWN",
        acl(pt=PT.MATCH): "Invalid patternType MATCH",
        acl(pt=PT.ANY): "Invalid patternType ANY",
        acl(op=Op.ANY): "Invalid operation ANY",
        acl(perm=Perm.ANY): "Invalid permissionType ANY",
        acl(principal="alice"): "Could not parse principal 'alice': a principal is written <type>:<name>",
    }
    good = acl()
    results = store.create_acls([*bad, good, good])
    assert results[: len(bad)] == [SecurityError(ErrorCode.INVALID_REQUEST, m) for m in bad.values()]
    assert results[len(bad) :] == [None, None]
    assert store.create_acls([good]) == [None]
    assert store.describe_acls(AclFilter()) == [good]


def test_delete_lists_what_each_filter_matched_and_deletes_each_once(tmp_path: Path) -> None:
    store = SecurityStore(tmp_path).load()
    a, b = acl("orders"), acl("ord", pt=PT.PREFIXED, op=Op.WRITE)
    store.create_acls([a, b])
    results = store.delete_acls(
        [
            AclFilter(RT.TOPIC, "orders", PT.MATCH),
            AclFilter(operation=Op.WRITE),
            AclFilter(resource_type=RT.UNKNOWN),
        ]
    )
    assert results[0] == [a, b]
    assert results[1] == [b]
    assert isinstance(results[2], SecurityError) and results[2].code == ErrorCode.INVALID_REQUEST
    assert store.describe_acls(AclFilter()) == []


def test_describe_refuses_a_filter_with_unknown_elements(tmp_path: Path) -> None:
    store = SecurityStore(tmp_path).load()
    for f in (
        AclFilter(operation=Op.UNKNOWN),
        AclFilter(pattern_type=PT.UNKNOWN),
        AclFilter(permission=Perm.UNKNOWN),
    ):
        with pytest.raises(SecurityError) as e:
            store.describe_acls(f)
        assert e.value.code == ErrorCode.INVALID_REQUEST


def test_client_addresses_are_written_as_kafka_compares_them() -> None:
    assert acl_host("10.1.2.3") == "10.1.2.3"
    assert acl_host("::1") == "0:0:0:0:0:0:0:1"
    assert acl_host("fe80::a:b%eth0") == "fe80:0:0:0:0:0:a:b%eth0"
    assert acl_host("::ffff:10.0.0.7") == "10.0.0.7"
    assert acl_host("2001:DB8::0010") == "2001:db8:0:0:0:0:0:10"
    assert acl_host("not-an-ip") == "not-an-ip"

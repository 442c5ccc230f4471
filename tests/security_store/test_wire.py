"""The seven APIs over raw requests: every version, v0's LITERAL-only ACLs, quotas (no client exposes
them), and bad requests answered with Kafka's error codes on a connection that stays open."""

from __future__ import annotations

from typing import Any

import pytest

from kafkito.broker.handlers import VERSIONS
from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
DESCRIBE_QUOTAS, ALTER_QUOTAS, DESCRIBE_SCRAM, ALTER_SCRAM = 48, 49, 50, 51
TOPIC, GROUP, ANY_TYPE = 2, 3, 1
LITERAL, PREFIXED, MATCH, ANY_PATTERN = 3, 4, 2, 1
READ, WRITE, ANY_OP = 3, 4, 1
ALLOW, ANY_PERM = 3, 1


def creation(name: str, pattern: int = LITERAL, op: int = READ, rtype: int = TOPIC) -> dict[str, Any]:
    return dict(
        resource_type=rtype,
        resource_name=name,
        resource_pattern_type=pattern,
        principal="User:alice",
        host="*",
        operation=op,
        permission_type=ALLOW,
    )


def acl_filter(
    name: str | None = None, pattern: int = ANY_PATTERN, rtype: int = ANY_TYPE, op: int = ANY_OP
) -> dict[str, Any]:
    return dict(
        resource_type_filter=rtype,
        resource_name_filter=name,
        pattern_type_filter=pattern,
        principal_filter=None,
        host_filter=None,
        operation=op,
        permission_type=ANY_PERM,
    )


def resources(response: Any) -> list[tuple[str, int, list[int]]]:
    return [(r.resource_name, r.resource_type, [a.operation for a in r.acls]) for r in response.resources]


@pytest.mark.parametrize("version", range(VERSIONS[CREATE_ACLS][0], VERSIONS[CREATE_ACLS][1] + 1))
def test_acl_apis_at_every_version(broker: ThreadBroker, version: int) -> None:
    with WireClient(broker.bootstrap) as wire:
        created = wire.request(
            CREATE_ACLS, version, creations=[creation("orders"), creation("orders", op=WRITE)]
        )
        assert [(r.error_code, r.error_message) for r in created.results] == [(0, None), (0, None)]
        described = wire.request(
            DESCRIBE_ACLS, version, **acl_filter(pattern=LITERAL if version == 0 else ANY_PATTERN)
        )
        assert described.error_code == 0
        assert resources(described) == [("orders", TOPIC, [READ, WRITE])]
        deleted = wire.request(DELETE_ACLS, version, filters=[acl_filter("orders", LITERAL, TOPIC, WRITE)])
        [result] = deleted.filter_results
        assert result.error_code == 0
        assert [(m.resource_name, m.operation, m.error_code) for m in result.matching_acls] == [
            ("orders", WRITE, 0)
        ]
        left = wire.request(DESCRIBE_ACLS, version, **acl_filter(pattern=LITERAL))
        assert resources(left) == [("orders", TOPIC, [READ])]


def test_v0_sees_only_literal_acls(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        wire.request(CREATE_ACLS, 1, creations=[creation("ord", PREFIXED), creation("orders")])
        v0 = wire.request(DESCRIBE_ACLS, 0, **acl_filter())
        assert resources(v0) == [("orders", TOPIC, [READ])]
        v1 = wire.request(DESCRIBE_ACLS, 1, **acl_filter("orders", MATCH, TOPIC))
        assert sorted(resources(v1)) == [("ord", TOPIC, [READ]), ("orders", TOPIC, [READ])]
        deleted = wire.request(DELETE_ACLS, 0, filters=[acl_filter()])
        assert [m.resource_name for m in deleted.filter_results[0].matching_acls] == ["orders"]


def test_bad_acl_requests_get_kafkas_errors_and_the_connection_stays(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        created = wire.request(
            CREATE_ACLS,
            3,
            creations=[
                creation("x", op=99),
                creation("x", pattern=MATCH),
                creation("", op=READ),
                creation("not-kafka-cluster", rtype=4),
                creation("x", rtype=99),
            ],
        )
        assert [r.error_code for r in created.results] == [ErrorCode.INVALID_REQUEST] * 5
        assert all(r.error_message for r in created.results)
        bad = wire.request(DESCRIBE_ACLS, 3, **acl_filter(rtype=99))
        assert (bad.error_code, bad.resources) == (ErrorCode.INVALID_REQUEST, [])
        deleted = wire.request(DELETE_ACLS, 3, filters=[acl_filter(pattern=99), acl_filter()])
        assert [r.error_code for r in deleted.filter_results] == [ErrorCode.INVALID_REQUEST, 0]
        assert wire.request(DESCRIBE_ACLS, 3, **acl_filter()).resources == []


@pytest.mark.parametrize("unknown", ["rtype", "pattern", "op"])
def test_describe_acls_with_an_unknown_element_closes_the_connection(
    broker: ThreadBroker, unknown: str
) -> None:
    """As Kafka's DescribeAclsRequest, which does not parse with an UNKNOWN (0) element."""
    with WireClient(broker.bootstrap) as wire:
        wire.send(DESCRIBE_ACLS, 3, **acl_filter(**{unknown: 0}))
        assert wire.recv_frame() is None


@pytest.mark.parametrize("unknown", ["rtype", "pattern", "op"])
def test_create_and_delete_acls_with_an_unknown_element_close_the_connection(
    broker: ThreadBroker, unknown: str
) -> None:
    """As Kafka's CreateAclsRequest and DeleteAclsRequest, which do not parse with an UNKNOWN (0) element,
    even beside valid ones."""
    with WireClient(broker.bootstrap) as wire:
        wire.send(CREATE_ACLS, 3, creations=[creation("ok"), creation("x", **{unknown: 0})])
        assert wire.recv_frame() is None
    with WireClient(broker.bootstrap) as wire:
        wire.send(DELETE_ACLS, 3, filters=[acl_filter(), acl_filter(**{unknown: 0})])
        assert wire.recv_frame() is None
    with WireClient(broker.bootstrap) as wire:
        assert wire.request(DESCRIBE_ACLS, 3, **acl_filter()).resources == []  # nothing was created


def entity(*pairs: tuple[str, str | None]) -> list[dict[str, Any]]:
    return [dict(entity_type=t, entity_name=n) for t, n in pairs]


def op(key: str, value: float = 0.0, remove: bool = False) -> dict[str, Any]:
    return dict(key=key, value=value, remove=remove)


def component(entity_type: str, match_type: int, match: str | None = None) -> dict[str, Any]:
    return dict(entity_type=entity_type, match_type=match_type, match=match)


@pytest.mark.parametrize("version", [0, 1])
def test_quota_apis_at_every_version(broker: ThreadBroker, version: int) -> None:
    with WireClient(broker.bootstrap) as wire:
        altered = wire.request(
            ALTER_QUOTAS,
            version,
            entries=[
                dict(
                    entity=entity(("user", "alice")),
                    ops=[op("producer_byte_rate", 1024.0), op("request_percentage", 25.5)],
                ),
                dict(
                    entity=entity(("user", None), ("client-id", "app")),
                    ops=[op("consumer_byte_rate", 2048.0)],
                ),
                dict(entity=entity(("ip", None)), ops=[op("connection_creation_rate", 10.0)]),
                dict(entity=entity(("ip", "localhost")), ops=[op("connection_creation_rate", 3.0)]),
                dict(entity=entity(("user", "bob")), ops=[op("connection_creation_rate", 1.0)]),
                dict(
                    entity=entity(("ip", "no-such-host.invalid")), ops=[op("connection_creation_rate", 1.0)]
                ),
            ],
            validate_only=False,
        )
        codes = {
            tuple((e.entity_type, e.entity_name) for e in r.entity): r.error_code for r in altered.entries
        }
        assert codes == {
            (("user", "alice"),): 0,
            (("user", None), ("client-id", "app")): 0,
            (("ip", None),): 0,
            (("ip", "localhost"),): 0,
            (("user", "bob"),): ErrorCode.INVALID_REQUEST,
            (("ip", "no-such-host.invalid"),): ErrorCode.INVALID_REQUEST,
        }
        users = wire.request(DESCRIBE_QUOTAS, version, components=[component("user", 2)], strict=False)
        assert users.error_code == 0
        assert [
            ([(e.entity_type, e.entity_name) for e in q.entity], sorted((v.key, v.value) for v in q.values))
            for q in users.entries
        ] == [
            ([("client-id", "app"), ("user", None)], [("consumer_byte_rate", 2048.0)]),
            ([("user", "alice")], [("producer_byte_rate", 1024.0), ("request_percentage", 25.5)]),
        ]
        default_ip = wire.request(DESCRIBE_QUOTAS, version, components=[component("ip", 1)], strict=True)
        assert [[(e.entity_type, e.entity_name) for e in q.entity] for q in default_ip.entries] == [
            [("ip", None)]
        ]
        bad = wire.request(DESCRIBE_QUOTAS, version, components=[component("user", 0, None)], strict=False)
        assert (bad.error_code, bad.entries) == (ErrorCode.INVALID_REQUEST, None)
        unsupported = wire.request(DESCRIBE_QUOTAS, version, components=[component("group", 2)], strict=False)
        assert unsupported.error_code == ErrorCode.UNSUPPORTED_VERSION


def test_alter_quotas_validate_only_changes_nothing(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        r = wire.request(
            ALTER_QUOTAS,
            1,
            entries=[dict(entity=entity(("client-id", "app")), ops=[op("producer_byte_rate", 5.0)])],
            validate_only=True,
        )
        assert [e.error_code for e in r.entries] == [0]
        assert wire.request(DESCRIBE_QUOTAS, 1, components=[], strict=False).entries == []


def test_scram_apis_at_v0(broker: ThreadBroker) -> None:
    with WireClient(broker.bootstrap) as wire:
        altered = wire.request(
            ALTER_SCRAM,
            0,
            deletions=[dict(name="ghost", mechanism=1)],
            upsertions=[
                dict(name="alice", mechanism=1, iterations=4096, salt=b"s", salted_password=b"k" * 32),
                dict(name="bob", mechanism=3, iterations=4096, salt=b"s", salted_password=b"k" * 32),
            ],
        )
        assert {r.user: r.error_code for r in altered.results} == {
            "alice": 0,
            "ghost": ErrorCode.RESOURCE_NOT_FOUND,
            "bob": ErrorCode.UNSUPPORTED_SASL_MECHANISM,
        }
        described = wire.request(DESCRIBE_SCRAM, 0, users=[dict(name="alice"), dict(name="bob")])
        assert described.error_code == 0
        assert {
            r.user: (r.error_code, [(c.mechanism, c.iterations) for c in r.credential_infos])
            for r in described.results
        } == {
            "alice": (0, [(1, 4096)]),
            "bob": (ErrorCode.RESOURCE_NOT_FOUND, []),
        }
        assert [r.user for r in wire.request(DESCRIBE_SCRAM, 0, users=[]).results] == ["alice"]

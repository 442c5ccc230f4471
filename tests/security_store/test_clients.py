"""Real admin clients manage ACLs and SCRAM credentials: confluent-kafka (librdkafka) and kafka-python.

Quotas: neither client exposes the quota APIs, so they are driven with raw requests in test_wire.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from kafkito.broker.security.scram import ScramMechanism as StoredMechanism
from kafkito.broker.security.scram import credential_from_password
from tests.support.brokers import ThreadBroker
from tests.support.waiting import DEADLINE_S

ANY = AclBindingFilter(
    ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
)


def binding(
    name: str,
    op: AclOperation = AclOperation.READ,
    perm: AclPermissionType = AclPermissionType.ALLOW,
    rt: ResourceType = ResourceType.TOPIC,
    pt: ResourcePatternType = ResourcePatternType.LITERAL,
    principal: str = "User:alice",
) -> AclBinding:
    return AclBinding(rt, name, pt, principal, "*", op, perm)


def key(b: AclBinding) -> tuple[object, ...]:
    return (b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation, b.permission_type)


@pytest.fixture
def admin(broker: ThreadBroker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def test_confluent_creates_lists_and_deletes_acls(admin: AdminClient) -> None:
    acls = [
        binding("orders"),
        binding("orders", AclOperation.WRITE, AclPermissionType.DENY, principal="User:*"),
        binding("ord", AclOperation.ALL, pt=ResourcePatternType.PREFIXED),
        binding("payments", rt=ResourceType.GROUP),
        binding("kafka-cluster", AclOperation.IDEMPOTENT_WRITE, rt=ResourceType.BROKER),
        binding("tx-", AclOperation.WRITE, rt=ResourceType.TRANSACTIONAL_ID, pt=ResourcePatternType.PREFIXED),
    ]
    for future in admin.create_acls(acls, request_timeout=DEADLINE_S).values():
        assert future.result() is None
    listed = admin.describe_acls(ANY, request_timeout=DEADLINE_S).result()
    assert sorted(map(key, listed)) == sorted(map(key, acls))

    # MATCH: every pattern that applies to the topic "orders" (the literal ones and the prefix "ord").
    match = AclBindingFilter(
        ResourceType.TOPIC,
        "orders",
        ResourcePatternType.MATCH,
        None,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    matched = admin.describe_acls(match, request_timeout=DEADLINE_S).result()
    assert sorted(map(key, matched)) == sorted(map(key, acls[:3]))
    denies = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.DENY
    )
    assert [key(b) for b in admin.describe_acls(denies, request_timeout=DEADLINE_S).result()] == [
        key(acls[1])
    ]

    deleted = admin.delete_acls([match], request_timeout=DEADLINE_S)[match].result()
    assert sorted(map(key, deleted)) == sorted(map(key, acls[:3]))
    left = admin.describe_acls(ANY, request_timeout=DEADLINE_S).result()
    assert sorted(map(key, left)) == sorted(map(key, acls[3:]))


def test_confluent_sees_kafkas_errors_for_invalid_acls(admin: AdminClient) -> None:
    bad_cluster = binding("not-the-cluster", AclOperation.ALTER, rt=ResourceType.BROKER)
    bad_principal = binding("orders", principal="alice")
    futures = admin.create_acls([bad_cluster, bad_principal], request_timeout=DEADLINE_S)
    for acl, future in futures.items():
        with pytest.raises(KafkaException) as e:
            future.result()
        assert e.value.args[0].name() == "INVALID_REQUEST", acl
    assert admin.describe_acls(ANY, request_timeout=DEADLINE_S).result() == []


def test_confluent_alters_and_describes_scram_credentials(broker: ThreadBroker, admin: AdminClient) -> None:
    sha256, sha512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
    upserts = [
        UserScramCredentialUpsertion("alice", ScramCredentialInfo(sha256, 4096), b"alice-secret", b"salt-a"),
        UserScramCredentialUpsertion("alice", ScramCredentialInfo(sha512, 8192), b"alice-secret"),
        UserScramCredentialUpsertion("bob", ScramCredentialInfo(sha512, 10000), b"bob-secret"),
    ]
    # Two operations on alice in one request: Kafka refuses the user (DUPLICATE_RESOURCE).
    results = admin.alter_user_scram_credentials(upserts, request_timeout=DEADLINE_S)
    assert results["bob"].result() is None
    with pytest.raises(KafkaException) as e:
        results["alice"].result()
    assert e.value.args[0].name() == "DUPLICATE_RESOURCE"
    for upsert in upserts[:2]:
        assert admin.alter_user_scram_credentials([upsert])["alice"].result() is None

    described = admin.describe_user_scram_credentials(["alice", "bob"], request_timeout=DEADLINE_S)
    alice = described["alice"].result()
    assert sorted((i.mechanism, i.iterations) for i in alice.scram_credential_infos) == [
        (sha256, 4096),
        (sha512, 8192),
    ]
    bob = described["bob"].result()
    assert [(i.mechanism, i.iterations) for i in bob.scram_credential_infos] == [(sha512, 10000)]
    # What the broker keeps is what a SCRAM server needs for the client's password and salt.
    assert broker.broker is not None and broker.broker.security_store is not None
    stored = broker.broker.security_store.scram.get("alice", StoredMechanism.SCRAM_SHA_256)
    assert stored == credential_from_password(StoredMechanism.SCRAM_SHA_256, "alice-secret", 4096, b"salt-a")

    deletion = UserScramCredentialDeletion("alice", sha256)
    assert admin.alter_user_scram_credentials([deletion])["alice"].result() is None
    with pytest.raises(KafkaException) as e:
        admin.alter_user_scram_credentials([deletion])["alice"].result()
    assert e.value.args[0].name() == "RESOURCE_NOT_FOUND"
    with pytest.raises(KafkaException) as e:
        admin.describe_user_scram_credentials(["nobody"])["nobody"].result()
    assert e.value.args[0].name() == "RESOURCE_NOT_FOUND"
    everyone = admin.describe_user_scram_credentials(request_timeout=DEADLINE_S).result()
    assert {
        u: [(i.mechanism, i.iterations) for i in d.scram_credential_infos] for u, d in everyone.items()
    } == {
        "alice": [(sha512, 8192)],
        "bob": [(sha512, 10000)],
    }


def test_confluent_refuses_iterations_out_of_range(admin: AdminClient) -> None:
    upsert = UserScramCredentialUpsertion(
        "carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 20000), b"pw", b"salt"
    )
    with pytest.raises(KafkaException) as e:
        admin.alter_user_scram_credentials([upsert], request_timeout=DEADLINE_S)["carol"].result()
    assert e.value.args[0].name() == "UNACCEPTABLE_CREDENTIAL"


def test_acls_and_credentials_survive_a_broker_restart(
    broker_factory: Callable[..., ThreadBroker], tmp_path: Path
) -> None:
    data = tmp_path / "restarted"
    first = broker_factory(data)
    admin = AdminClient({"bootstrap.servers": first.bootstrap})
    acl = binding("orders", AclOperation.DESCRIBE_CONFIGS)
    assert admin.create_acls([acl])[acl].result(DEADLINE_S) is None
    upsert = UserScramCredentialUpsertion(
        "dave", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"pw"
    )
    assert admin.alter_user_scram_credentials([upsert])["dave"].result(DEADLINE_S) is None
    first.stop()
    second = broker_factory(data)
    admin = AdminClient({"bootstrap.servers": second.bootstrap})
    assert [key(b) for b in admin.describe_acls(ANY).result(DEADLINE_S)] == [key(acl)]
    dave = admin.describe_user_scram_credentials(["dave"])["dave"].result(DEADLINE_S)
    assert [(i.mechanism, i.iterations) for i in dave.scram_credential_infos] == [
        (ScramMechanism.SCRAM_SHA_512, 4096)
    ]


def test_kafka_python_admin_acl_and_scram_calls(broker: ThreadBroker) -> None:
    from kafka.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        ResourcePattern,
        ResourcePatternFilter,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )
    from kafka.admin import ResourceType as KResourceType
    from kafka.admin import ScramMechanism as KScram
    from kafka.errors import NoError

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=int(DEADLINE_S * 1000))
    try:
        orders = ACL(
            "User:alice", "*", ACLOperation.WRITE, ACLPermissionType.ALLOW,
            ResourcePattern(KResourceType.TOPIC, "orders", ACLResourcePatternType.LITERAL),
        )  # fmt: skip
        group = ACL(
            "User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
            ResourcePattern(KResourceType.GROUP, "app-", ACLResourcePatternType.PREFIXED),
        )  # fmt: skip
        created = admin.create_acls([orders, group])
        assert created["succeeded"] == [orders, group] and created["failed"] == []

        everything = ACLFilter(
            None, None, ACLOperation.ANY, ACLPermissionType.ANY,
            ResourcePatternFilter(KResourceType.ANY, None, ACLResourcePatternType.ANY),
        )  # fmt: skip
        listed, error = admin.describe_acls(everything)
        assert error is NoError
        assert sorted(listed, key=repr) == sorted([orders, group], key=repr)

        only_groups = ACLFilter(
            None, None, ACLOperation.ANY, ACLPermissionType.ANY,
            ResourcePatternFilter(KResourceType.GROUP, "app-1", ACLResourcePatternType.MATCH),
        )  # fmt: skip
        [(_, deleted, delete_error)] = admin.delete_acls([only_groups])
        assert deleted == [group] and delete_error is NoError
        assert admin.describe_acls(everything)[0] == [orders]

        upsert = UserScramCredentialUpsertion("erin", KScram.SCRAM_SHA_256, "pw", iterations=4096)
        assert admin.alter_user_scram_credentials([upsert]) == {"erin": None}
        described = admin.describe_user_scram_credentials(["erin"])
        assert described["erin"]["credential_infos"] == [
            {"mechanism": KScram.SCRAM_SHA_256, "iterations": 4096}
        ]
        assert admin.alter_user_scram_credentials(
            [UserScramCredentialDeletion("erin", KScram.SCRAM_SHA_256)]
        ) == {"erin": None}
        assert admin.describe_user_scram_credentials(["erin"])["erin"]["error"] is not None
    finally:
        admin.close()

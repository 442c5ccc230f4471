"""Admin security calls of kafka-clients 4.4: createAcls/describeAcls/deleteAcls,
describeUserScramCredentials/alterUserScramCredentials, describeClientQuotas/alterClientQuotas."""

from __future__ import annotations

from tests.java_admin.conftest import JavaAdmin, unique
from tests.support.waiting import wait_until


def test_acls_created_described_deleted(admin: JavaAdmin) -> None:
    topic, user = unique("acl-topic"), f"User:{unique('alice')}"
    read = dict(resourceType="TOPIC", name=topic, principal=user, operation="READ")
    prefixed = dict(
        resourceType="GROUP",
        name="app-",
        patternType="PREFIXED",
        principal=user,
        operation="ALL",
        permission="DENY",
    )
    created = admin("createAcls", bindings=[read, prefixed])
    assert created == {
        f"TOPIC {topic} LITERAL {user} * READ ALLOW": {},
        f"GROUP app- PREFIXED {user} * ALL DENY": {},
    }
    mine = admin("describeAcls", filter=dict(principal=user))
    assert mine == sorted(created)
    assert admin("describeAcls", filter=dict(resourceType="TOPIC", name=topic, patternType="MATCH")) == [
        f"TOPIC {topic} LITERAL {user} * READ ALLOW"
    ]
    bad = admin(
        "createAcls", bindings=[dict(resourceType="TOPIC", name=topic, principal="alice", operation="READ")]
    )
    (refusal,) = bad.values()
    assert refusal["error"] == "InvalidRequestException"
    deleted = admin("deleteAcls", filters=[dict(principal=user, resourceType="GROUP"), dict(principal=user)])
    # Every filter of one request matches the ACLs as they were before it: the second deletes both too.
    assert deleted == {"0": [f"GROUP app- PREFIXED {user} * ALL DENY"], "1": sorted(created)}
    assert admin("describeAcls", filter=dict(principal=user)) == []


def test_scram_credentials_upserted_described_deleted(admin: JavaAdmin) -> None:
    user, other = unique("scram"), unique("nobody")
    twice = admin(
        "alterUserScramCredentials",
        upserts=[dict(user=user, mechanism="SCRAM-SHA-256", iterations=8192, password="secret"),
                 dict(user=user, mechanism="SCRAM-SHA-512", iterations=4096, password="secret")],
    )  # fmt: skip
    twice_message = "A user credential cannot be altered twice in the same request"
    assert twice == {user: {"error": "DuplicateResourceException", "message": twice_message}}
    for mechanism, iterations in (("SCRAM-SHA-256", 8192), ("SCRAM-SHA-512", 4096)):
        upsert = dict(user=user, mechanism=mechanism, iterations=iterations, password="secret")
        assert admin("alterUserScramCredentials", upserts=[upsert]) == {user: {}}
    described = admin(
        "describeUserScramCredentials", users=[user]
    )  # in no particular order (Kafka's differs)
    assert {u: sorted(infos) for u, infos in described.items()} == {
        user: ["SCRAM-SHA-256:8192", "SCRAM-SHA-512:4096"]
    }
    everyone = admin("describeUserScramCredentials", users=[])
    assert sorted(everyone[user]) == ["SCRAM-SHA-256:8192", "SCRAM-SHA-512:4096"]
    unknown = admin("describeUserScramCredentials", users=[other])[other]
    assert unknown["error"] == "ResourceNotFoundException"
    weak = dict(user=other, mechanism="SCRAM-SHA-256", iterations=10, password="x")
    too_few = admin("alterUserScramCredentials", upserts=[weak])
    assert too_few[other]["error"] == "UnacceptableCredentialException"
    deleted = admin("alterUserScramCredentials", deletions=[dict(user=user, mechanism="SCRAM-SHA-256")])
    assert deleted == {user: {}}
    assert admin("describeUserScramCredentials", users=[user]) == {user: ["SCRAM-SHA-512:4096"]}
    missing = admin("alterUserScramCredentials", deletions=[dict(user=other, mechanism="SCRAM-SHA-256")])
    assert missing[other]["error"] == "ResourceNotFoundException"


def test_client_quotas_altered_and_described(admin: JavaAdmin) -> None:
    user, client = unique("quota-user"), unique("quota-client")
    entity = {"user": user, "client-id": client}
    key = f"{{client-id={client}, user={user}}}"
    altered = admin("alterClientQuotas", alterations=[
        dict(entity=entity, ops={"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0}),
        dict(entity={"client-id": None}, ops={"request_percentage": 50.0}),
    ])  # fmt: skip
    assert altered == {key: {}, "{client-id=null}": {}}
    exact = {key: {"consumer_byte_rate": 2048.0, "producer_byte_rate": 1024.0}}
    # Kafka's broker answers from its metadata image, which applies the change a moment after.
    wait_until(lambda: admin("describeClientQuotas", components=[dict(type="user", match=user)]) == exact, 60,
               "the quotas described")  # fmt: skip
    defaults = admin("describeClientQuotas", components=[dict(type="client-id", default=True)], strict=True)
    assert defaults == {"{client-id=null}": {"request_percentage": 50.0}}, defaults
    removed = admin("alterClientQuotas", alterations=[
        dict(entity=entity, ops={"producer_byte_rate": None, "consumer_byte_rate": None}),
        dict(entity={"client-id": None}, ops={"request_percentage": None}),
    ])  # fmt: skip
    assert removed == {key: {}, "{client-id=null}": {}}
    wait_until(lambda: admin("describeClientQuotas", components=[dict(type="user", match=user)]) == {}, 60,
               "the quotas removed")  # fmt: skip
    bad = admin("alterClientQuotas", alterations=[dict(entity={"user": user}, ops={"no_such_quota": 1.0})])
    assert bad[f"{{user={user}}}"]["error"] == "InvalidRequestException"

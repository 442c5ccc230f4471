"""The security store survives a reopen, a crash (no close), a torn tail, compaction and a SIGKILL."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkito.broker.log.errors import KafkaStorageError
from kafkito.broker.security.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from kafkito.broker.security.quotas import QuotaOp
from kafkito.broker.security.scram import Deletion, ScramMechanism, Upsertion, salted_password
from kafkito.broker.security.store import SecurityStore
from kafkito.protocol.errors import ErrorCode
from tests.support.brokers import ProcessBroker
from tests.support.wire import WireClient

SHA512 = ScramMechanism.SCRAM_SHA_512


def acl(name: str, op: AclOperation = AclOperation.READ) -> AclBinding:
    return AclBinding(
        ResourceType.TOPIC, name, PatternType.PREFIXED, "User:alice", "*", op, AclPermissionType.ALLOW
    )


def fill(store: SecurityStore, n: int = 3) -> None:
    store.create_acls([acl(f"t{i}") for i in range(n)])
    store.delete_acls([AclFilter(resource_name="t0")])
    store.alter_quotas([([("user", "alice")], [QuotaOp("producer_byte_rate", 1000)])])
    store.alter_quotas([([("client-id", None)], [QuotaOp("request_percentage", 50.5)])])
    salt = b"s"
    store.alter_scram([], [Upsertion("alice", SHA512, 4096, salt, salted_password(SHA512, "pw", salt, 4096))])


def state(store: SecurityStore) -> tuple[object, ...]:
    return (
        sorted(store.acls.by_id.items()),
        store.quotas.by_entity,
        store.scram.by_user,
    )


def test_reopen_after_close_and_after_a_crash(tmp_path: Path) -> None:
    store = SecurityStore(tmp_path).load()
    fill(store)
    before = state(store)
    store.close()
    again = SecurityStore(tmp_path).load()
    assert state(again) == before
    assert len(again.acls) == 2
    assert (
        again.authorize("User:alice", "10.0.0.1", AclOperation.DESCRIBE, ResourceType.TOPIC, "t2-x") is True
    )
    assert again.authorize("User:alice", "10.0.0.1", AclOperation.READ, ResourceType.TOPIC, "t0") is None
    # Without close (a crash): what was written is in the file already.
    again.create_acls([acl("more")])
    after = state(again)
    assert state(SecurityStore(tmp_path).load()) == after


def test_a_torn_tail_is_cut_off_and_appends_go_on(tmp_path: Path) -> None:
    store = SecurityStore(tmp_path).load()
    fill(store)
    before = state(store)
    store.close()
    [log_file] = tmp_path.glob("security-*.log")
    with open(log_file, "ab") as f:
        f.write(b'0000004f 1234abcd [{"type": "AccessControlEntryRec')  # a write cut short by a crash
    reloaded = SecurityStore(tmp_path).load()
    assert state(reloaded) == before
    reloaded.create_acls([acl("after-the-tear")])
    reloaded.close()
    names = {a.resource_name for _, a in SecurityStore(tmp_path).load().acls}
    assert names == {"t1", "t2", "after-the-tear"}


def test_compaction_keeps_the_state_in_one_checkpoint_and_one_log(tmp_path: Path) -> None:
    store = SecurityStore(tmp_path, compact_bytes=2048)
    store.load()
    for i in range(60):
        store.create_acls([acl(f"topic-{i}")])
        if i % 3 == 0:
            store.delete_acls([AclFilter(resource_name=f"topic-{i}")])
        store.alter_quotas([([("user", f"u{i % 5}")], [QuotaOp("consumer_byte_rate", i + 1)])])
    fill(store)
    before = state(store)
    assert len(list(tmp_path.glob("security-*.checkpoint"))) == 1
    assert len(list(tmp_path.glob("security-*.log"))) == 1
    store.close()
    assert state(SecurityStore(tmp_path).load()) == before


def test_a_corrupt_checkpoint_is_a_storage_error(tmp_path: Path) -> None:
    store = SecurityStore(tmp_path, compact_bytes=256)
    store.load()
    fill(store, 10)
    store.close()
    [checkpoint] = tmp_path.glob("security-*.checkpoint")
    data = bytearray(checkpoint.read_bytes())
    data[30] ^= 0xFF
    checkpoint.write_bytes(bytes(data))
    with pytest.raises(KafkaStorageError):
        SecurityStore(tmp_path).load()


def test_a_failed_write_changes_nothing_and_answers_an_error(tmp_path: Path) -> None:
    store = SecurityStore(tmp_path).load()
    os.close(store._journal._fd)  # the disk goes away
    [error] = store.create_acls([acl("lost")])
    assert error is not None and error.code == ErrorCode.UNKNOWN_SERVER_ERROR
    assert len(store.acls) == 0
    store._journal._fd = -1


CREATE_ACLS, DESCRIBE_ACLS, ALTER_QUOTAS, DESCRIBE_QUOTAS, ALTER_SCRAM, DESCRIBE_SCRAM = (
    30,
    29,
    49,
    48,
    51,
    50,
)


def test_acknowledged_changes_survive_a_sigkilled_broker(
    broker_process: Callable[..., ProcessBroker],
) -> None:
    proc = broker_process()
    salt = b"salty"
    with WireClient(proc.bootstrap) as wire:
        created = wire.request(
            CREATE_ACLS,
            3,
            creations=[
                dict(
                    resource_type=2,
                    resource_name="orders",
                    resource_pattern_type=4,
                    principal="User:alice",
                    host="*",
                    operation=4,
                    permission_type=3,
                )
            ],
        )
        assert [r.error_code for r in created.results] == [0]
        quota = wire.request(
            ALTER_QUOTAS,
            1,
            entries=[
                dict(
                    entity=[dict(entity_type="user", entity_name="alice")],
                    ops=[dict(key="producer_byte_rate", value=2048.0, remove=False)],
                )
            ],
            validate_only=False,
        )
        assert [e.error_code for e in quota.entries] == [0]
        scram = wire.request(
            ALTER_SCRAM,
            0,
            deletions=[],
            upsertions=[
                dict(
                    name="alice",
                    mechanism=2,
                    iterations=4096,
                    salt=salt,
                    salted_password=salted_password(SHA512, "pw", salt, 4096),
                )
            ],
        )
        assert [r.error_code for r in scram.results] == [0]
    proc.kill()
    proc.start()
    with WireClient(proc.bootstrap) as wire:
        acls = wire.request(
            DESCRIBE_ACLS,
            3,
            resource_type_filter=1,
            resource_name_filter=None,
            pattern_type_filter=1,
            principal_filter=None,
            host_filter=None,
            operation=1,
            permission_type=1,
        )
        assert [
            (r.resource_name, r.pattern_type, [(a.principal, a.operation) for a in r.acls])
            for r in acls.resources
        ] == [("orders", 4, [("User:alice", 4)])]
        quotas = wire.request(DESCRIBE_QUOTAS, 1, components=[], strict=False)
        assert [
            ([(e.entity_type, e.entity_name) for e in q.entity], [(v.key, v.value) for v in q.values])
            for q in quotas.entries
        ] == [([("user", "alice")], [("producer_byte_rate", 2048.0)])]
        users = wire.request(DESCRIBE_SCRAM, 0, users=None)
        assert [
            (r.user, [(c.mechanism, c.iterations) for c in r.credential_infos]) for r in users.results
        ] == [("alice", [(2, 4096)])]


OPS = st.one_of(
    st.tuples(
        st.just("acl"), st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(list(AclOperation)[2:6])
    ),
    st.tuples(st.just("unacl"), st.sampled_from(["a", "b", "c", "d", None]), st.just(AclOperation.ANY)),
    st.tuples(st.just("quota"), st.sampled_from(["u1", "u2", None]), st.integers(0, 3)),
    st.tuples(st.just("scram"), st.sampled_from(["x", "y"]), st.sampled_from([0, 4096, 5000])),
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(OPS, max_size=60), st.sampled_from([256, 1024, 1 << 20]))
def test_any_history_reloads_to_the_same_state(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, Any, Any]], compact: int
) -> None:
    data = tmp_path_factory.mktemp("history")
    store = SecurityStore(data, compact_bytes=compact)
    store.load()
    for kind, name, arg in ops:
        if kind == "acl":
            store.create_acls([acl(str(name), AclOperation(arg))])
        elif kind == "unacl":
            store.delete_acls([AclFilter(resource_name=name)])
        elif kind == "quota":
            op = (
                QuotaOp("consumer_byte_rate", 1.0, remove=True)
                if arg == 0
                else QuotaOp("consumer_byte_rate", float(arg))
            )
            store.alter_quotas([([("user", name)], [op])])
        elif arg == 0:
            store.alter_scram([Deletion(str(name), SHA512)], [])
        else:
            store.alter_scram([], [Upsertion(str(name), SHA512, int(arg), b"s", b"k" * 64)])
    before = state(store)
    store.close()
    assert state(SecurityStore(data).load()) == before

"""franz-go (kgo and kadm): tests/go_clients/franzgo_compat run as subprocesses, talking JSON lines on
stdout, built from tests/go_clients/go.mod by `make install-clients` (or on first use)."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.compat.clients.base import (
    Consumer,
    Driver,
    GroupView,
    ProcessConsumer,
    ShareAcks,
    TopicView,
    TxnStep,
)
from tests.compat.records import Got, Rec
from tests.go_clients.programs import HERE as GO_CLIENTS
from tests.go_clients.programs import build

TIMEOUT_S = 90.0
_built: dict[str, Path] = {}
_build_lock = threading.Lock()


def program() -> Path:
    """The franzgo_compat executable, built once per process (Go's cache makes a rebuild quick)."""
    with _build_lock:
        if not _built:
            _built.update(build())
        return _built["franzgo_compat"]


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def _got(e: dict[str, Any]) -> Got:
    headers = tuple((k, _unb64(v) or b"") for k, v in e["headers"])
    return Got(
        e["partition"], int(e["offset"]), _unb64(e["key"]), _unb64(e["value"]), headers, e["timestamp"]
    )


def _records(recs: Sequence[Rec]) -> list[dict[str, Any]]:
    return [
        dict(partition=r.partition, key=_b64(r.key), value=_b64(r.value),
             headers=[[k, _b64(v)] for k, v in r.headers], timestamp=r.timestamp)
        for r in recs
    ]  # fmt: skip


def run(**cmd: Any) -> list[dict[str, Any]]:
    """One action of the program; its events, after checking it reported no error."""
    done = subprocess.run(
        [str(program()), json.dumps(cmd)], capture_output=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    errors = [e["error"] for e in events if e["type"] == "error"]
    assert done.returncode == 0 and not errors, (
        f"franzgo_compat {cmd['op']} exited {done.returncode}: {errors}\n{done.stderr.decode()[-3000:]}"
    )
    return events


class _GoConsumer(ProcessConsumer):
    def on_stdout(self, line: bytes) -> None:
        e = json.loads(line)
        kind = e["type"]
        if kind == "record":
            self.feed.add(_got(e))
            if e.get("delivery"):
                self.feed.delivered(e["partition"], int(e["offset"]), e["delivery"])
        elif kind == "assigned":
            self.feed.group_assigned(e["partitions"])
        elif kind == "revoked":
            self.feed.group_revoked(e["partitions"])
            if e.get("owned") is not None:
                self.feed.assigned(e["owned"])
        elif kind == "ready":
            self.feed.ready.set()
        elif kind == "error":
            self.feed.fail(e["error"])
        else:
            self.feed.note(line.decode().strip())

    def request_stop(self) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(b"stop\n")
        self.proc.stdin.flush()


class FranzGoDriver(Driver):
    name = "franz-go"
    not_applicable: dict[str, str] = {}
    notes = {
        "consume-earliest": "ConsumePartitions (no group) from AtStart()",
        "consume-latest": "ConsumePartitions at the end offsets kadm.ListEndOffsets gave (the client does "
        "not report when it has resolved AtEnd())",
        "group-rebalance": "BlockRebalanceOnPoll with auto commit off: each poll's records are committed "
        "(CommitUncommittedOffsets) before AllowRebalance lets a rebalance go on",
        "commit-fetch": "committed with metadata and read back with kadm (CommitAllOffsets, FetchOffsets)",
        "transactions": "franz-go sends offsets to a transaction only from a GroupTransactSession (a member "
        "of the group); for a group nobody joined, the suite sends AddOffsetsToTxn and TxnOffsetCommit with "
        "kmsg and the client's ProducerID()",
        "consumer-protocol": "kgo.ServerSideBalancer() with the default cooperative-sticky balancer (the "
        "broker's uniform assignor); franz-go falls back to the classic protocol without "
        "ConsumerGroupHeartbeat v1, so the group's type is checked with kadm (ListGroups by type, "
        "ConsumerGroupDescribe)",
        "old-protocol": "kgo.MaxVersions(kversion.V0_10_0()): ApiVersions v0, Produce v2 (message format "
        "v1), Fetch v2",
        "share-group": "kgo.ShareGroup; the group config set with a kmsg IncrementalAlterConfigs (kadm has "
        "no GROUP config helper); implicit mode marks the last poll's records accepted before closing "
        "(franz-go's Close releases records left unmarked); explicit mode pauses the topic once done, so "
        "that the client's background fetches acquire nothing more",
    }

    @property
    def version(self) -> str:
        found = re.search(r"github.com/twmb/franz-go v(\S+)", (GO_CLIENTS / "go.mod").read_text())
        assert found, "franz-go is not in tests/go_clients/go.mod"
        return found[1]

    def metadata(self, bootstrap: str, topic: str) -> TopicView:
        (e,) = run(op="metadata", bootstrap=bootstrap, topic=topic)
        brokers = sorted((b[0], b[1], b[2]) for b in e["brokers"])
        return TopicView(brokers, {p: leader for p, leader in e["partitions"]}, e["clusterId"])

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        (e,) = run(op="create-topic", bootstrap=bootstrap, topic=topic, partitions=partitions)
        assert e["partitions"] == partitions, e

    def delete_topic(self, bootstrap: str, topic: str) -> None:
        run(op="delete-topic", bootstrap=bootstrap, topic=topic)

    def list_topics(self, bootstrap: str) -> set[str]:
        (e,) = run(op="list-topics", bootstrap=bootstrap)
        return set(e["topics"])

    def produce(self, bootstrap: str, topic: str, recs: Sequence[Rec], codec: str) -> None:
        run(op="produce", bootstrap=bootstrap, topic=topic, records=_records(recs), codec=codec)

    def transact(self, bootstrap: str, topic: str, transactional_id: str, steps: Sequence[TxnStep]) -> None:
        plan = [
            dict(records=_records(s.records), commit=s.commit, group=s.group,
                 offsets={str(p): o for p, o in (s.offsets or {}).items()})
            for s in steps
        ]  # fmt: skip
        events = run(
            op="transaction", bootstrap=bootstrap, topic=topic, transactionalId=transactional_id, steps=plan
        )
        ended = [e["commit"] for e in events if e["type"] == "transaction"]
        assert ended == [s.commit for s in steps], f"transactions ended {ended}"

    def _consumer(self, name: str, **cmd: Any) -> Consumer:
        return _GoConsumer(name, [str(program()), json.dumps(dict(name=name, **cmd))])

    def reader(self, bootstrap: str, topic: str, partitions: int, start: str) -> Consumer:
        return self._consumer(
            f"franzgo-reader-{topic}",
            op="read",
            bootstrap=bootstrap,
            topic=topic,
            partitions=partitions,
            start=start,
        )

    def member(self, bootstrap: str, group: str, topic: str, name: str, assignor: str = "range") -> Consumer:
        return self._consumer(
            name,
            op="member",
            bootstrap=bootstrap,
            topic=topic,
            group=group,
            assignor=assignor,
            protocol="classic",
        )

    def new_protocol_member(self, bootstrap: str, group: str, topic: str, name: str) -> Consumer:
        return self._consumer(
            name, op="member", bootstrap=bootstrap, topic=topic, group=group, protocol="consumer"
        )

    def group_type(self, bootstrap: str, group: str) -> str:
        (e,) = run(op="group-type", bootstrap=bootstrap, group=group)
        return str(e["groupType"])

    def set_group_config(self, bootstrap: str, group: str, name: str, value: str) -> None:
        run(op="set-group-config", bootstrap=bootstrap, group=group, configName=name, configValue=value)

    def share_member(
        self, bootstrap: str, group: str, topic: str, name: str, acks: ShareAcks | None = None
    ) -> Consumer:
        explicit = (
            None if acks is None else [dict(partition=p, offset=o, kind=k) for (p, o), k in acks.items()]
        )
        return self._consumer(name, op="share", bootstrap=bootstrap, topic=topic, group=group, acks=explicit)

    def commit_and_fetch(
        self, bootstrap: str, group: str, topic: str, offsets: dict[int, int]
    ) -> dict[int, int]:
        (e,) = run(
            op="commit-fetch", bootstrap=bootstrap, group=group, topic=topic,
            offsets={str(p): o for p, o in offsets.items()},
        )  # fmt: skip
        return {p: o for p, o, _ in e["partitions"]}

    def describe_group(self, bootstrap: str, group: str) -> GroupView:
        (e,) = run(op="describe-group", bootstrap=bootstrap, group=group)
        members = [
            (client, {t: sorted(ps) for t, ps in assignment.items()}) for client, assignment in e["members"]
        ]
        return GroupView(e["listed"], e["protocolType"], e["state"], e["protocol"], members)

    def old_protocol(self, bootstrap: str, topic: str, recs: Sequence[Rec]) -> list[Got]:
        events = run(op="old-protocol", bootstrap=bootstrap, topic=topic, records=_records(recs))
        return [_got(e) for e in events if e["type"] == "record"]


def round_trip(bootstrap: str, ca: str | None, mechanism: str | None, user: str | None, password: str | None,
               topic: str, group: str) -> int:  # fmt: skip
    """The security scenario's round trip (produce 10, consume them in a group, commit): the offset the
    group committed, as kadm reads it back."""
    login = dict(ca=ca or "", mechanism=mechanism or "", user=user or "", password=password or "")
    (e,) = run(op="round-trip", bootstrap=bootstrap, topic=topic, group=group, login=login)
    return int(e["committed"])


def login_error(
    bootstrap: str, ca: str | None, mechanism: str | None, user: str | None, password: str | None
) -> str:
    """What the client says when its login is refused ("" when it was not)."""
    login = dict(ca=ca or "", mechanism=mechanism or "", user=user or "", password=password or "")
    (e,) = run(op="login", bootstrap=bootstrap, login=login)
    return str(e["error"])

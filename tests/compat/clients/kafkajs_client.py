"""KafkaJS: node scripts (tests/compat/node/client.js) run as subprocesses, talking JSON lines on stdout."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.compat.clients.base import Consumer, Driver, GroupView, ProcessConsumer, TopicView, TxnStep
from tests.compat.records import Got, Rec, RecordStyle

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
TIMEOUT_S = 90.0


def _node() -> list[str]:
    node = shutil.which("node")
    assert node, "node (>= 20) is needed for the KafkaJS client"
    assert (NODE_DIR / "node_modules" / "kafkajs").is_dir(), "KafkaJS is installed by `make install-clients`"
    return [node, str(NODE_DIR / "client.js")]


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def _got(e: dict[str, Any]) -> Got:
    headers = tuple((k, _unb64(v) or b"") for k, v in e["headers"])
    return Got(
        e["partition"], int(e["offset"]), _unb64(e["key"]), _unb64(e["value"]), headers, int(e["timestamp"])
    )


def _records(recs: Sequence[Rec]) -> list[dict[str, Any]]:
    return [
        dict(partition=r.partition, key=_b64(r.key), value=_b64(r.value),
             headers=[[k, _b64(v)] for k, v in r.headers], timestamp=r.timestamp)
        for r in recs
    ]  # fmt: skip


class _NodeConsumer(ProcessConsumer):
    def on_stdout(self, line: bytes) -> None:
        e = json.loads(line)
        kind = e["type"]
        if kind == "record":
            self.feed.add(_got(e))
        elif kind == "assigned":
            self.feed.group_assigned(e["partitions"])
        elif kind == "ready":
            self.feed.ready.set()
        elif kind == "crash":
            self.feed.note(f"crash (restart={e['restart']}): {e['error']}")
            if not e["restart"]:
                self.feed.fail(e["error"])
        elif kind == "error":
            self.feed.fail(e["error"])
        else:
            self.feed.note(line.decode().strip())

    def request_stop(self) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(b"stop\n")
        self.proc.stdin.flush()


class KafkaJSDriver(Driver):
    name = "KafkaJS"
    codecs = ("none", "gzip", "snappy")
    style = RecordStyle(interleaved_headers=False)
    not_applicable = {
        "consumer-protocol": "not supported by the client: KafkaJS has only the classic group protocol "
        "(JoinGroup/SyncGroup, client-side assignors)",
        "old-protocol": "not supported by the client: KafkaJS always negotiates versions with ApiVersions "
        "and writes message format v2 only",
        "share-group": "not supported by the client: KafkaJS 2.2 has no share consumer (KIP-932)",
        "produce-lz4": "KafkaJS ships gzip only; snappy comes from kafkajs-snappy, but the LZ4 codecs are "
        "third-party native add-ons",
        "produce-zstd": "KafkaJS ships gzip only; the ZSTD codec (@kafkajs/zstd) is a native add-on",
    }

    notes = {
        "commit-fetch": "committed with admin.setOffsets (no metadata), read with admin.fetchOffsets",
        "consume-earliest": "KafkaJS has no assign(): a consumer alone in a new group, fromBeginning",
        "consume-latest": "KafkaJS has no assign(): a consumer alone in a new group, counted as positioned "
        "once it has fetched",
        "transactions": "KafkaJS's producer.transaction(); offsets with transaction.sendOffsets, which "
        "names the group only (no generation or member: KIP-447's fencing is not in KafkaJS)",
        "cross-client-group": "KafkaJS ships no range assignor: the suite's script brings one (custom "
        "partitionAssigners are KafkaJS's extension point)",
    }

    @property
    def version(self) -> str:
        meta = json.loads((NODE_DIR / "node_modules" / "kafkajs" / "package.json").read_text())
        return str(meta["version"])

    def _run(self, **cmd: Any) -> list[dict[str, Any]]:
        done = subprocess.run(
            [*_node(), json.dumps(cmd)],
            cwd=NODE_DIR,
            capture_output=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        errors = [e["error"] for e in events if e["type"] == "error"]
        assert done.returncode == 0 and not errors, (
            f"node client.js {cmd['op']} exited {done.returncode}: {errors}\n{done.stderr.decode()[-3000:]}"
        )
        return events

    def metadata(self, bootstrap: str, topic: str) -> TopicView:
        (e,) = self._run(op="metadata", bootstrap=bootstrap, topic=topic)
        brokers = sorted((b[0], b[1], b[2]) for b in e["brokers"])
        return TopicView(brokers, {p: leader for p, leader in e["partitions"]}, e["clusterId"])

    def create_topic(self, bootstrap: str, topic: str, partitions: int) -> None:
        (e,) = self._run(op="create-topic", bootstrap=bootstrap, topic=topic, partitions=partitions)
        assert e["created"] is True, f"createTopics answered {e['created']}"

    def delete_topic(self, bootstrap: str, topic: str) -> None:
        self._run(op="delete-topic", bootstrap=bootstrap, topic=topic)

    def list_topics(self, bootstrap: str) -> set[str]:
        (e,) = self._run(op="list-topics", bootstrap=bootstrap)
        return set(e["topics"])

    def produce(self, bootstrap: str, topic: str, recs: Sequence[Rec], codec: str) -> None:
        records = _records(recs)
        self._run(op="produce", bootstrap=bootstrap, topic=topic, records=records, codec=codec)

    def transact(self, bootstrap: str, topic: str, transactional_id: str, steps: Sequence[TxnStep]) -> None:
        plan = [
            dict(
                records=_records(step.records),
                commit=step.commit,
                offsets=None if step.group is None or not step.offsets
                else dict(group=step.group, topic=topic, partitions=step.offsets),
            )
            for step in steps
        ]  # fmt: skip
        events = self._run(
            op="transaction", bootstrap=bootstrap, topic=topic, transactionalId=transactional_id, steps=plan
        )
        ended = [e["commit"] for e in events if e["type"] == "transaction"]
        assert ended == [s.commit for s in steps], f"transactions ended {ended}"

    def _consumer(self, name: str, **cmd: Any) -> Consumer:
        return _NodeConsumer(
            name, [*_node(), json.dumps(dict(op="consume", name=name, **cmd))], cwd=str(NODE_DIR)
        )

    def reader(self, bootstrap: str, topic: str, partitions: int, start: str) -> Consumer:
        # KafkaJS has no assign(): a reader is a consumer alone in a group of its own.
        group = f"reader-{topic}-{uuid.uuid4().hex[:8]}"
        return self._consumer(
            f"kafkajs-reader-{topic}", bootstrap=bootstrap, topic=topic, group=group, start=start
        )

    def member(self, bootstrap: str, group: str, topic: str, name: str, assignor: str = "range") -> Consumer:
        return self._consumer(
            name, bootstrap=bootstrap, topic=topic, group=group, assignor=assignor, commit=True
        )

    def commit_and_fetch(
        self, bootstrap: str, group: str, topic: str, offsets: dict[int, int]
    ) -> dict[int, int]:
        (e,) = self._run(op="commit-fetch", bootstrap=bootstrap, group=group, topic=topic, offsets=offsets)
        return {p: o for p, o, _ in e["partitions"]}

    def describe_group(self, bootstrap: str, group: str) -> GroupView:
        (e,) = self._run(op="describe-group", bootstrap=bootstrap, group=group)
        assert e["errorCode"] == 0, f"describeGroups error {e['errorCode']}"
        members = [
            (client, {t: sorted(ps) for t, ps in assignment.items()}) for client, assignment in e["members"]
        ]
        listed = any(g == group for g, _ in e["listed"])
        return GroupView(listed, e["protocolType"], e["state"], e["protocol"], members)

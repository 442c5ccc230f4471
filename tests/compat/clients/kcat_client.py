"""kcat: the command-line client (Debian package), run as subprocesses; JSON envelopes on stdout."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
from collections.abc import Sequence
from itertools import groupby
from typing import Any

from tests.compat.clients.base import (
    HEARTBEAT_INTERVAL_MS,
    RECONNECT_BACKOFF_MAX_MS,
    SESSION_TIMEOUT_MS,
    Consumer,
    Driver,
    GroupView,
    ProcessConsumer,
    TopicView,
)
from tests.compat.records import Got, Rec, RecordStyle

TIMEOUT_S = 60.0
_EOF = re.compile(rb"Reached end of topic (\S+) \[(\d+)\] at offset (\d+)")
_ASSIGNED = re.compile(rb"rebalanced \(memberid [^)]*\): assigned: (.*)$")
_PARTITION = re.compile(rb"\[(\d+)\]")


def kcat() -> str:
    path = shutil.which("kcat")
    assert path, "kcat is installed by `make install-clients` (Debian package kcat)"
    return path


def _x(**props: Any) -> list[str]:
    out = []
    for k, v in props.items():
        out += ["-X", f"{k.replace('_', '.')}={v}"]
    return out


def _bytes(s: str | None) -> bytes | None:
    return None if s is None else s.encode()


def _got(line: bytes) -> Got:
    m = json.loads(line)
    flat = m.get("headers") or []
    headers = tuple((flat[i], flat[i + 1].encode()) for i in range(0, len(flat), 2))
    return Got(m["partition"], m["offset"], _bytes(m["key"]), _bytes(m["payload"]), headers, m.get("ts", -1))


class _KcatConsumer(ProcessConsumer):
    """Records arrive as -J lines on stdout; positions and assignments are reported on stderr."""

    def __init__(self, name: str, argv: list[str], partitions: int | None = None) -> None:
        super().__init__(name, argv)
        self.partitions = partitions
        self._at_end: set[int] = set()

    def on_stdout(self, line: bytes) -> None:
        if line.strip():
            self.feed.add(_got(line))

    def on_stderr(self, line: bytes) -> None:
        super().on_stderr(line)
        if (m := _EOF.search(line)) and self.partitions is not None:
            self._at_end.add(int(m.group(2)))
            if len(self._at_end) == self.partitions:
                self.feed.ready.set()
        elif m := _ASSIGNED.search(line.rstrip()):
            self.feed.assigned([int(p) for p in _PARTITION.findall(m.group(1))])
        elif b"ERROR" in line and b"FATAL" in line:
            self.feed.fail(line.decode(errors="replace").strip())

    def request_stop(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)  # kcat closes the consumer: commits and leaves


class KcatDriver(Driver):
    name = "kcat"
    style = RecordStyle(binary=False, per_record_headers=False, explicit_timestamps=False, null_values=False)
    not_applicable = {
        "consumer-protocol": "not supported by the client: kcat 1.7.1 is built on librdkafka 2.0.2, older "
        "than librdkafka's KIP-848 consumer (group.protocol=consumer)",
        "share-group": "not supported by the client: kcat 1.7.1 has no share consumer mode, and its "
        "librdkafka 2.0.2 predates librdkafka's KIP-932 share consumer",
        "topic-admin": "kcat has no admin commands (it can only list metadata)",
        "commit-fetch": "kcat cannot commit chosen offsets or read committed ones: its -G consumer commits "
        "automatically, which the group and broker-restart scenarios check",
        "list-describe-groups": "kcat cannot list or describe consumer groups",
        "transactions": "kcat's -X transactional.id wraps a whole run in one transaction, committed when "
        "its input ends and aborted on a signal: it cannot abort on demand once its records are "
        "acknowledged, nor send a group's offsets to a transaction",
    }

    notes = {
        "group-rebalance": "kcat has no commit command: librdkafka auto-commits what kcat printed, and "
        "commits on revoke and on close",
        "broker-restart": "run with -E, so that kcat does not exit on the transport errors of the restart",
    }

    @property
    def version(self) -> str:
        out = subprocess.run([kcat(), "-V"], capture_output=True, text=True, timeout=TIMEOUT_S).stdout
        m = re.search(r"Version (\S+) .*librdkafka (\S+)", out)
        return f"{m.group(1)} (librdkafka {m.group(2)})" if m else out.strip()

    def _run(self, args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        done = subprocess.run([kcat(), *args], input=stdin, capture_output=True, timeout=TIMEOUT_S)
        assert done.returncode == 0, f"kcat {args} exited {done.returncode}: {done.stderr.decode()[-2000:]}"
        return done

    def metadata(self, bootstrap: str, topic: str) -> TopicView:
        md = json.loads(self._run(["-b", bootstrap, "-L", "-J", "-t", topic]).stdout)
        brokers = []
        for b in md["brokers"]:
            host, _, port = b["name"].rpartition(":")
            brokers.append((b["id"], host, int(port)))
        (t,) = [t for t in md["topics"] if t["topic"] == topic]
        return TopicView(sorted(brokers), {p["partition"]: p["leader"] for p in t["partitions"]})

    def produce(self, bootstrap: str, topic: str, recs: Sequence[Rec], codec: str) -> None:
        compression = ["-z", codec] if codec in ("gzip", "snappy", "lz4") else _x(compression_codec=codec)
        # One run per partition: -p picks it, -H sets the headers of every record of the run, a tab
        # separates key and value on each line (a line without one has a null key).
        for partition, group in groupby(sorted(recs, key=lambda r: r.partition), key=lambda r: r.partition):
            batch = list(group)
            headers = batch[0].headers
            assert all(r.headers == headers for r in batch), "kcat sets one header set per run"
            lines = b"".join(
                ((r.key + b"\t") if r.key is not None else b"") + (r.value or b"") + b"\n" for r in batch
            )
            header_args = [a for k, v in headers for a in ("-H", f"{k}={v.decode()}")]
            self._run(
                ["-b", bootstrap, "-P", "-t", topic, "-p", str(partition), "-K", "\t", *header_args,
                 *compression, *_x(linger_ms=100)],
                stdin=lines,
            )  # fmt: skip

    def reader(self, bootstrap: str, topic: str, partitions: int, start: str) -> Consumer:
        offset = "beginning" if start == "earliest" else "end"
        argv = [kcat(), "-b", bootstrap, "-C", "-t", topic, "-o", offset, "-J", "-u"]
        reader = _KcatConsumer(f"kcat-reader-{topic}", argv, partitions)
        reader.feed.assigned(range(partitions))
        return reader

    def member(self, bootstrap: str, group: str, topic: str, name: str, assignor: str = "range") -> Consumer:
        # kcat has no commit command: its balanced consumer auto-commits what it has printed, and
        # librdkafka commits those offsets when partitions are revoked or the consumer closes.
        props = _x(
            client_id=name, partition_assignment_strategy=assignor,
            session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            auto_offset_reset="earliest", auto_commit_interval_ms=100,
            reconnect_backoff_max_ms=RECONNECT_BACKOFF_MAX_MS,
        )  # fmt: skip
        # -E: carry on through transport errors (a broker restart) instead of exiting.
        return _KcatConsumer(name, [kcat(), "-b", bootstrap, "-G", group, "-J", "-u", "-E", *props, topic])

    def commit_and_fetch(
        self, bootstrap: str, group: str, topic: str, offsets: dict[int, int]
    ) -> dict[int, int]:
        raise AssertionError("not applicable")

    def old_protocol(self, bootstrap: str, topic: str, recs: Sequence[Rec]) -> list[Got]:
        old = _x(api_version_request="false", broker_version_fallback="0.9.0")
        for partition, group in groupby(sorted(recs, key=lambda r: r.partition), key=lambda r: r.partition):
            lines = b"".join(
                ((r.key + b"\t") if r.key is not None else b"") + (r.value or b"") + b"\n" for r in group
            )
            self._run(
                ["-b", bootstrap, "-P", "-t", topic, "-p", str(partition), "-K", "\t", *old], stdin=lines
            )
        done = subprocess.run(
            [kcat(), "-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-J", "-u", *old],
            capture_output=True,
            timeout=120,  # a bound for a hung client, never a performance threshold
            check=True,
        )
        return [_got(line) for line in done.stdout.splitlines() if line.strip()]

    def describe_group(self, bootstrap: str, group: str) -> GroupView:
        raise AssertionError("not applicable")

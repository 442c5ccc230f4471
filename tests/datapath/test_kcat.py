"""kcat (librdkafka 2.0, C) produces and consumes through kafkito; Python clients read what it wrote."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.support.brokers import ThreadBroker

from .clients import Rec, consume_kafka_python, produce_confluent

N = 500


def kcat(*args: str, stdin: str | None = None) -> str:
    path = shutil.which("kcat")
    assert path, "kcat is installed by `make install-clients`"
    done = subprocess.run([path, *args], input=stdin, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def kcat_consume(bootstrap: str, topic: str, partition: int) -> list[dict[str, object]]:
    out = kcat("-C", "-b", bootstrap, "-t", topic, "-p", str(partition), "-o", "beginning", "-e", "-J")
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy"])
def test_kcat_produce_then_kcat_and_kafka_python_consume(broker: ThreadBroker, codec: str) -> None:
    topic = f"kcat-{codec}"
    lines = [f"key-{i}:value {i} " + "x" * (i % 50) for i in range(N)]
    kcat(
        "-P", "-b", broker.bootstrap, "-t", topic, "-p", "0", "-K", ":", "-z", codec,
        "-H", "origin=kcat", "-H", "n=1",
        stdin="\n".join(lines) + "\n",
    )  # fmt: skip

    consumed = kcat_consume(broker.bootstrap, topic, 0)
    assert [(m["offset"], m["key"], m["payload"]) for m in consumed] == [
        (i, f"key-{i}", line.split(":", 1)[1]) for i, line in enumerate(lines)
    ]
    assert all(m["headers"] == ["origin", "kcat", "n", "1"] for m in consumed)

    got = consume_kafka_python(broker.bootstrap, topic, {0: N})[0]
    assert [(r.key, r.value, r.headers) for r in got] == [
        (f"key-{i}".encode(), line.split(":", 1)[1].encode(), (("origin", b"kcat"), ("n", b"1")))
        for i, line in enumerate(lines)
    ]
    assert [r.timestamp for r in got] == [m["ts"] for m in consumed]


def test_confluent_produce_then_kcat_consumes(broker: ThreadBroker) -> None:
    topic = "to-kcat"
    recs = [
        Rec(
            0,
            f"k{i}".encode(),
            f"v{i}".encode() * (1 + i % 7),
            (("h", f"{i}".encode()),),
            1_700_000_000_000 + i,
        )
        for i in range(N)
    ]
    broker.call(lambda: broker.broker.logs.create_topic(topic, 1))  # type: ignore[union-attr]
    produce_confluent(broker.bootstrap, topic, recs, compression="zstd")
    consumed = kcat_consume(broker.bootstrap, topic, 0)
    assert [(m["key"], m["payload"], m["headers"], m["ts"]) for m in consumed] == [
        (r.key.decode(), r.value.decode(), ["h", r.headers[0][1].decode()], r.timestamp)  # type: ignore[union-attr]
        for r in recs
    ]

"""The cost of TLS (and of SASL/SCRAM over it) against plaintext, in one run of one broker.

Run: .venv/bin/python bench/tls.py [--mb 50] [--runs 3] [--connections 200]

One `kafkito serve` process listens on PLAINTEXT, SSL and SASL_SSL (SCRAM-SHA-512) with certificates
from `kafkito certs`. Per listener, interleaved, each run produces `--mb` MiB of 1 KiB records with one
confluent-kafka producer (linger.ms=5, acks=all) into a topic of its own and reads them back with one
consumer: MB/s and the broker's CPU seconds per GiB. Connection set-up opens `--connections`
connections one after another, each answering ApiVersions (and, on SASL_SSL, the whole SCRAM login:
the client's PBKDF2 of 4096 iterations included, as every real client pays it): median milliseconds
per connection and the broker's CPU milliseconds per connection. Medians over the runs.
"""

from __future__ import annotations

import argparse
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from procs import cpu_seconds, free_port, kafkito_executable, wait_for_port  # bench/procs.py
from producing import produce_waiting  # bench/producing.py

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kafkito.broker.auth.certs import write_set
from kafkito.protocol.codec import RESPONSES, build_request
from tests.security.sasl_wire import ScramClient

RECORD = 1024
USER, PASSWORD = "bench", "bench-secret"
LISTENERS = ("PLAINTEXT", "SSL", "SASL_SSL")


def _serve(data: str, certs: Path, ports: dict[str, int]) -> subprocess.Popen[bytes]:
    props = {
        "listeners": ",".join(f"{name}://127.0.0.1:{ports[name]}" for name in LISTENERS),
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(certs / "broker-keystore.pem"),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certs / "ca.pem"),
    }
    sets = [arg for name, value in props.items() for arg in ("--set", f"{name}={value}")]
    cmd = [kafkito_executable(), "serve", "--data-dir", data, "--log-level", "warning", *sets]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _client_conf(listener: str, port: int, ca: str) -> dict[str, Any]:
    conf: dict[str, Any] = {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": listener}
    if listener != "PLAINTEXT":
        conf["ssl.ca.location"] = ca
    if listener == "SASL_SSL":
        conf.update({"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": USER, "sasl.password": PASSWORD})
    return conf


def _produce(conf: dict[str, Any], topic: str, count: int) -> float:
    from confluent_kafka import Producer

    producer = Producer({**conf, "linger.ms": 5, "acks": "all"})
    payload = os.urandom(RECORD)
    producer.list_topics(timeout=10)
    t0 = time.perf_counter()
    for _ in range(count):
        produce_waiting(producer, topic, payload)
        producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("records left undelivered")
    return time.perf_counter() - t0


def _consume(conf: dict[str, Any], topic: str, count: int) -> float:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({**conf, "group.id": "bench", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    seen, t0 = 0, time.perf_counter()
    while seen < count:
        for m in consumer.consume(num_messages=100, timeout=1.0):
            if m.error() is None:
                seen += 1
        if time.perf_counter() - t0 > 300:
            raise TimeoutError("consume took too long")
    elapsed = time.perf_counter() - t0
    consumer.close()
    return elapsed


def _frame(api_key: int, version: int, **fields: Any) -> bytes:
    request = build_request(api_key, version, **fields)
    request.with_header(correlation_id=1, client_id="bench")
    return bytes(request.encode(header=True, framed=True))


def _recv(sock: socket.socket, api_key: int, version: int) -> Any:
    size = int.from_bytes(_read(sock, 4), "big")
    return RESPONSES[api_key].decode(_read(sock, size), version=version, header=True)


def _read(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def _connect_once(listener: str, port: int, ctx: ssl.SSLContext) -> None:
    raw = socket.create_connection(("127.0.0.1", port))
    plain = listener == "PLAINTEXT"
    sock: socket.socket = raw if plain else ctx.wrap_socket(raw, server_hostname="127.0.0.1")
    with sock:
        sock.sendall(_frame(18, 0))
        _recv(sock, 18, 0)
        if listener == "SASL_SSL":
            scram = ScramClient(USER, PASSWORD)
            sock.sendall(_frame(17, 1, mechanism="SCRAM-SHA-512"))
            _recv(sock, 17, 1)
            sock.sendall(_frame(36, 2, auth_bytes=scram.first()))
            first = _recv(sock, 36, 2)
            sock.sendall(_frame(36, 2, auth_bytes=scram.final(first.auth_bytes)))
            if _recv(sock, 36, 2).error_code != 0:
                raise RuntimeError("SCRAM login failed")


def _connections(listener: str, port: int, ca: str, n: int, pid: int) -> tuple[float, float]:
    """(median ms per connection, broker CPU ms per connection)."""
    ctx = ssl.create_default_context(cafile=ca)
    times = []
    cpu0 = cpu_seconds(pid)
    for _ in range(n):
        t0 = time.perf_counter()
        _connect_once(listener, port, ctx)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, (cpu_seconds(pid) - cpu0) * 1000 / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--connections", type=int, default=200)
    args = parser.parse_args()
    count = args.mb * 1024 * 1024 // RECORD
    results: dict[str, list[tuple[float, ...]]] = {name: [] for name in LISTENERS}
    with tempfile.TemporaryDirectory() as data, tempfile.TemporaryDirectory() as certs_dir:
        certs = Path(certs_dir)
        write_set(certs, ["localhost", "127.0.0.1"], [])
        add_user = ["users", "add", USER, "--password", PASSWORD, "--data-dir", data]
        subprocess.run([kafkito_executable(), *add_user], check=True, stdout=subprocess.DEVNULL)
        ports = {name: free_port() for name in LISTENERS}
        proc = _serve(data, certs, ports)
        try:
            for port in ports.values():
                wait_for_port(port)
            ca = str(certs / "ca.pem")
            for run in range(args.runs):
                for name in LISTENERS:
                    conf = _client_conf(name, ports[name], ca)
                    topic = f"bench-{name.lower()}-{run}"
                    cpu0 = cpu_seconds(proc.pid)
                    produce_s = _produce(conf, topic, count)
                    cpu1 = cpu_seconds(proc.pid)
                    consume_s = _consume(conf, topic, count)
                    cpu2 = cpu_seconds(proc.pid)
                    conn_ms, conn_cpu = _connections(name, ports[name], ca, args.connections, proc.pid)
                    gib = args.mb / 1024
                    results[name].append((args.mb / produce_s, args.mb / consume_s, (cpu1 - cpu0) / gib,
                                          (cpu2 - cpu1) / gib, conn_ms, conn_cpu))  # fmt: skip
        finally:
            proc.terminate()
            proc.wait(30)
    base = [statistics.median(col) for col in zip(*results["PLAINTEXT"], strict=True)]
    print("| listener | produce MB/s | consume MB/s | vs plaintext (p/c) | broker CPU s/GiB (p/c) "
          "| connection set-up ms | broker CPU ms/connection |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name in LISTENERS:
        m = [statistics.median(col) for col in zip(*results[name], strict=True)]
        print(f"| {name} | {m[0]:.1f} | {m[1]:.1f} | {m[0] / base[0]:.2f}x / {m[1] / base[1]:.2f}x "
              f"| {m[2]:.2f} / {m[3]:.2f} | {m[4]:.2f} | {m[5]:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()

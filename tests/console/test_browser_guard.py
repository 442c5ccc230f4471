"""The console refuses what a web page could send it: a foreign or rebound `Host` (after DNS
rebinding a page could read every message), another site's `Origin`, writes that are not JSON; and
it says at start when it serves past the broker's authentication. Real HTTP against `kafkito serve --http`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.console.support import ConsoleBroker, produce
from tests.control.support import raw_request

JSON = {"Content-Type": "application/json"}


def topic_exists(console: ConsoleBroker, name: str) -> bool:
    return console.call("GET", f"/api/topics/{name}")[0] == 200


@pytest.mark.parametrize("path", ["/api/topics", "/api/topics/guard-read/partitions/0/messages", "/console/",
                                  "/console/static/console.js"])  # fmt: skip
def test_a_rebound_host_reads_nothing(console: ConsoleBroker, path: str) -> None:
    produce(console.bootstrap, "guard-read", [(b"k", b"secret", [])])
    for host in (
        "evil.example",
        f"evil.example:{console.http_port}",
        f"localhost.evil.example:{console.http_port}",
    ):
        got = raw_request(console.http_port, "GET", path, {"Host": host})
        assert got.status == 403 and "secret" not in got.text and "Host" in got.text, (host, got)
    served = raw_request(console.http_port, "GET", path, {"Host": f"localhost:{console.http_port}"})
    assert served.status == 200 and served.headers["X-Content-Type-Options"] == "nosniff"
    assert "Access-Control-Allow-Origin" not in served.headers


def test_another_sites_origin_reads_nothing(console: ConsoleBroker) -> None:
    # A cross-origin fetch could not read the answer anyway (no CORS header is ever sent); refusing
    # it keeps the rule simple: nothing but the console's own pages, or no page at all, is served.
    own = f"127.0.0.1:{console.http_port}"
    got = raw_request(console.http_port, "GET", "/api/topics", {"Host": own, "Origin": "http://evil.example"})
    assert got.status == 403 and "Origin" in got.text
    mine = raw_request(console.http_port, "GET", "/api/topics", {"Host": own, "Origin": f"http://{own}"})
    assert mine.status == 200


def test_writes_from_another_site_or_not_json_are_refused(writable: ConsoleBroker) -> None:
    produce(writable.bootstrap, "guard-keep", [(None, b"x", [])])
    port, own = writable.http_port, f"127.0.0.1:{writable.http_port}"
    reset = json.dumps({"topic": "guard-keep", "to": "earliest"}).encode()
    evil, form = "http://evil.example", "application/x-www-form-urlencoded"
    refused = [
        ("DELETE", "/api/topics/guard-keep", {"Host": "evil.example", **JSON}, None, 403),
        ("DELETE", "/api/topics/guard-keep", {"Host": own, "Origin": evil, **JSON}, None, 403),
        ("DELETE", "/api/topics/guard-keep", {"Host": own, "Origin": "null", **JSON}, None, 403),
        ("DELETE", "/api/topics/guard-keep", {"Host": own}, None, 415),
        ("POST", "/api/groups/g/reset-offsets", {"Host": own, "Content-Type": "text/plain"}, reset, 415),
        ("POST", "/api/groups/g/reset-offsets", {"Host": own, "Content-Type": form}, b"to=earliest", 415),
    ]  # fmt: skip
    for method, path, headers, body, status in refused:
        got = raw_request(port, method, path, headers, body)
        assert got.status == status, (method, path, headers, got)
    assert topic_exists(writable, "guard-keep")
    got = raw_request(
        port, "DELETE", "/api/topics/guard-keep", {"Host": own, "Origin": f"http://{own}", **JSON}
    )
    assert got.status == 200 and json.loads(got.text)["deleted"] == "guard-keep"
    assert not topic_exists(writable, "guard-keep")


def test_a_console_on_a_broker_with_sasl_says_it_serves_past_it(tmp_path: Path) -> None:
    from tests.support.net import free_port

    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'
    props = {
        "listeners": f"PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:{free_port()}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
    }
    broker = ConsoleBroker(tmp_path / "data", "--banner", props=props).start()
    try:
        assert broker.get("/api/overview")["node_id"] == 1
    finally:
        assert broker.stop() == 0
    output = broker.log_path.read_text()
    (line,) = [json.loads(e) for e in output.splitlines() if '"console.unauthenticated"' in e]
    assert line["level"] == "warning" and line["bypasses"] == ["SASL_PLAINTEXT"]
    assert "WARNING: the web console has no authentication" in output  # the banner

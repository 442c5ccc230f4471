"""`kafkito consume --offset @TIME` and `--format`, SIGTERM, `transactions`, and a listener that does not
take the client: on a PLAINTEXT and a SASL_SSL listener (`--command-config`), against a real broker."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from kafka import KafkaAdminClient, KafkaProducer

from tests.cli import secured
from tests.cli.secured import Tool, client_properties, kafkito
from tests.support.waiting import wait_until

listeners, tool = secured.listeners, secured.tool  # the module's fixtures: one broker, both listeners
STAMPS = (1_000, 2_000, 3_000, 4_000)  # CreateTime of the records, epoch ms


def _stamped_topic(tool: Tool, base: str) -> str:
    """Two partitions; records k0..k3 stamped STAMPS, alternately on partitions 0 and 1."""
    topic = tool.name(base)
    tool.ok("topics", "create", topic, "--partitions", "2")
    producer = KafkaProducer(bootstrap_servers=tool.listeners.bootstrap("PLAINTEXT"))
    for i, stamp in enumerate(STAMPS):
        producer.send(topic, key=b"k%d" % i, value=b"v%d" % i, partition=i % 2, timestamp_ms=stamp,
                      headers=[("h", b"x")])  # fmt: skip
    producer.flush()
    producer.close()
    return topic


def test_consume_from_a_time_reads_each_partition_from_its_first_record_at_or_after_it(tool: Tool) -> None:
    topic = _stamped_topic(tool, "at-time")
    fmt = r"%t %p %o %k %s %T %h %K %S\n"
    out = tool.ok("consume", topic, "--offset", "@2500", "--max-messages", "2", "--format", fmt)
    assert sorted(out.splitlines()) == [f"{topic} 0 1 k2 v2 3000 h=x 2 2", f"{topic} 1 1 k3 v3 4000 h=x 2 2"]
    iso = tool.ok("consume", topic, "--offset", "@1970-01-01T00:00:02Z", "--max-messages", "3",
                  "--format", r"%p:%o\t%s;")  # fmt: skip
    assert sorted(iso.split(";")[:-1]) == ["0:1\tv2", "1:0\tv1", "1:1\tv3"]  # at or after 2000: v1 included
    after_all = tool("consume", topic, "--offset", "@5000", "--timeout-ms", "500")
    assert after_all.returncode == 0 and after_all.stdout == ""
    assert tool.fails("consume", topic, "--offset", "@yesterday", status=2) == (
        "kafkito consume: --offset @yesterday: not a time: epoch milliseconds or ISO 8601 "
        "(e.g. @2026-01-31T12:00:00Z)"
    )
    assert tool.fails("consume", topic, "--format", "%x", status=2) == (
        r"kafkito consume: --format '%x': unknown %x (kcat's tokens: %t %p %o %k %s %T %h %K %S, \n, \t)"
    )


def test_format_prints_null_keys_and_values_as_kcat_does(tool: Tool) -> None:
    topic = tool.name("fmt-null")
    tool.ok("topics", "create", topic)
    from confluent_kafka import Producer  # kafka-python refuses a record with neither key nor value

    producer = Producer({"bootstrap.servers": tool.listeners.bootstrap("PLAINTEXT")})
    producer.produce(topic, value=None, key=None)
    assert producer.flush(10) == 0
    out = tool.ok(
        "consume", topic, "--from-beginning", "--max-messages", "1", "--format", r"[%k|%s|%K|%S|%h] 100%%\n"
    )
    assert out == "[||-1|-1|] 100%\n"


def test_sigterm_stops_consume_as_ctrl_c_does(tool: Tool) -> None:
    topic, group = tool.name("sigterm"), tool.name("sigterm-g")
    tool.ok("topics", "create", topic)
    tool.ok("produce", topic, "--quiet", stdin="a\nb\n")
    reader = subprocess.Popen(
        [sys.executable, "-m", "kafkito", "consume", topic, "--group", group, "--from-beginning",
         *tool.connection],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    admin = KafkaAdminClient(bootstrap_servers=tool.listeners.bootstrap("PLAINTEXT"))
    try:

        def member_joined() -> bool:
            described = admin.describe_groups([group])[group]
            return described["group_state"] == "Stable" and len(described["members"]) == 1

        wait_until(member_joined, 30, "the consumer's group to be stable")
        assert reader.stdout is not None
        assert [reader.stdout.readline(), reader.stdout.readline()] == ["a\n", "b\n"]
        reader.send_signal(signal.SIGTERM)
        _, err = reader.communicate(timeout=30)
        assert reader.returncode == 0 and err == "Processed a total of 2 messages\n"
        # It left the group (an Empty group at once, not after a session timeout) and committed.
        assert admin.describe_groups([group])[group]["group_state"] == "Empty"
        committed = admin.list_group_offsets(group)[group]
        assert [meta.offset for meta in committed.values()] == [2]
    finally:
        reader.kill()
        admin.close()


def test_transactions_list_and_describe_an_open_transaction(tool: Tool) -> None:
    topic, txn = tool.name("txn"), tool.name("txn-id")
    tool.ok("topics", "create", topic, "--partitions", "2")
    producer = KafkaProducer(bootstrap_servers=tool.listeners.bootstrap("PLAINTEXT"), transactional_id=txn)
    producer.init_transactions()
    producer.begin_transaction()
    producer.send(topic, b"open", partition=1).get(10)
    try:
        listed = json.loads(tool.ok("transactions", "list", "--json"))
        (mine,) = [t for t in listed if t["transactional_id"] == txn]
        assert mine["state"] == "Ongoing" and mine["coordinator"] == 1

        described = json.loads(tool.ok("transactions", "describe", txn, "--json"))
        assert described["state"] == "Ongoing" and described["partitions"] == [f"{topic}-1"]
        assert described["producer_id"] == mine["producer_id"] and described["producer_epoch"] >= 0
        assert described["transaction_timeout_ms"] == 60000 and described["transaction_start_time_ms"] > 0
        text = tool.ok("transactions", "describe", txn).splitlines()
        assert text[0].split()[:5] == [
            "COORDINATOR",
            "TRANSACTIONAL-ID",
            "PRODUCER-ID",
            "PRODUCER-EPOCH",
            "STATE",
        ]
        assert tool.fails("transactions", "describe", tool.name("nobody")) == (
            f"kafkito transactions describe: TransactionalIdNotFoundError: no transactional id "
            f"'{tool.name('nobody')}': `kafkito transactions list` shows them"
        )

        aborted = tool.ok("transactions", "force-terminate", txn)
        assert aborted == f"Aborted any open transaction of {txn} (its producer is fenced).\n"
        after = json.loads(tool.ok("transactions", "describe", txn, "--json"))
        assert (
            after["state"] == "Empty"
            and after["partitions"] == []
            and after["producer_epoch"] > described["producer_epoch"]
        )
        assert (
            tool.ok("consume", topic, "--partition", "1", "--from-beginning", "--timeout-ms", "1000")
            == "open\n"
        )
    finally:
        producer.close(timeout=1)


def test_a_listener_that_does_not_take_the_client_is_one_line(tool: Tool, tmp_path: Path) -> None:
    other = "PLAINTEXT" if tool.secured else "SASL_SSL"
    wrong = kafkito(
        "topics", "list", *tool.connection[2:], "--bootstrap-server", tool.listeners.bootstrap(other)
    )
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1 and "Traceback" not in wrong.stderr
    assert wrong.stderr.startswith(
        f"kafkito topics list: the listener at {tool.listeners.bootstrap(other)} did not answer as a "
        f"{tool.listener} listener: does it expect TLS or SASL (or not)? pass --command-config FILE"
    )
    if tool.secured:
        bad = tmp_path / "bad.properties"
        bad.write_text(client_properties(tool.listeners.certs / "ca.pem", password="wrong"))
        refused = kafkito("consume", "x", "--bootstrap-server", tool.bootstrap, "--command-config", str(bad))
        assert refused.returncode == 1 and refused.stderr == (
            f"kafkito consume: the broker at {tool.bootstrap} refused the SASL login (a wrong user or "
            "password, or a mechanism the listener does not enable): check sasl.mechanism and "
            "sasl.jaas.config in --command-config\n"
        )


def test_the_command_config_default_comes_from_the_environment(tool: Tool) -> None:
    env = {"KAFKITO_BOOTSTRAP_SERVER": tool.bootstrap}
    if tool.secured:
        env["KAFKITO_COMMAND_CONFIG"] = str(tool.listeners.client_config)
    done = kafkito("cluster", "describe", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["nodes"][0]["port"] == int(tool.bootstrap.split(":")[1])

"""`kafkito configs`, `acls`, `records delete`, `cluster describe` and `users`, each on a PLAINTEXT and on
a SASL_SSL listener (`--command-config`), against a real broker; what they change is read back with
kafka-python's admin, not with the tool itself."""

from __future__ import annotations

import json

from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType

from tests.cli import secured
from tests.cli.secured import Tool

listeners, tool = secured.listeners, secured.tool  # the module's fixtures: one broker, both listeners


def _admin(tool: Tool) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=tool.listeners.bootstrap("PLAINTEXT"))


def test_configs_describe_lists_every_config_with_its_source_and_override(tool: Tool) -> None:
    topic = tool.name("cf-topic")
    tool.ok("topics", "create", topic, "--config", "retention.ms=60000")
    configs = {c["name"]: c for c in json.loads(tool.ok("configs", "describe", "--topic", topic, "--json"))}
    retention = configs["retention.ms"]
    assert retention.pop("synonyms")[0] == {
        "name": "retention.ms",
        "value": "60000",
        "source": "DYNAMIC_TOPIC_CONFIG",
    }
    assert retention == {
        "name": "retention.ms", "value": "60000", "source": "DYNAMIC_TOPIC_CONFIG", "override": True,
        "read_only": False, "sensitive": False,
    }  # fmt: skip
    assert (
        configs["cleanup.policy"]["source"] == "DEFAULT_CONFIG" and not configs["cleanup.policy"]["override"]
    )
    assert len(configs) > 30  # every topic config, not only the overrides

    text = tool.ok("configs", "describe", "--topic", topic).splitlines()
    assert text[0] == f"All configs for topic {topic} (1 overridden):"
    assert text[1].split() == ["NAME", "VALUE", "SOURCE", "OVERRIDE", "READ-ONLY", "SENSITIVE"]
    assert ["retention.ms", "60000", "DYNAMIC_TOPIC_CONFIG", "yes", "no", "no"] in [
        line.split() for line in text
    ]

    broker = {c["name"]: c for c in json.loads(tool.ok("configs", "describe", "--broker", "1", "--json"))}
    assert broker["num.partitions"]["value"] == "1" and broker["num.partitions"]["source"] == "DEFAULT_CONFIG"
    group = {c["name"]: c for c in json.loads(tool.ok("configs", "describe", "--group", "cf-g", "--json"))}
    assert group["consumer.session.timeout.ms"]["value"] == "45000"


def test_configs_alter_sets_and_deletes_on_a_topic_broker_and_group(tool: Tool) -> None:
    topic = tool.name("cf-alter")
    tool.ok("topics", "create", topic, "--config", "segment.ms=100000")
    done = tool.ok(
        "configs", "alter", "--topic", topic, "--set", "retention.ms=120000", "--delete", "segment.ms"
    )
    assert done == f"Completed updating config for topic {topic}: retention.ms, segment.ms.\n"
    group = tool.name("cf-group")
    tool.ok("configs", "alter", "--group", group, "--set", "consumer.session.timeout.ms=50000")
    tool.ok("configs", "alter", "--broker", "1", "--set", "log.cleaner.threads=2")
    tool.ok("configs", "alter", "--broker-defaults", "--set", "log.cleaner.backoff.ms=20000")

    admin = _admin(tool)
    found = admin.describe_configs(
        [
            ConfigResource(ConfigResourceType.TOPIC, topic),
            ConfigResource(ConfigResourceType.GROUP, group),
            ConfigResource(ConfigResourceType.BROKER, "1"),
        ],
        config_filter="all",
    )
    admin.close()
    overrides = {
        k: v["value"]
        for k, v in found["topic"][topic].items()
        if v["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    }
    assert overrides == {"retention.ms": "120000"}
    assert found["group"][group]["consumer.session.timeout.ms"]["value"] == "50000"
    brokers = found["broker"]["1"]
    assert brokers["log.cleaner.threads"]["config_source"] == "DYNAMIC_BROKER_CONFIG"
    assert brokers["log.cleaner.backoff.ms"]["config_source"] == "DYNAMIC_DEFAULT_BROKER_CONFIG"
    tool.ok("configs", "alter", "--broker", "1", "--delete", "log.cleaner.threads")
    tool.ok("configs", "alter", "--broker-defaults", "--delete", "log.cleaner.backoff.ms")


def test_a_value_kafka_refuses_is_refused_in_one_line(tool: Tool) -> None:
    topic = tool.name("cf-bad")
    tool.ok("topics", "create", topic)
    refusal = "InvalidConfigurationError: invalid value for retention.ms: value 'abc' is not an integer"
    assert tool.fails("topics", "alter", topic, "--config", "retention.ms=abc") == (
        f"kafkito topics alter: {refusal}"
    )
    assert tool.fails("configs", "alter", "--topic", topic, "--set", "retention.ms=abc") == (
        f"kafkito configs alter: {refusal}"
    )
    configs = json.loads(tool.ok("configs", "describe", "--topic", topic, "--json"))
    assert [c["value"] for c in configs if c["name"] == "retention.ms"] == ["604800000"]
    assert tool.fails("configs", "alter", "--topic", topic, status=2).endswith(
        "nothing to alter: pass --set NAME=VALUE or --delete NAME"
    )


def test_acls_add_list_and_remove(tool: Tool) -> None:
    topic, prefix = tool.name("acl-topic"), tool.name("acl-pre")
    reader, writer = f"User:{tool.name('reader')}", f"User:{tool.name('writer')}"
    added = tool.ok(
        "acls",
        "add",
        "--allow-principal",
        reader,
        "--operation",
        "Read",
        "--operation",
        "Describe",
        "--topic",
        topic,
    )
    assert added.splitlines() == [
        f"Added ACL Allow {reader} Read on Topic:LITERAL:{topic} from host *",
        f"Added ACL Allow {reader} Describe on Topic:LITERAL:{topic} from host *",
    ]
    tool.ok(
        "acls", "add", "--deny-principal", writer, "--operation", "write", "--topic", prefix, "--prefixed"
    )
    tool.ok("acls", "add", "--allow-principal", writer, "--operation", "IdempotentWrite", "--cluster")
    tool.ok("acls", "add", "--allow-principal", writer, "--operation", "Write", "--transactional-id", "tx")
    tool.ok(
        "acls", "add", "--allow-principal", reader, "--operation", "Read", "--group", tool.name("readers")
    )

    mine = json.loads(tool.ok("acls", "list", "--principal", writer, "--json"))
    assert sorted(
        (a["operation"], a["permission"], a["resource_type"], a["name"], a["pattern"]) for a in mine
    ) == [
        ("IdempotentWrite", "Allow", "Cluster", "kafka-cluster", "LITERAL"),
        ("Write", "Allow", "TransactionalId", "tx", "LITERAL"),
        ("Write", "Deny", "Topic", prefix, "PREFIXED"),
    ]
    on_topic = tool.ok("acls", "list", "--topic", topic).splitlines()
    assert on_topic[0].split() == [
        "PRINCIPAL",
        "HOST",
        "OPERATION",
        "PERMISSION",
        "RESOURCE-TYPE",
        "NAME",
        "PATTERN",
    ]
    assert [line.split() for line in on_topic[1:]] == [
        [reader, "*", "Describe", "Allow", "Topic", topic, "LITERAL"],
        [reader, "*", "Read", "Allow", "Topic", topic, "LITERAL"],
    ]
    groups = json.loads(tool.ok("acls", "list", "--group", tool.name("readers"), "--json"))
    assert [(a["principal"], a["operation"]) for a in groups] == [(reader, "Read")]

    removed = tool.ok("acls", "remove", "--allow-principal", reader, "--operation", "Read", "--topic", topic)
    assert removed == f"Removed ACL Allow {reader} Read on Topic:LITERAL:{topic} from host *\n"
    assert tool.ok(
        "acls", "remove", "--deny-principal", writer, "--operation", "Write", "--topic", prefix
    ) == ("No ACL matched.\n")  # the binding is prefixed: a literal filter does not match it
    tool.ok(
        "acls", "remove", "--deny-principal", writer, "--operation", "Write", "--topic", prefix, "--prefixed"
    )
    left = json.loads(tool.ok("acls", "list", "--topic", topic, "--json"))
    assert [a["operation"] for a in left] == ["Describe"]
    assert tool.fails(
        "acls", "add", "--allow-principal", reader, "--operation", "Peek", "--topic", "t", status=2
    )
    assert "not TYPE:NAME" in tool.fails("acls", "list", "--principal", "bob", status=2)


def test_records_delete_moves_the_log_start(tool: Tool) -> None:
    topic = tool.name("rec-del")
    tool.ok("topics", "create", topic, "--partitions", "2")
    tool.ok("produce", topic, "--partition", "0", "--quiet", stdin="a\nb\nc\nd\n")
    tool.ok("produce", topic, "--partition", "1", "--quiet", stdin="x\ny\n")
    out = tool.ok("records", "delete", topic, "--partition", "0", "--before", "3")
    assert [line.split() for line in out.splitlines()] == [
        ["TOPIC", "PARTITION", "LOW-WATERMARK"], [topic, "0", "3"]
    ]  # fmt: skip
    everything = json.loads(
        tool.ok("records", "delete", topic, "--partition", "1", "--before", "-1", "--json")
    )
    assert everything == [{"topic": topic, "partition": 1, "low_watermark": 2}]
    (described,) = json.loads(tool.ok("topics", "describe", topic, "--json"))
    assert [(p["log_start_offset"], p["log_end_offset"]) for p in described["partitions"]] == [(3, 4), (2, 2)]
    assert tool.ok("consume", topic, "--partition", "0", "--from-beginning", "--max-messages", "1") == "d\n"
    assert tool.fails("records", "delete", topic, "--partition", "5", "--before", "1") == (
        f"kafkito records delete: topic {topic} has no partition 5 (it has 2)"
    )
    assert tool.fails("records", "delete", topic, "--partition", "0", "--before", "9") == (
        "kafkito records delete: OffsetOutOfRangeError: Error deleting records from topic "
        f"{topic} partition 0"
    )


def test_cluster_describe_names_the_cluster_its_nodes_and_features(tool: Tool) -> None:
    described = json.loads(tool.ok("cluster", "describe", "--json"))
    broker = tool.listeners.thread.broker
    assert broker is not None
    host, port = tool.bootstrap.split(":")
    assert described["cluster_id"] == broker.cluster_id and described["controller"] == 1
    assert described["nodes"] == [{"id": 1, "host": host, "port": int(port), "rack": None}]
    assert described["features"]["transaction.version"]["finalized"] == 2
    assert described["features"]["group.version"] == {"finalized": 1, "supported_min": 0, "supported_max": 1}
    text = tool.ok("cluster", "describe").splitlines()
    assert text[:2] == [f"Cluster ID: {broker.cluster_id}", "Controller: 1"]
    assert ["1", host, port, "-"] in [line.split() for line in text]


def test_users_list_add_and_delete(tool: Tool) -> None:
    user = tool.name("dora")
    assert tool.ok("users", "add", user, "--password", "dora-pw", "--mechanism", "SCRAM-SHA-256") == (
        f"user {user}: SCRAM-SHA-256 credentials written to {tool.bootstrap}\n"
    )
    listed = json.loads(tool.ok("users", "list", "--json"))
    assert {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 4096} in listed
    assert {"user": "admin", "mechanism": "SCRAM-SHA-512", "iterations": 4096} in listed

    # The new user logs in on the SASL_SSL listener.
    ca = tool.listeners.certs / "ca.pem"
    login = KafkaAdminClient(
        bootstrap_servers=tool.listeners.bootstrap("SASL_SSL"), security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-256", sasl_plain_username=user, sasl_plain_password="dora-pw",
        ssl_cafile=str(ca), bootstrap_timeout_ms=10_000,
    )  # fmt: skip
    assert login.describe_cluster()["brokers"][0]["broker_id"] == 1
    login.close()

    assert tool.ok("users", "delete", user) == f"user {user}: SCRAM-SHA-256 credentials deleted\n"
    assert user not in {u["user"] for u in json.loads(tool.ok("users", "list", "--json"))}
    assert tool.fails("users", "delete", user) == (
        f"kafkito users delete: user {user} has no SCRAM credentials: `kafkito users list` shows the users"
    )

"""The tools' command-line verbs (`topics`, `groups`, `produce`, `consume`, `configs`, `acls`, `records`,
`transactions`, `cluster`, `users`, `offsets`) for argparse.

Each verb names its function as "module:function" (`tool`), imported only when the verb runs, so that
building the parser costs `kafkito serve` nothing.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from kafkito.broker.tools.connect import DEFAULT_BOOTSTRAP, ENV_BOOTSTRAP

# The default of --command-config, when set; kept here, as the parser must not import the tools.
ENV_COMMAND_CONFIG = "KAFKITO_COMMAND_CONFIG"

_TOOLS = "kafkito.broker.tools."
MIN_ITERATIONS = 4096  # broker.security.scram's, not imported here (hashlib at start-up)


def _verb(
    sub: Any, name: str, tool: str, help_text: str, json_output: bool = True
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=help_text)
    parser.set_defaults(tool=_TOOLS + tool)
    parser.add_argument(
        "--bootstrap-server",
        default=os.environ.get(ENV_BOOTSTRAP) or DEFAULT_BOOTSTRAP,
        metavar="HOST:PORT",
        help=f"the broker to talk to (any Kafka; default ${ENV_BOOTSTRAP} or {DEFAULT_BOOTSTRAP})",
    )
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="client properties: security.protocol, sasl.mechanism, sasl.jaas.config, ssl.truststore.location"
        f" (PEM), ... (default ${ENV_COMMAND_CONFIG})",
    )
    if json_output:
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    return parser


def _group(sub: Any, name: str, help_text: str) -> Any:
    parser = sub.add_parser(name, help=help_text, description=help_text)
    return parser.add_subparsers(dest=f"{name}_verb", required=True)


def add_topics(sub: Any) -> None:
    verbs = _group(sub, "topics", "list, describe, create, delete or alter topics")
    listing = _verb(verbs, "list", "topics:run_list", "topic names, one per line")
    listing.add_argument(
        "--exclude-internal", action="store_true", help="leave out __consumer_offsets and co."
    )
    describe = _verb(verbs, "describe", "topics:run_describe", "partitions, leaders, configs, log offsets")
    describe.add_argument("topics", nargs="*", metavar="TOPIC", help="default: every topic")
    describe.add_argument(
        "--exclude-internal", action="store_true", help="leave out __consumer_offsets and co."
    )
    create = _verb(verbs, "create", "topics:run_create", "create a topic", json_output=False)
    create.add_argument("topic", metavar="TOPIC")
    create.add_argument("--partitions", type=int, help="default: the broker's num.partitions")
    create.add_argument(
        "--replication-factor", type=int, help="default: the broker's default.replication.factor"
    )
    create.add_argument("--config", action="append", default=[], metavar="NAME=VALUE", help="repeatable")
    delete = _verb(verbs, "delete", "topics:run_delete", "delete topics", json_output=False)
    delete.add_argument("topics", nargs="+", metavar="TOPIC")
    alter = _verb(verbs, "alter", "topics:run_alter", "add partitions or change configs", json_output=False)
    alter.add_argument("topic", metavar="TOPIC")
    alter.add_argument("--partitions", type=int, help="the new total number of partitions")
    alter.add_argument("--config", action="append", default=[], metavar="NAME=VALUE", help="set, repeatable")
    alter.add_argument(
        "--delete-config", action="append", default=[], metavar="NAME", help="back to the default"
    )


def add_groups(sub: Any) -> None:
    verbs = _group(sub, "groups", "list, describe, delete consumer groups or reset their offsets")
    listing = _verb(verbs, "list", "groups:run_list", "group ids, one per line")
    listing.add_argument("--state", action="store_true", help="a table with each group's state and type")
    describe = _verb(
        verbs, "describe", "groups:run_describe", "per partition: committed offset, end offset, lag"
    )
    describe.add_argument("groups", nargs="*", metavar="GROUP")
    describe.add_argument("--all-groups", action="store_true", help="every group")
    shown = describe.add_mutually_exclusive_group()
    shown.add_argument("--members", action="store_true", help="the members and their partition counts")
    shown.add_argument(
        "--state", action="store_true", help="coordinator, assignment strategy, state, members"
    )
    delete = _verb(
        verbs, "delete", "groups:run_delete", "delete empty groups and their offsets", json_output=False
    )
    delete.add_argument("groups", nargs="+", metavar="GROUP")
    _add_reset(verbs)


def _add_reset(verbs: Any) -> None:
    reset = _verb(
        verbs, "reset-offsets", "reset_offsets:run", "move a group's committed offsets (a dry run by default)"
    )
    reset.add_argument("group", metavar="GROUP")
    reset.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,...]", help="repeatable")
    reset.add_argument("--all-topics", action="store_true", help="every partition the group has committed")
    to = reset.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-earliest", action="store_true", help="the log start offset")
    to.add_argument("--to-latest", action="store_true", help="the log end offset")
    to.add_argument("--to-offset", type=int, metavar="OFFSET", help="this offset (kept within the log)")
    to.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss", help="the first record at or after")
    to.add_argument("--shift-by", type=int, metavar="N", help="the committed offset plus N (may be negative)")
    how = reset.add_mutually_exclusive_group()
    how.add_argument("--dry-run", action="store_true", help="only show the new offsets (the default)")
    how.add_argument("--execute", action="store_true", help="commit the new offsets")


def add_produce(sub: Any) -> None:
    produce = _verb(sub, "produce", "produce:run", "send each line of stdin as a record", json_output=False)
    produce.add_argument("topic", metavar="TOPIC")
    produce.add_argument("--key-separator", metavar="SEP", help="lines are KEY SEP VALUE")
    produce.add_argument(
        "--header", action="append", default=[], metavar="NAME=VALUE", help="on every record, repeatable"
    )
    produce.add_argument(
        "--parse-headers", action="store_true", help="lines start with k1:v1,k2:v2 and a tab"
    )
    produce.add_argument("--partition", type=int, help="this partition (default: by key, as the client does)")
    produce.add_argument("--acks", default="all", choices=["0", "1", "all"], help="default all")
    produce.add_argument("--skip-empty", action="store_true", help="send no record for an empty line")
    produce.add_argument("--quiet", action="store_true", help="no summary line on stderr")


def add_consume(sub: Any) -> None:
    consume = _verb(sub, "consume", "consume:run", "print records, as kafka-console-consumer.sh does")
    consume.add_argument("topic", metavar="TOPIC")
    consume.add_argument("--from-beginning", action="store_true", help="start at the log start, not its end")
    consume.add_argument("--group", help="join this group and commit (default: no group)")
    consume.add_argument("--max-messages", type=int, metavar="N", help="stop after N records")
    consume.add_argument("--timeout-ms", type=int, metavar="MS", help="stop after MS without a record")
    consume.add_argument("--partition", type=int, help="only this partition")
    consume.add_argument(
        "--offset",
        metavar="OFFSET",
        help="start here in each partition read: a number, earliest (or -2), latest (or -1), or @TIME:"
        " the first record at or after TIME (epoch ms or ISO 8601)",
    )
    consume.add_argument(
        "--format",
        metavar="FMT",
        help="kcat's format: %%t topic, %%p partition, %%o offset, %%k key, %%s value, %%T timestamp, "
        "%%h headers, %%K key length, %%S value length, \\n, \\t (no newline is added)",
    )
    for name in ("key", "headers", "timestamp", "partition", "offset"):
        consume.add_argument(f"--print-{name}", action="store_true", help=f"print the {name}")
    consume.add_argument(
        "--separator", default="\t", metavar="SEP", help="between printed fields (default tab)"
    )
    consume.add_argument("--key-format", default="text", choices=["text", "hex", "base64"])
    consume.add_argument(
        "--value-format", default="text", choices=["text", "hex", "base64"], help="values and headers"
    )


def add_offsets(sub: Any) -> None:
    from kafkito.broker.config import default

    verbs = _group(sub, "offsets", "look inside __consumer_offsets on disk")
    dump = verbs.add_parser(
        "dump", help="decode every record (JSON lines), or --latest: where each group stands",
        description="decode every record (JSON lines), or --latest: where each group stands",
    )  # fmt: skip
    dump.set_defaults(tool=_TOOLS + "offsets_view:run")
    dump.add_argument("--group", help="only this group's records (and only its partition is read)")
    dump.add_argument("--data-dir", default=default("log.dirs"), help="log.dirs (default %(default)s)")
    dump.add_argument(
        "--latest", action="store_true", help="the last committed offset per group and partition"
    )
    dump.add_argument("--json", action="store_true", help="with --latest: JSON instead of a table")


def _resource(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--topic", metavar="TOPIC")
    which.add_argument("--broker", metavar="ID", help="a broker id, or '' for the cluster-wide default")
    which.add_argument("--broker-defaults", action="store_true", help="the cluster-wide default")
    which.add_argument("--group", metavar="GROUP")


def add_configs(sub: Any) -> None:
    verbs = _group(sub, "configs", "describe or alter the configs of a topic, broker or group")
    describe = _verb(
        verbs, "describe", "configs:run_describe", "every config: value, source, whether it is an override"
    )
    _resource(describe)
    describe.add_argument("--synonyms", action="store_true", help="also the levels behind each value")
    alter = _verb(verbs, "alter", "configs:run_alter", "set or delete configs", json_output=False)
    _resource(alter)
    alter.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="repeatable")
    alter.add_argument(
        "--delete", action="append", default=[], metavar="NAME", help="back to the default, repeatable"
    )


def _acl_resource(parser: argparse.ArgumentParser, required: bool) -> None:
    which = parser.add_mutually_exclusive_group(required=required)
    which.add_argument("--topic", metavar="TOPIC")
    which.add_argument("--group", metavar="GROUP")
    which.add_argument("--cluster", action="store_true", help="the cluster resource")
    which.add_argument("--transactional-id", metavar="ID")


def add_acls(sub: Any) -> None:
    verbs = _group(sub, "acls", "list, add or remove ACLs")
    listing = _verb(verbs, "list", "acls:run_list", "the ACLs, or those of a resource or principal")
    _acl_resource(listing, required=False)
    listing.add_argument("--principal", metavar="User:NAME", help="only this principal's")
    for name, function in (("add", "run_add"), ("remove", "run_remove")):
        change = _verb(verbs, name, f"acls:{function}", f"{name} ACLs", json_output=False)
        _acl_resource(change, required=True)
        change.add_argument("--allow-principal", action="append", default=[], metavar="User:NAME")
        change.add_argument("--deny-principal", action="append", default=[], metavar="User:NAME")
        change.add_argument(
            "--operation", action="append", required=True, metavar="OP",
            help="Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, "
            "AlterConfigs, IdempotentWrite, All (repeatable)",
        )  # fmt: skip
        change.add_argument("--host", default="*", help="the client host (default * : any)")
        change.add_argument("--prefixed", action="store_true", help="the name is a prefix (KIP-290)")


def add_records(sub: Any) -> None:
    verbs = _group(sub, "records", "delete records, as kafka-delete-records.sh does")
    delete = _verb(verbs, "delete", "records:run_delete", "move a partition's log start offset")
    delete.add_argument("topic", metavar="TOPIC")
    delete.add_argument("--partition", type=int, action="append", required=True, help="repeatable")
    delete.add_argument(
        "--before", required=True, metavar="OFFSET", help="delete records below OFFSET (-1: all of them)"
    )


def add_transactions(sub: Any) -> None:
    verbs = _group(sub, "transactions", "list, describe or abort transactions (kafka-transactions.sh)")
    _verb(verbs, "list", "transactions:run_list", "every transactional id, its producer id and state")
    describe = _verb(
        verbs, "describe", "transactions:run_describe", "state, partitions, producer id and epoch, start"
    )
    describe.add_argument("transactional_id", metavar="ID")
    abort = _verb(
        verbs,
        "abort",
        "transactions:run_abort",
        "abort a hanging transaction on a partition",
        json_output=False,
    )
    abort.add_argument("--topic", required=True)
    abort.add_argument("--partition", type=int, required=True)
    start = abort.add_mutually_exclusive_group(required=True)
    start.add_argument("--start-offset", type=int, help="the open transaction's first offset")
    start.add_argument("--producer-id", type=int, help="with --producer-epoch and --coordinator-epoch")
    abort.add_argument("--producer-epoch", type=int)
    abort.add_argument("--coordinator-epoch", type=int, help="with --producer-id")
    force = _verb(
        verbs, "force-terminate", "transactions:run_force_terminate",
        "abort a transactional id's open transaction through its coordinator (fences its producer)",
        json_output=False,
    )  # fmt: skip
    force.add_argument("transactional_id", metavar="ID")


def add_cluster(sub: Any) -> None:
    verbs = _group(sub, "cluster", "the cluster: id, controller, nodes, feature levels")
    _verb(verbs, "describe", "cluster:run_describe", "cluster id, controller, nodes, feature levels")


def add_users(sub: Any) -> None:
    verbs = _group(sub, "users", "list, add or delete SCRAM users")
    _verb(verbs, "list", "users:run_list", "users with SCRAM credentials, their mechanisms and iterations")
    add = _verb(verbs, "add", "users:run_add", "add or replace a SCRAM user's credentials", json_output=False)
    add.add_argument("user")
    add.add_argument("--password", help="default: $KAFKITO_USER_PASSWORD, else asked")
    add.add_argument("--mechanism", action="append", help="SCRAM-SHA-256/SCRAM-SHA-512 (default: both)")
    add.add_argument("--iterations", type=int, default=MIN_ITERATIONS, help=f"default {MIN_ITERATIONS}")
    add.add_argument("--data-dir", help="write into a stopped broker's data dir instead")
    delete = _verb(
        verbs, "delete", "users:run_delete", "delete a user's SCRAM credentials", json_output=False
    )
    delete.add_argument("user")
    delete.add_argument("--mechanism", action="append", help="default: every mechanism the user has")


def add_tool_parsers(sub: Any) -> None:
    add_topics(sub)
    add_groups(sub)
    add_produce(sub)
    add_consume(sub)
    add_configs(sub)
    add_acls(sub)
    add_records(sub)
    add_transactions(sub)
    add_cluster(sub)
    add_users(sub)
    add_offsets(sub)
    from kafkito.broker.auth.tool_args import add_certs_parser

    add_certs_parser(sub)

"""`kafkito users list|add|delete`: SCRAM credentials over DescribeUserScramCredentials and
AlterUserScramCredentials, as `kafka-configs.sh --entity-type users --alter --add-config SCRAM-...`
does, with the same `--bootstrap-server` and `--command-config` defaults as every other verb;
`users add --data-dir` writes into a stopped broker's store instead (broker.auth.users)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kafkito.broker.tools.connect import admin, kafka_errors
from kafkito.broker.tools.output import ToolError, emit

MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")


def _mechanism_names(names: list[str] | None) -> list[str]:
    chosen = [n.upper() for n in names or MECHANISMS]
    for name in chosen:
        if name not in MECHANISMS:
            raise ToolError(f"unknown mechanism {name}: SCRAM-SHA-256 or SCRAM-SHA-512", 2)
    return chosen


def _failed(results: dict[str, Any]) -> None:
    errors = {user: error for user, error in results.items() if error}
    if errors:
        raise ToolError("; ".join(f"user {user}: {error}" for user, error in errors.items()))


def run_list(args: argparse.Namespace) -> int:
    client = admin(args)
    with kafka_errors():
        described = client.describe_user_scram_credentials()
    rows = []
    for user in sorted(described):
        entry = described[user]
        if entry.get("error"):
            raise ToolError(f"user {user}: {entry['error']}")
        for info in entry["credential_infos"]:
            rows.append((user, _name(info["mechanism"]), info["iterations"]))
    emit(("USER", "MECHANISM", "ITERATIONS"), rows, args.json)
    return 0


def _name(mechanism: Any) -> str:
    """kafka-python's ScramMechanism member as Kafka names it (SCRAM-SHA-256)."""
    return str(getattr(mechanism, "name", mechanism)).replace("_", "-")


def run_add(args: argparse.Namespace) -> int:
    from kafkito.broker.auth.users import _mechanisms, _password, store_add

    if args.data_dir:
        mechanisms = _mechanisms(args.mechanism)
        store_add(Path(args.data_dir), args.user, _password(args), mechanisms, args.iterations)
        where = f"the security store in {args.data_dir} (seen by the broker at its next start)"
        names = ", ".join(m.mechanism_name for m in mechanisms)
    else:
        from kafka.admin import UserScramCredentialUpsertion

        chosen = _mechanism_names(args.mechanism)
        password = _password(args)
        client = admin(args)
        with kafka_errors():
            for name in chosen:  # one alteration per user and request, as Kafka allows
                upsertion = UserScramCredentialUpsertion(
                    args.user, name, password, iterations=args.iterations
                )
                _failed(client.alter_user_scram_credentials([upsertion]))
        where, names = args.bootstrap_server, ", ".join(chosen)
    print(f"user {args.user}: {names} credentials written to {where}")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    from kafka.admin import UserScramCredentialDeletion

    client = admin(args)
    with kafka_errors():
        if args.mechanism:
            chosen = _mechanism_names(args.mechanism)
        else:
            found = client.describe_user_scram_credentials([args.user]).get(args.user, {})
            if found.get("error") or not found.get("credential_infos"):
                raise ToolError(
                    f"user {args.user} has no SCRAM credentials: `kafkito users list` shows the users"
                )
            chosen = [_name(info["mechanism"]) for info in found["credential_infos"]]
        for name in chosen:
            _failed(client.alter_user_scram_credentials([UserScramCredentialDeletion(args.user, name)]))
    print(f"user {args.user}: {', '.join(chosen)} credentials deleted")
    return 0

"""`kafkito users add|delete|list`: SCRAM users, written through the security store of a stopped broker's
data dir (`--data-dir`), or over AlterUserScramCredentials to a running broker (`--bootstrap-server`)."""

from __future__ import annotations

import argparse
import getpass
import os
from pathlib import Path

from kafkito.broker.security.scram import ScramMechanism, mechanism_named, salted_password
from kafkito.broker.tools.output import ToolError


def _mechanisms(names: list[str] | None) -> list[ScramMechanism]:
    chosen: list[ScramMechanism] = []
    for name in names or ["SCRAM-SHA-256", "SCRAM-SHA-512"]:
        m = mechanism_named(name.upper())
        if m == ScramMechanism.UNKNOWN:
            raise ToolError(f"unknown mechanism {name}: SCRAM-SHA-256 or SCRAM-SHA-512", 2)
        chosen.append(m)
    return chosen


def _password(args: argparse.Namespace) -> str:
    password: str | None = args.password or os.environ.get("KAFKITO_USER_PASSWORD")
    if not password:
        password = getpass.getpass(f"password for {args.user}: ")
    if not password:
        raise ToolError("an empty password is not a password", 2)
    return password


def store_add(data_dir: Path, user: str, password: str, mechanisms: list[ScramMechanism], iters: int) -> None:
    from kafkito.broker.security.scram import Upsertion
    from kafkito.broker.security.store import SecurityStore

    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        store = SecurityStore(data_dir).load()
    except OSError as e:
        raise ToolError(f"cannot open the security store in {data_dir}: {e.strerror}") from None
    try:
        for m in mechanisms:  # one alteration per user per request, as Kafka allows
            salt = os.urandom(32)
            up = Upsertion(user, int(m), iters, salt, salted_password(m, password, salt, iters))
            for _, error in store.alter_scram([], [up]):
                if error is not None:
                    raise ToolError(f"{error.code.name}: {error.message}")
        store.sync()
    finally:
        store.close()


def _wire_add(bootstrap: str, user: str, password: str, mechanisms: list[ScramMechanism], iters: int) -> None:
    from kafka.admin import KafkaAdminClient, UserScramCredentialUpsertion
    from kafka.errors import KafkaError

    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kafkito-users")
    except KafkaError as e:
        raise ToolError(
            f"cannot reach {bootstrap} ({e}): is the broker running? else pass --data-dir"
        ) from None
    try:
        errors: dict[str, str] = {}
        for m in mechanisms:  # one alteration per user per request, as Kafka allows
            upsertion = UserScramCredentialUpsertion(user, m.mechanism_name, password, iterations=iters)
            errors.update(
                (name, e) for name, e in admin.alter_user_scram_credentials([upsertion]).items() if e
            )
    finally:
        admin.close()
    if errors:
        raise ToolError("; ".join(f"{name}: {e}" for name, e in errors.items()))


def run_add(args: argparse.Namespace) -> int:
    mechanisms = _mechanisms(args.mechanism)
    password = _password(args)
    if args.data_dir:
        store_add(Path(args.data_dir), args.user, password, mechanisms, args.iterations)
        where = f"the security store in {args.data_dir} (seen by the broker at its next start)"
    else:
        _wire_add(args.bootstrap_server, args.user, password, mechanisms, args.iterations)
        where = args.bootstrap_server
    names = ", ".join(m.mechanism_name for m in mechanisms)
    print(f"user {args.user}: {names} credentials written to {where}")
    return 0

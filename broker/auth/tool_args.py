"""The `kafkito certs` and `kafkito users` verbs for argparse; their code (`certs.py`, `users.py`) is
imported only when one runs, so that building the parser costs `kafkito serve` nothing."""

from __future__ import annotations

from typing import Any

MIN_ITERATIONS = 4096  # broker.security.scram's, not imported here (hashlib at start-up)


def add_users_parser(sub: Any) -> None:
    users = sub.add_parser("users", help="SCRAM users", description="add SCRAM users")
    verbs = users.add_subparsers(dest="users_verb", required=True)
    add = verbs.add_parser("add", help="add or replace a SCRAM user's credentials")
    add.set_defaults(tool="kafkito.broker.auth.users:run_add")
    add.add_argument("user")
    add.add_argument("--password", help="default: $KAFKITO_USER_PASSWORD, else asked")
    add.add_argument("--mechanism", action="append", help="SCRAM-SHA-256/SCRAM-SHA-512 (default: both)")
    add.add_argument("--iterations", type=int, default=MIN_ITERATIONS, help=f"default {MIN_ITERATIONS}")
    where = add.add_mutually_exclusive_group()
    where.add_argument("--data-dir", help="write into a stopped broker's data dir")
    where.add_argument("--bootstrap-server", default="127.0.0.1:9092", help="a running broker (PLAINTEXT)")


def add_certs_parser(sub: Any) -> None:
    certs = sub.add_parser(
        "certs", help="make a development CA and certificates", description="make a development CA, "
        "a broker certificate and client certificates (PEM), for TLS listeners and mTLS"
    )  # fmt: skip
    certs.set_defaults(tool="kafkito.broker.auth.certs:run")
    certs.add_argument("--dir", default="certs", help="where to write them (default ./certs)")
    certs.add_argument(
        "--host", action="append", help="broker host name or address (default localhost, 127.0.0.1)"
    )
    certs.add_argument(
        "--client", action="append", default=[], metavar="NAME", help="a client certificate CN=NAME"
    )

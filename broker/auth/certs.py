"""`kafkito certs`: a local certificate authority and certificates signed by it, for development.

Writes, in `--dir`: `ca.pem`/`ca.key` (the CA); `broker.pem`/`broker.key` (a server certificate for the
given host names and addresses) and `broker-keystore.pem` (both in one file, as `ssl.keystore.location`
reads them); per `--client NAME`, `NAME.pem`/`NAME.key` (a client certificate with subject `CN=NAME`,
the mTLS principal `User:CN=NAME`). Keys are unencrypted PEM, mode 0600. Uses the `cryptography`
library, imported only by this verb.
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_DAYS = 825


@dataclass(frozen=True, slots=True)
class Issued:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=_DAYS))
    )


def make_ca(common_name: str = "kafkito development CA") -> Issued:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        _builder(_name(common_name), _name(common_name), key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .sign(key, hashes.SHA256())
    )
    return Issued(cert, key)


def _alt_names(hosts: list[str]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


def issue(ca: Issued, common_name: str, *, server_hosts: list[str] | None = None) -> Issued:
    """A certificate signed by `ca`: a server's for `server_hosts`, else a client's."""
    key = ec.generate_private_key(ec.SECP256R1())
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server_hosts else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (
        _builder(_name(common_name), ca.cert.subject, key)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    )
    if server_hosts:
        builder = builder.add_extension(x509.SubjectAlternativeName(_alt_names(server_hosts)), critical=False)
    return Issued(builder.sign(ca.key, hashes.SHA256()), key)


def cert_pem(issued: Issued) -> bytes:
    return issued.cert.public_bytes(serialization.Encoding.PEM)


def key_pem(issued: Issued) -> bytes:
    return issued.key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _write(path: Path, data: bytes, private: bool = False) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def write_set(directory: Path, hosts: list[str], clients: list[str]) -> dict[str, Path]:
    """Write the CA, the broker's certificate and the clients'; returns the files by role."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = make_ca()
    broker = issue(ca, hosts[0], server_hosts=hosts)
    files = {"ca": directory / "ca.pem", "broker": directory / "broker.pem"}
    _write(directory / "ca.pem", cert_pem(ca))
    _write(directory / "ca.key", key_pem(ca), private=True)
    _write(directory / "broker.pem", cert_pem(broker) + cert_pem(ca))
    _write(directory / "broker.key", key_pem(broker), private=True)
    # Kafka's PEM keystore file: the private key and the certificate chain in one file.
    _write(directory / "broker-keystore.pem", key_pem(broker) + cert_pem(broker) + cert_pem(ca), private=True)
    for name in clients:
        client = issue(ca, name)
        _write(directory / f"{name}.pem", cert_pem(client))
        _write(directory / f"{name}.key", key_pem(client), private=True)
        files[name] = directory / f"{name}.pem"
    return files


def run(args: argparse.Namespace) -> int:
    directory = Path(args.dir)
    hosts = args.host or ["localhost", "127.0.0.1"]
    write_set(directory, hosts, args.client)
    d = directory.resolve()
    clients = "".join(f", {c}.pem, {c}.key" for c in args.client)
    print(f"wrote {d}/: ca.pem, ca.key, broker.pem, broker.key, broker-keystore.pem{clients}")
    print("broker properties (see docs/security.md):")
    print("  listeners=PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093")
    print("  ssl.keystore.type=PEM")
    print(f"  ssl.keystore.location={d}/broker-keystore.pem")
    print("  ssl.truststore.type=PEM")
    print(f"  ssl.truststore.location={d}/ca.pem")
    print(f"clients trust {d}/ca.pem (librdkafka: ssl.ca.location)")
    return 0

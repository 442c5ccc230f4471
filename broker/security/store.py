"""The security store: ACLs, client quotas, SCRAM credentials and delegation tokens, durable in the
`security-*` journal.

Every change is validated as Kafka's controller validates it, written as one batch of records named
as in Kafka's metadata log (AccessControlEntryRecord, RemoveAccessControlEntryRecord,
ClientQuotaRecord, UserScramCredentialRecord, RemoveUserScramCredentialRecord, DelegationTokenRecord,
RemoveDelegationTokenRecord), and only then
applied: one request's changes are one batch, all or nothing. `synced()` resolves once they are
fsynced (off the event loop); the handlers answer after it, so an acknowledged change survives a
crash of the process or of the machine.

Readers: `acls` (an `AclSet`: `authorize`, `authorize_by_resource_type`), `quotas` (`ClientQuotas`),
`scram` (`ScramCredentials`: `get(user, mechanism)`) and `tokens` (`DelegationTokens`) are the live
state; `token_limits` are the broker's delegation.token.* properties.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import structlog

from kafkito.broker.log.journal import MIN_COMPACT_BYTES, Journal
from kafkito.broker.security.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclSet,
    ResourceType,
    validate_new_acl,
)
from kafkito.broker.security.errors import SecurityError
from kafkito.broker.security.quotas import (
    ClientQuotas,
    FilterComponent,
    QuotaEntity,
    QuotaOp,
    is_ip_literal,
    quota_entity,
    quota_record,
)
from kafkito.broker.security.scram import (
    Deletion,
    ScramCredential,
    ScramCredentials,
    ScramMechanism,
    Upsertion,
    UserDescription,
    credential_record,
)
from kafkito.broker.security.tokens import (
    Created,
    DelegationTokens,
    TokenInfo,
    TokenLimits,
    token_hmac,
)
from kafkito.protocol.errors import ErrorCode

log = structlog.get_logger("kafkito.security")

FILE_PREFIX = "security-"
Record = dict[str, Any]
QuotaAlteration = tuple[Sequence[tuple[str, str | None]], Sequence[QuotaOp]]
_SNAPSHOT_BATCH = 256  # records per checkpoint batch
NO_TOKENS = TokenLimits(None)  # delegation tokens disabled (no delegation.token.secret.key)


class SecurityStore:
    """One broker's ACLs, client quotas and SCRAM credentials, loaded from and written to `data_dir`."""

    def __init__(
        self,
        data_dir: Path,
        *,
        compact_bytes: int = MIN_COMPACT_BYTES,
        token_limits: TokenLimits = NO_TOKENS,
    ) -> None:
        self.acls = AclSet()
        self.quotas = ClientQuotas()
        self.scram = ScramCredentials()
        self.tokens = DelegationTokens()
        self.token_limits = token_limits
        self._journal = Journal(
            data_dir, FILE_PREFIX, self._replay, self._snapshot, compact_bytes=compact_bytes
        )

    @staticmethod
    def exists_in(data_dir: Path) -> bool:
        """Whether `data_dir` holds a security journal (a broker then loads it at start)."""
        return any(data_dir.glob(f"{FILE_PREFIX}*"))

    def load(self) -> SecurityStore:
        self._journal.load()
        log.info(
            "security.loaded",
            acls=len(self.acls),
            quota_entities=len(self.quotas.by_entity),
            scram_users=len(self.scram.by_user),
            delegation_tokens=len(self.tokens),
        )
        return self

    # -- ACLs --------------------------------------------------------------------------------------

    def create_acls(self, acls: Sequence[AclBinding | SecurityError]) -> list[SecurityError | None]:
        """Create ACLs (an item already refused by the caller is passed as its error); one result each.

        An ACL that exists already, or twice in the request, is created once and succeeds each time.
        """
        results: list[SecurityError | None] = []
        records: list[Record] = []
        new: set[AclBinding] = set()
        for acl in acls:
            if isinstance(acl, SecurityError):
                results.append(acl)
                continue
            try:
                validate_new_acl(acl)
            except SecurityError as e:
                results.append(e)
                continue
            if acl not in self.acls and acl not in new:
                new.add(acl)
                records.append(acl.to_record(self._new_acl_id()))
            results.append(None)
        failure = self._commit(records, "acls.created")
        return [r if failure is None or r is not None else failure for r in results]

    def _new_acl_id(self) -> str:
        while True:
            acl_id = str(uuid.uuid4())
            if acl_id not in self.acls.by_id:
                return acl_id

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool | None:
        """The ACLs' verdict on one action: True allowed, False denied, None no ACL applies (the
        caller's `allow.everyone.if.no.acl.found` decides; super users are the caller's too)."""
        return self.acls.authorize(principal, host, operation, resource_type, name)

    def describe_acls(self, acl_filter: AclFilter) -> list[AclBinding]:
        """The ACLs a filter matches; SecurityError for a filter with an UNKNOWN element."""
        acl_filter.validate()
        return [acl for _, acl in self.acls.matching(acl_filter)]

    def delete_acls(
        self, filters: Sequence[AclFilter | SecurityError]
    ) -> list[list[AclBinding] | SecurityError]:
        """Delete every ACL each filter matches; per filter, the ACLs deleted or the filter's error.

        Filters are matched against the ACLs as they were before the request (an ACL two filters
        match is listed by both and deleted once).
        """
        results: list[list[AclBinding] | SecurityError] = []
        doomed: dict[str, None] = {}
        for acl_filter in filters:
            if isinstance(acl_filter, SecurityError):
                results.append(acl_filter)
                continue
            try:
                acl_filter.validate()
            except SecurityError as e:
                results.append(e)
                continue
            matched = self.acls.matching(acl_filter)
            doomed.update((acl_id, None) for acl_id, _ in matched)
            results.append([acl for _, acl in matched])
        records: list[Record] = [{"type": "RemoveAccessControlEntryRecord", "id": i} for i in doomed]
        failure = self._commit(records, "acls.deleted")
        return [failure if failure is not None and not isinstance(r, SecurityError) else r for r in results]

    # -- client quotas -----------------------------------------------------------------------------

    def alter_quotas(
        self,
        alterations: Sequence[QuotaAlteration],
        *,
        validate_only: bool = False,
        ip_valid: Callable[[str], bool] = is_ip_literal,
    ) -> list[tuple[Sequence[tuple[str, str | None]], SecurityError | None]]:
        """Alter the quotas of entities; one result per distinct entity, in the request's order.

        An entity named twice in one request, or with a refused operation, changes nothing.
        `ip_valid` says whether an ip entity's name is an address or a host that resolves.
        """
        planned: dict[
            QuotaEntity | int, tuple[Sequence[tuple[str, str | None]], list[Record] | SecurityError]
        ] = {}
        for index, (pairs, ops) in enumerate(alterations):
            try:
                entity = quota_entity(pairs)
            except SecurityError as e:
                planned[index] = (pairs, e)  # not an entity: its own result
                continue
            if entity in planned:
                planned[entity] = (
                    pairs,
                    SecurityError(ErrorCode.INVALID_REQUEST, f"Ignoring duplicate entity {entity}"),
                )
                continue
            try:
                planned[entity] = (pairs, self.quotas.plan(entity, ops, ip_valid))
            except SecurityError as e:
                planned[entity] = (pairs, e)
        records = [r for _, out in planned.values() if isinstance(out, list) for r in out]
        failure = None if validate_only else self._commit(records, "quotas.altered")
        return [
            (pairs, out if isinstance(out, SecurityError) else failure) for pairs, out in planned.values()
        ]

    def describe_quotas(
        self, components: Sequence[FilterComponent], strict: bool
    ) -> list[tuple[QuotaEntity, dict[str, float]]]:
        """The entities a filter matches and their quotas; SecurityError for a bad filter."""
        return self.quotas.describe(components, strict)

    # -- SCRAM credentials -------------------------------------------------------------------------

    def alter_scram(
        self, deletions: Sequence[Deletion], upsertions: Sequence[Upsertion]
    ) -> list[tuple[str, SecurityError | None]]:
        records, results = self.scram.plan(deletions, upsertions)
        failure = self._commit(list(records), "scram.altered")
        return [(user, error if error is not None else failure) for user, error in results]

    def describe_scram(self, users: Sequence[str] | None) -> list[UserDescription]:
        return self.scram.describe(users)

    # -- delegation tokens -------------------------------------------------------------------------

    def create_token(
        self, owner: str, requester: str, renewers: Sequence[str], max_lifetime_ms: int, now_ms: int
    ) -> Created:
        records, created = self.tokens.plan_create(
            owner, requester, renewers, max_lifetime_ms, self.token_limits, now_ms
        )
        failure = self._commit(records, "delegation_token.created")
        return Created(failure.code) if failure is not None else created

    def renew_token(self, mac: bytes, period_ms: int, principal: str, now_ms: int) -> tuple[int, int]:
        """(error code, the new expiry time) of a RenewDelegationToken."""
        records, error, expiry = self.tokens.plan_renew(mac, period_ms, principal, self.token_limits, now_ms)
        failure = self._commit(records, "delegation_token.renewed")
        return (failure.code, 0) if failure is not None else (error, expiry)

    def expire_token(self, mac: bytes, period_ms: int, principal: str, now_ms: int) -> tuple[int, int]:
        """(error code, the new expiry time) of an ExpireDelegationToken."""
        records, error, expiry = self.tokens.plan_expire(mac, period_ms, principal, self.token_limits, now_ms)
        failure = self._commit(records, "delegation_token.expired")
        return (failure.code, 0) if failure is not None else (error, expiry)

    def remove_expired_tokens(self, now_ms: int) -> int:
        """The periodic sweep: remove every token past its expiry; how many were removed."""
        records = self.tokens.plan_sweep(now_ms)
        return 0 if self._commit(records, "delegation_token.swept") is not None else len(records)

    def token_credential(self, token_id: str, m: ScramMechanism) -> tuple[ScramCredential, str] | None:
        """A live token's SCRAM credential and its owner's name (SCRAM with `tokenauth=true`)."""
        return self.tokens.credential(token_id, m, self.token_limits.secret)

    def token_hmac_of(self, token: TokenInfo) -> bytes:
        """A token's HMAC under the broker's secret (b"" with tokens disabled)."""
        secret = self.token_limits.secret
        return token_hmac(token.token_id, secret) if secret else b""

    # -- the journal -------------------------------------------------------------------------------

    def _commit(self, records: list[Record], event: str) -> SecurityError | None:
        """Append one request's records as one batch; the error every change of it gets if that fails."""
        if not records:
            return None
        try:
            self._journal.append(records)
        except OSError as e:
            log.error("security.write_failed", change=event, error=str(e))
            return SecurityError(ErrorCode.UNKNOWN_SERVER_ERROR, f"could not write the security store: {e}")
        log.info(event, records=len(records))
        try:
            self._journal.maybe_compact()
        except OSError as e:
            log.error("security.compaction_failed", error=str(e))
        return None

    def _replay(self, records: list[Record]) -> None:
        for r in records:
            kind = r["type"]
            if kind == "AccessControlEntryRecord":
                self.acls.add(str(r["id"]), AclBinding.from_record(r))
            elif kind == "RemoveAccessControlEntryRecord":
                self.acls.remove(str(r["id"]))
            elif kind == "ClientQuotaRecord":
                self.quotas.replay(r)
            elif kind in ("UserScramCredentialRecord", "RemoveUserScramCredentialRecord"):
                self.scram.replay(r)
            elif kind in ("DelegationTokenRecord", "RemoveDelegationTokenRecord"):
                self.tokens.replay(r)
            else:
                raise ValueError(f"unknown security record type {kind!r}")

    def _snapshot(self) -> Iterator[list[Record]]:
        """The live state as records, in batches (what a checkpoint holds)."""
        records: list[Record] = [acl.to_record(acl_id) for acl_id, acl in self.acls]
        for entity, values in self.quotas.by_entity.items():
            records += [quota_record(entity, key, value) for key, value in sorted(values.items())]
        for user, mechanisms in self.scram.by_user.items():
            records += [credential_record(user, m, c) for m, c in mechanisms.items()]
        records += self.tokens.records()
        for start in range(0, len(records), _SNAPSHOT_BATCH):
            yield records[start : start + _SNAPSHOT_BATCH]

    @property
    def dirty(self) -> bool:
        """Whether changes were appended that are not fsynced yet."""
        return self._journal.dirty

    def sync(self) -> None:
        """Fsync what was appended (callable from a worker thread)."""
        self._journal.sync()

    async def synced(self) -> None:
        """Resolve once every change appended so far is fsynced (the fsync runs off the event loop).

        A failed fsync is logged and the answer still sent: the change is applied and written (a process
        crash keeps it); only a crash of the machine could lose it.
        """
        if self._journal.dirty:
            try:
                await asyncio.to_thread(self._journal.sync)
            except OSError as e:
                log.error("security.sync_failed", error=str(e))

    def close(self) -> None:
        self._journal.close()

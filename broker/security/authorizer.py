"""ACL enforcement as Kafka's StandardAuthorizer decides it: super users, the stored ACLs, the no-ACL default.

Built at start when `authorizer.class.name` names Kafka's StandardAuthorizer (or the older AclAuthorizer);
otherwise the broker has none (`ctx.authorizer is None`) and nothing is checked. A decision reads the
connection's principal (`ctx.principal`, `User:ANONYMOUS` without authentication) and its address as
Kafka compares it with an ACL's host (`acl_host`). A denial is logged, as Kafka's authorizer logs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

import structlog

from kafkito.broker.security.acls import CLUSTER_NAME, AclOperation, ResourceType, acl_host

if TYPE_CHECKING:
    from kafkito.broker.config import Config
    from kafkito.broker.context import RequestContext
    from kafkito.broker.security.store import SecurityStore

log = structlog.get_logger("kafkito.authorizer")

# A client's address as ACL hosts are written, parsed once per address rather than once per decision.
_acl_host = lru_cache(maxsize=4096)(acl_host)

AUTHORIZER_CLASSES = frozenset(
    {"org.apache.kafka.metadata.authorizer.StandardAuthorizer", "kafka.security.authorizer.AclAuthorizer"}
)


class Authorizer:
    """`authorize(ctx, op, resource_type, name)`: may this connection's principal do it?"""

    def __init__(
        self, store: Callable[[], SecurityStore], super_users: Iterable[str], allow_if_no_acl: bool
    ) -> None:
        self._store = store
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_if_no_acl

    def authorize(
        self,
        ctx: RequestContext,
        op: AclOperation,
        resource_type: ResourceType,
        name: str,
        *,
        log_denied: bool = True,
    ) -> bool:
        principal = ctx.principal
        if principal in self.super_users:
            return True
        host = _acl_host(ctx.peer_host)
        store = self._store()
        said = store.authorize(principal, host, op, resource_type, name)
        if said is None:
            # As StandardAuthorizer: the no-ACL default applies only to a resource no ACL names at all
            # (an ACL for another principal, host or operation makes it a DENY).
            said = self.allow_if_no_acl and next(store.acls.applying(resource_type, name), None) is None
        allowed = said
        if not allowed and log_denied:
            log.info(
                "authorization.denied",
                principal=principal, host=host, operation=op.name, resource_type=resource_type.name,
                resource=name, api_key=ctx.header.api_key,
            )  # fmt: skip
        return allowed

    def operations(
        self, ctx: RequestContext, resource_type: ResourceType, name: str, ops: Iterable[AclOperation]
    ) -> set[int]:
        """The codes of the operations on one resource this principal may do (authorized operations)."""
        return {int(op) for op in ops if self.authorize(ctx, op, resource_type, name, log_denied=False)}

    def authorize_cluster(self, ctx: RequestContext, op: AclOperation) -> bool:
        return self.authorize(ctx, op, ResourceType.CLUSTER, CLUSTER_NAME)

    def allowed(
        self, ctx: RequestContext, op: AclOperation, resource_type: ResourceType, names: Iterable[str]
    ) -> set[str]:
        """The names (each decided once) this principal may do `op` on."""
        return {name for name in set(names) if self.authorize(ctx, op, resource_type, name)}

    def authorize_any(self, ctx: RequestContext, op: AclOperation, resource_type: ResourceType) -> bool:
        """Kafka's `authorizeByResourceType`: may the principal do `op` on some resource of this type?"""
        principal = ctx.principal
        if principal in self.super_users:
            return True
        acls = self._store().acls
        return acls.authorize_by_resource_type(
            principal, _acl_host(ctx.peer_host), op, resource_type, allow_if_no_acl=self.allow_if_no_acl
        )


def authorizer_for(config: Config, store: Callable[[], SecurityStore]) -> Authorizer | None:
    """The broker's authorizer, or None when `authorizer.class.name` is empty.

    Raises ValueError for a class kafkito does not provide (Kafka fails to start too).
    """
    name = config.authorizer_class_name.strip()
    if not name:
        return None
    if name not in AUTHORIZER_CLASSES:
        known = ", ".join(sorted(AUTHORIZER_CLASSES))
        raise ValueError(f"authorizer.class.name={name!r} is not supported (kafkito provides {known})")
    super_users = [u.strip() for u in (config.super_users or "").split(";") if u.strip()]
    authorizer = Authorizer(store, super_users, config.allow_everyone_if_no_acl_found)
    log.info(
        "authorizer.enabled", authorizer=name, super_users=super_users,
        allow_everyone_if_no_acl_found=authorizer.allow_if_no_acl,
    )  # fmt: skip
    return authorizer


def denied(
    ctx: RequestContext, op: AclOperation, resource_type: ResourceType, names: Iterable[str]
) -> set[str]:
    """The names this principal may not do `op` on (none when the broker has no authorizer)."""
    authorizer = ctx.authorizer
    if authorizer is None:
        return set()
    wanted = set(names)
    return wanted - authorizer.allowed(ctx, op, resource_type, wanted)

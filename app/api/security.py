"""Role declarations: every endpoint depends on exactly one of these, and tests check that."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Annotated, Any

from fastapi import Depends, Header, Request
from sqlalchemy.orm import Session

from app.services.auth import Principal, authenticate
from app.services.errors import Forbidden
from app.storage.models import Role

ROLE_MARKER = "__trecpool_roles__"


def get_session(request: Request) -> Iterator[Session]:
    """A session for one request; endpoints commit their own unit of work."""
    session = request.app.state.session_factory()
    try:
        yield session
    finally:
        session.rollback()
        session.close()


SessionDep = Annotated[Session, Depends(get_session)]


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer ...` header."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def role(*roles: Role) -> Any:
    """A dependency admitting callers whose token has one of `roles`; yields their Principal."""

    def check(session: SessionDep, authorization: Annotated[str | None, Header()] = None) -> Principal:
        principal = authenticate(session, bearer_token(authorization))
        if principal.role not in roles:
            raise Forbidden(f"this endpoint is for {' or '.join(r.value for r in roles)} tokens")
        return principal

    setattr(check, ROLE_MARKER, tuple(r.value for r in roles))
    return Depends(check)


def public() -> Any:
    """A dependency declaring an endpoint open to everyone, token or not."""

    def open_to_all() -> None:
        return None

    setattr(open_to_all, ROLE_MARKER, ("public",))
    return Depends(open_to_all)


def declared_roles(dependency: Callable[..., Any]) -> tuple[str, ...] | None:
    """The roles a dependency declares, or None for other dependencies."""
    return getattr(dependency, ROLE_MARKER, None)


Organiser = Annotated[Principal, role(Role.organiser)]
Member = Annotated[Principal, role(Role.organiser, Role.team, Role.assessor)]
Submitter = Annotated[Principal, role(Role.organiser, Role.team)]

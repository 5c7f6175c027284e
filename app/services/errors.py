"""Use-case errors; the API maps each class to one HTTP status in one place (app/api/errors.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class ServiceError(Exception):
    """Base of every error a use case raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(ServiceError):
    """The named thing does not exist (or the caller may not know it exists)."""


class Conflict(ServiceError):
    """The request clashes with what is stored (a name already used, say)."""


class Forbidden(ServiceError):
    """The caller may not do this, or not now (submission window closed, say)."""


class Unauthenticated(ServiceError):
    """No valid token was given."""


class PayloadTooLarge(ServiceError):
    """An upload is over the size limit."""


class InvalidInput(ServiceError):
    """The input is malformed; `errors` lists what and where (line numbers or field names)."""

    def __init__(self, message: str, errors: Sequence[Mapping[str, object]] | None = None) -> None:
        super().__init__(message)
        self.errors: list[dict[str, object]] = [dict(error) for error in errors or ()]


class TooManyAttempts(ServiceError):
    """Too many failed authentications from one client: try again after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(ServiceError):
    """Something the request needs cannot be reached now (the run file store): try again after `retry_after`."""

    def __init__(self, message: str, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after

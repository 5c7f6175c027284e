"""No secret in the access log: request lines are logged with credentials in their URL redacted.

No URL the product makes carries a secret (a `judge_url` holds its one-time link in the fragment, which browsers
never send), but a request line may still carry one: an old `?link=...` judging URL, or a client that put a token
in a query string. uvicorn logs every request line (`trecpool serve` logs at info); this filter, on uvicorn's access
logger, rewrites such values before any handler sees the record.
"""

from __future__ import annotations

import logging
import re

ACCESS_LOGGER = "uvicorn.access"
REDACTED = "[redacted]"

# a trecpool secret anywhere (tokens and links are "tp_" + 43 URL-safe characters), then any credential-named
# query parameter (percent-encoded secrets included)
_SECRET = re.compile(r"tp_[A-Za-z0-9_\-]{8,}")
_CREDENTIAL_PARAMETER = re.compile(r"(?i)([?&;](?:link|token|access_token|api_key|key|secret|password)=)[^&;#\s\"]*")


def redact(text: str) -> str:
    """`text` with every trecpool secret and every credential-named query parameter's value replaced."""
    return _CREDENTIAL_PARAMETER.sub(rf"\g<1>{REDACTED}", _SECRET.sub(f"tp_{REDACTED}", text))


class RedactSecrets(logging.Filter):
    """Rewrites a log record's message and text arguments with their secrets redacted (it drops no record)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record in place; always keep it."""
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()}
        return True


def install_access_log_redaction() -> None:
    """Put the filter on uvicorn's access logger, once per process (uvicorn's logging set-up keeps logger filters)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(f, RedactSecrets) for f in logger.filters):
        logger.addFilter(RedactSecrets())

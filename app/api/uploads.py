"""Reading uploaded files within the size limits (from a worker thread: the endpoints that call this are plain `def`).

A gzip-compressed upload (told by its magic bytes, whatever its name) is decompressed a piece at a time, and refused
with 413 as soon as it grows past `max_decompressed_bytes`: a gzip bomb is never inflated beyond the limit.
"""

from __future__ import annotations

from fastapi import Request, UploadFile

from app.evaluation.errors import FormatError
from app.evaluation.formats.streams import TooLarge, gunzip_limited, is_gzip
from app.services.errors import InvalidInput, PayloadTooLarge

CHUNK = 1 << 20


def read_limited(request: Request, upload: UploadFile) -> bytes:
    """The upload's bytes (gunzipped if gzip-compressed), or 413 if it is larger than the configured limits."""
    settings = request.app.state.settings
    limit = settings.max_upload_bytes
    if upload.size is not None and upload.size > limit:
        raise PayloadTooLarge(f"file is {upload.size} bytes, over the limit of {limit}")
    parts, size = [], 0
    upload.file.seek(0)
    while chunk := upload.file.read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"file is over the limit of {limit} bytes")
        parts.append(chunk)
    data = b"".join(parts)
    del parts
    if is_gzip(data):
        data = gunzipped(data, settings.max_decompressed_bytes)
    refuse_nul(data)
    return data


def gunzipped(data: bytes, limit: int) -> bytes:
    """The decompressed bytes of a gzip upload: 413 past `limit` bytes, 422 if the gzip stream is broken."""
    try:
        return gunzip_limited(data, limit, source="file")
    except TooLarge:
        raise PayloadTooLarge(
            f"file is gzip-compressed and over the limit of {limit} bytes once decompressed (max_decompressed_bytes)"
        ) from None
    except FormatError as exc:
        message = "; ".join(m for _, m in exc.errors)
        raise InvalidInput(
            "file is gzip-compressed but could not be decompressed; nothing was stored",
            [{"field": "file", "message": message}],
        ) from None


def refuse_nul(data: bytes) -> None:
    """InvalidInput naming the first line with a NUL byte: no text format takes one, and PostgreSQL stores none."""
    at = data.find(b"\x00")
    if at >= 0:
        line = data.count(b"\n", 0, at) + 1
        raise InvalidInput("file holds a NUL byte; nothing was stored", [{"line": line, "message": "NUL byte (\\x00)"}])

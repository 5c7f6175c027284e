"""Reading uploaded files within the size limit (from a worker thread: the endpoints that call this are plain `def`)."""

from __future__ import annotations

from fastapi import Request, UploadFile

from app.services.errors import InvalidInput, PayloadTooLarge

CHUNK = 1 << 20


def read_limited(request: Request, upload: UploadFile) -> bytes:
    """The upload's bytes, or 413 if it is larger than the configured limit."""
    limit = request.app.state.settings.max_upload_bytes
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
    refuse_nul(data)
    return data


def refuse_nul(data: bytes) -> None:
    """InvalidInput naming the first line with a NUL byte: no text format takes one, and PostgreSQL stores none."""
    at = data.find(b"\x00")
    if at >= 0:
        line = data.count(b"\n", 0, at) + 1
        raise InvalidInput("file holds a NUL byte; nothing was stored", [{"line": line, "message": "NUL byte (\\x00)"}])

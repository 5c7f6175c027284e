"""Reading uploaded files within the size limit."""

from __future__ import annotations

from fastapi import Request, UploadFile

from app.services.errors import PayloadTooLarge

CHUNK = 1 << 20


async def read_limited(request: Request, upload: UploadFile) -> bytes:
    """The upload's bytes, or 413 if it is larger than the configured limit."""
    limit = request.app.state.settings.max_upload_bytes
    if upload.size is not None and upload.size > limit:
        raise PayloadTooLarge(f"file is {upload.size} bytes, over the limit of {limit}")
    parts, size = [], 0
    while chunk := await upload.read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"file is over the limit of {limit} bytes")
        parts.append(chunk)
    return b"".join(parts)

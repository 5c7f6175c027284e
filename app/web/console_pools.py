"""Placeholder: the organiser console's pools pages (being written)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, UploadFile

ReadUpload = Callable[[Request, UploadFile], bytes]


def make_router(page_role: Any, session_dependency: Any, read_upload: ReadUpload) -> APIRouter:
    """The pages' router (declared `page_role`)."""
    return APIRouter(tags=["web"], include_in_schema=False, dependencies=[page_role])

"""The ASGI application: API routers, web pages and error handlers over one session factory."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session, sessionmaker

from app import __version__
from app.api import (
    analyses,
    campaigns,
    collection,
    evaluations,
    health,
    judging,
    leaderboards,
    pools,
    qrels,
    runs,
    teams,
    topics,
)
from app.api.errors import install_error_handlers
from app.api.security import get_session, public
from app.config import Settings
from app.web import pages, results

ROUTERS = (
    health,
    campaigns,
    collection,
    topics,
    teams,
    runs,
    pools,
    judging,
    qrels,
    evaluations,
    leaderboards,
    analyses,
)
MULTIPART_SLACK = 1 << 20


def create_app(settings: Settings, session_factory: sessionmaker[Session]) -> FastAPI:
    """Build the application for the given settings and database."""
    app = FastAPI(
        title="trecpool",
        version=__version__,
        description="Pooled-judgement evaluation campaigns: runs, pools, judging, evaluation, reusability.",
    )
    app.state.settings = settings
    app.state.session_factory = session_factory
    for module in ROUTERS:
        app.include_router(module.router)
    app.include_router(pages.make_router(public()))  # HTML shells: their data comes from the API, with a token
    app.include_router(results.make_router(public(), get_session))  # published results, rendered on the server
    install_error_handlers(app)

    @app.middleware("http")
    async def limit_body(request: Request, call_next):  # type: ignore[no-untyped-def]
        """Refuse bodies whose declared length is over the upload limit before reading them."""
        length = request.headers.get("content-length")
        limit = settings.max_upload_bytes + MULTIPART_SLACK
        if length is not None and length.isdigit() and int(length) > limit:
            return JSONResponse(
                {"detail": f"request body over the limit of {settings.max_upload_bytes} bytes"}, status_code=413
            )
        return await call_next(request)

    return app

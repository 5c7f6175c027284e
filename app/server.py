"""The ASGI application: API routers, web pages and error handlers over one session factory."""

from __future__ import annotations

from fastapi import FastAPI
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
from app.api.limits import RequestLimits
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

    app.add_middleware(RequestLimits)
    return app

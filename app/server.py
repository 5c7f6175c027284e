"""The ASGI application: API routers, web pages and error handlers over one session factory."""

from __future__ import annotations

import gc

from fastapi import FastAPI
from sqlalchemy.orm import Session, sessionmaker
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import __version__
from app.api import (
    analyses,
    campaigns,
    collection,
    evaluations,
    health,
    judging,
    leaderboards,
    live,
    model_judging,
    moment_judging,
    organiser,
    pools,
    qrels,
    run_charts,
    runs,
    series,
    teams,
    tokens,
    topics,
)
from app.api.errors import ERROR_RESPONSES, install_error_handlers
from app.api.json_bodies import decode_off_loop
from app.api.limits import RequestLimits
from app.api.security import checked_credential, get_session, public
from app.api.uploads import read_limited
from app.config import Settings, get_settings
from app.web import (
    agreement_page,
    console,
    console_pools,
    console_results,
    console_series,
    docs,
    login,
    mark_page,
    organiser_page,
    pages,
    results,
    team_console,
)
from app.web.access_log import install_access_log_redaction

ROUTERS = (
    health,
    campaigns,
    collection,
    topics,
    teams,
    runs,
    run_charts,
    pools,
    judging,
    qrels,
    evaluations,
    leaderboards,
    moment_judging,
    model_judging,
    analyses,
    tokens,
    organiser,
    live,
    series,
)


def create_app(settings: Settings | None = None, session_factory: sessionmaker[Session] | None = None) -> FastAPI:
    """Build the application for the given settings and database (both read from the environment when omitted).

    With no arguments it is an ASGI factory: `uvicorn --factory app.server:create_app --workers 4`. Each process
    opens its own engine; all state lives in PostgreSQL, so any number of processes can serve the same database.
    """
    factory = settings is None and session_factory is None
    settings = settings or get_settings()
    if session_factory is None:
        session_factory = _open_sessions(settings)
    app = Service(
        docs_url=None,  # /docs and /redoc come from app.web.docs: their assets are served from here, not a CDN
        redoc_url=None,
        title="trecpool",
        version=__version__,
        description="Pooled-judgement evaluation campaigns: runs, pools, judging, evaluation, reusability.",
    )
    app.state.settings = settings
    app.state.session_factory = session_factory
    for module in ROUTERS:
        decode_off_loop(module.router)  # large JSON bodies are decoded and validated in a thread (api/json_bodies)
        app.include_router(module.router, responses=ERROR_RESPONSES)
    app.include_router(pages.make_router(public()))  # HTML shells: their data comes from the API, with a token
    app.include_router(results.make_router(public(), get_session))  # published results, rendered on the server
    app.include_router(mark_page.make_router(public()))  # the moment marking page (a shell over its API)
    app.include_router(organiser_page.make_router(public(), organiser.PANEL_ROLE, get_session))  # the organiser page
    app.include_router(agreement_page.make_router(public(), organiser.PANEL_ROLE, get_session))  # model vs people
    app.include_router(login.make_router(public(), get_session, checked_credential))  # /login, /logout: cookie
    app.include_router(team_console.make_router(public(), get_session, read_limited))  # /team/: runs, results
    app.include_router(console.make_router(public(), get_session, read_limited))  # /console/: the organiser's pages
    app.include_router(console_pools.make_router(public(), get_session, read_limited))  # pool, judging, adjudication
    app.include_router(console_results.make_router(public(), get_session, read_limited))  # qrels, evaluations, board
    app.include_router(console_series.make_router(public(), get_session, read_limited))  # series, progress sets
    docs.install_docs(app, public())
    install_error_handlers(app)

    app.add_middleware(RequestLimits)
    if factory:
        freeze_heap()  # the app of a serving process (as `trecpool serve` freezes its heap)
    install_access_log_redaction()  # no secret of a request line reaches uvicorn's access log
    return app


# Sent with every response that does not set its own: pages with scripts set a stricter CSP of their own
# (app/web/pages.py, results.py, organiser_page.py, docs.py); JSON and other bodies may load nothing at all.
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)
HTML_CSP = b"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
OTHER_CSP = b"default-src 'none'; frame-ancestors 'none'; base-uri 'none'"


class SecurityHeaders:
    """ASGI middleware: every response gets nosniff, no-referrer and a Content-Security-Policy, unless it set its own.

    HTML without a policy of its own gets one allowing this origin's assets only; JSON and everything else one that
    allows nothing (a JSON answer opened in a browser runs and loads nothing).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; add the headers to the start of its response."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                raw = list(message.get("headers", []))
                present = {name.lower() for name, _ in raw}
                raw += [(name, value) for name, value in SECURITY_HEADERS if name not in present]
                if b"content-security-policy" not in present:
                    content_type = next((v for k, v in raw if k.lower() == b"content-type"), b"")
                    raw.append(
                        (b"content-security-policy", HTML_CSP if content_type.startswith(b"text/html") else OTHER_CSP)
                    )
                message = {**message, "headers": raw}
            await send(message)

        await self.app(scope, receive, with_headers)


class Service(FastAPI):
    """The FastAPI app with SecurityHeaders outside even Starlette's error middleware, so that 500s get them too."""

    def build_middleware_stack(self) -> ASGIApp:
        """Starlette's middleware stack, wrapped in SecurityHeaders."""
        return SecurityHeaders(super().build_middleware_stack())


def freeze_heap() -> None:
    """Keep the objects alive now (the imports, the app) out of every later garbage collection (`gc.freeze`).

    A full collection scans every tracked object with the GIL held: the ~200,000 of a started server take about
    200 ms, during which no request moves, and big request bodies make such collections frequent. Called once the
    app is built, before serving; collections then scan only what serving made.
    """
    gc.collect()
    gc.freeze()


def _open_sessions(settings: Settings) -> sessionmaker[Session]:
    """Sessions on the configured database (the embedded one when DATABASE_URL is unset), schema checked."""
    from app.storage.connect import open_engine
    from app.storage.database import make_session_factory

    return make_session_factory(open_engine(settings.database_url, settings.data_dir).engine)

"""Every HTML page the app serves, in Debian's chromium: axe-core finds no serious or critical violation and nothing
scrolls sideways at 390 px and at 1280x800, each page in the state its user sees (signed in, a shot to judge, an item
to mark, the organiser's panel loaded), with a screenshot at both sizes. PAGES lists the pages and the test that checks
each; a GET route of the app outside /api/ (JSON twins aside) in neither PAGES nor NOT_PAGES fails here, so a new
page cannot go without a browser check. (The organiser console's pool, judging, adjudication, qrels, evaluations,
board and series pages are checked by their own modules.)"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from PIL import Image
from sqlalchemy import select, update

from app.api.errors import UNAVAILABLE_PAGE
from app.services.auth import create_token
from app.storage.database import session_scope
from app.storage.models import Role, Team, Topic
from tests.api import helpers
from tests.services.agreement_cases import build as build_agreement
from tests.web.judging_media import serve_with_ranges, silence_wav
from tests.web.pages import SETTLED, check_page, judge_link, marking_pool

SHOTS = "/tmp/h/every_{name}_{width}.png"

# every page (a GET route answering HTML) -> the test below that opens it in chromium and checks it at both sizes
PAGES = {
    "/": "test_the_public_pages",
    "/campaigns/{campaign_id}/leaderboard": "test_the_public_pages",
    "/campaigns/{campaign_id}/report": "test_the_public_pages",
    "/docs": "test_the_documentation_pages",
    "/docs/oauth2-redirect": "test_the_documentation_pages",
    "/redoc": "test_the_documentation_pages",
    "/login": "test_the_team_console",
    "/team/": "test_the_team_console",
    "/team/results": "test_the_team_console",
    "/team/runs/{run_id}/report": "test_the_team_console",
    "/team/bundle": "test_the_team_console",
    "/console/": "test_the_organiser_console",
    "/console/campaigns/{campaign_id}": "test_the_organiser_console",
    "/organise/campaigns/{campaign_id}": "test_the_organiser_pages",
    "/organise/campaigns/{campaign_id}/panel": "test_the_organiser_pages",  # shown inside the page above
    "/organise/campaigns/{campaign_id}/agreement": "test_the_organiser_pages",
    "/organise/campaigns/{campaign_id}/agreement/panel": "test_the_organiser_pages",  # inside the page above
    "/judge": "test_the_judging_page",
    "/mark": "test_the_marking_page",
}
# GET routes outside /api/ that are not pages, and what they answer instead
NOT_PAGES = {
    "/static/{name}": "a script or stylesheet",
    "/team": "a redirect to /team/",
    "/console": "a redirect to /console/",
    "/team/runs/{run_id}/download": "the run file, as text",
}
# the organiser console's pool, judging, adjudication, qrels, evaluations, board and series pages, and their
# downloads: their own modules' tests check them
OTHER_MODULES = ("app.web.console_pools", "app.web.console_results", "app.web.console_series")
# error pages (no route of their own): the console's error page at each status, and the server's 500/503 page
ERRORS = ("401", "403", "404", "unavailable")


def page_routes(app) -> set[str]:  # type: ignore[no-untyped-def]
    """The app's GET routes outside /api/, without the JSON twins and the other modules' console pages."""
    return {
        route.path
        for route in helpers.routes(app.routes)
        if "GET" in route.methods
        and not route.path.startswith("/api/")
        and not route.path.endswith(".json")
        and route.endpoint.__module__ not in OTHER_MODULES
    }


def test_every_page_of_the_app_has_a_browser_check(client, organiser) -> None:  # type: ignore[no-untyped-def]
    routes = page_routes(client.app)
    assert routes - PAGES.keys() - NOT_PAGES.keys() == set(), "a new page: add it to PAGES with its browser check"
    assert (PAGES.keys() | NOT_PAGES.keys()) - routes == set(), "PAGES names a route the app no longer has"
    assert {name for name in PAGES.values() if not callable(globals().get(name))} == set()
    # the routes that are not pages answer something else than HTML
    assert client.get("/static/style.css").headers["content-type"].startswith("text/css")
    for path in ("/team", "/console"):
        answer = client.get(path, follow_redirects=False)
        assert answer.status_code in (307, 308) and answer.headers["location"] == f"{path}/"
    campaign = helpers.new_campaign(client, organiser, 1)
    _, team = campaign.team()
    run = campaign.upload(team, "1 Q0 d1 1 1 mine\n", name="mine").json()
    download = client.get(f"/team/runs/{run['id']}/download", headers=team)
    assert download.status_code == 200 and download.headers["content-type"].startswith("text/plain")
    # and the pages do answer HTML
    for path in ("/", "/login", "/judge", "/mark", "/docs", "/redoc", "/docs/oauth2-redirect", "/organise/campaigns/1"):
        assert client.get(path).headers["content-type"].startswith("text/html"), path


def check(page, name: str, **options: Any) -> None:  # type: ignore[no-untyped-def]
    """check_page (`options`: its own), and a viewport that a phone follows (without one it draws 980 px wide)."""
    assert page.locator('meta[name="viewport"][content*="width=device-width"]').count() == 1, name
    check_page(page, name, SHOTS, **options)


class Checked:
    """The pages one test checked (by route), to compare with PAGES at its end."""

    def __init__(self, test: str) -> None:
        self.test = test
        self.routes: set[str] = set()

    def check(self, page, route: str, state: str = "", **options: Any) -> None:  # type: ignore[no-untyped-def]
        """check_page on the page as shown (`options`: its own), the route noted; screenshots named by route and
        state."""
        name = re.sub(r"[^a-z0-9]+", "_", f"{route} {state}".lower()).strip("_") or "home"
        check(page, name, **options)
        self.routes.add(route)

    def all_checked(self) -> None:
        """Every page PAGES gives this test was checked."""
        assert self.routes == {route for route, test in PAGES.items() if test == self.test}


# ----------------------------------------------------------------------------------------------- shared campaigns


@dataclass(frozen=True)
class Published:
    """A judged, evaluated and published campaign, one of its teams' tokens and one of that team's runs."""

    campaign_id: int
    team_token: str
    run_id: int


@pytest.fixture(scope="module")
def published(make_campaign, client, organiser, sessions) -> Published:  # type: ignore[no-untyped-def]
    """Built once for the module; the tests only read it."""
    campaign, *_ = helpers.build_judged_campaign(make_campaign, client, organiser, sessions)
    helpers.evaluate_campaign(client, organiser, campaign.id)
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    with session_scope(sessions) as session:
        team_id = session.scalars(select(Team.id).where(Team.campaign_id == campaign.id).order_by(Team.id)).first()
        token = create_token(session, Role.team, label="every page", campaign_id=campaign.id, team_id=team_id)
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=helpers.auth(token)).json()
    return Published(campaign.id, token, runs[0]["id"])


@pytest.fixture(scope="module")
def context(browser) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """One browser context for the module (axe needs the pages' CSP bypassed)."""
    made = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
    yield made
    made.close()


@pytest.fixture
def page(context) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """A fresh page, signed out (the context's cookies cleared), whose script errors fail the test."""
    context.clear_cookies()
    made = context.new_page()
    errors: list[str] = []
    made.on("pageerror", lambda exc: errors.append(str(exc)))
    yield made
    made.close()
    assert errors == []


def sign_in(page, live_server: str, token: str, target: str) -> None:  # type: ignore[no-untyped-def]
    """Sign in through /login, coming back to `target`."""
    page.goto(f"{live_server}{target}")
    page.fill("#token", token)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(f"{live_server}{target}")


# --------------------------------------------------------------------------------------------------------- pages


def test_the_public_pages(page, live_server, published) -> None:  # type: ignore[no-untyped-def]
    checked = Checked("test_the_public_pages")
    page.goto(f"{live_server}/")
    assert page.locator(f"a[href='/campaigns/{published.campaign_id}/leaderboard']").count() == 1
    checked.check(page, "/")
    page.goto(f"{live_server}/campaigns/{published.campaign_id}/leaderboard")
    assert page.locator("table").count() >= 1
    checked.check(page, "/campaigns/{campaign_id}/leaderboard")
    page.goto(f"{live_server}/campaigns/{published.campaign_id}/report")
    assert page.locator("svg").count() >= 2
    checked.check(page, "/campaigns/{campaign_id}/report")
    checked.all_checked()


REPEATS = """() => [...document.querySelectorAll('[data-section-id^="operation/"]')].slice(8)
    .forEach(section => section.remove())"""


def test_the_documentation_pages(page, live_server) -> None:  # type: ignore[no-untyped-def]
    checked = Checked("test_the_documentation_pages")
    page.goto(f"{live_server}/docs")
    page.wait_for_selector(".opblock-summary-path", timeout=20_000)
    checked.check(page, "/docs", full_page=False)  # the documentation pages are long: their first screen
    page.goto(f"{live_server}/redoc")
    page.wait_for_selector("[data-section-id^='tag/']", timeout=30_000)
    # ReDoc draws all ~80 operations at once, each from the same parts: the first eight are checked, the rest taken
    # out of the document (axe walks a whole document even past an exclude: marked skipped, they took it a minute)
    page.evaluate(REPEATS)
    checked.check(page, "/redoc", full_page=False)
    # Swagger UI's sign-in helper, opened alone (its script wants the window that opened it: the error is expected)
    helper = page.context.new_page()
    helper.goto(f"{live_server}/docs/oauth2-redirect")
    checked.check(helper, "/docs/oauth2-redirect")
    helper.close()
    checked.all_checked()


def test_the_team_console(page, live_server, published) -> None:  # type: ignore[no-untyped-def]
    checked = Checked("test_the_team_console")
    page.goto(f"{live_server}/login")
    page.fill("#token", "tp_not-a-token")
    page.click("button:has-text('Sign in')")
    assert "token:" in page.inner_text("main")
    checked.check(page, "/login", "refused")
    sign_in(page, live_server, published.team_token, "/team/")
    assert page.locator("#runs tbody tr").count() >= 1
    checked.check(page, "/team/")
    page.goto(f"{live_server}/team/results")
    checked.check(page, "/team/results")
    page.goto(f"{live_server}/team/runs/{published.run_id}/report")
    assert "Recall-precision curve" in page.inner_text("main")
    checked.check(page, "/team/runs/{run_id}/report")
    # the bundle is a download (Content-Disposition: attachment): its HTML is opened as the team would open the file
    bundle = page.request.get(f"{live_server}/team/bundle")
    assert bundle.ok and "attachment" in bundle.headers["content-disposition"]
    page.set_content(bundle.text())
    checked.check(page, "/team/bundle")
    checked.all_checked()


def test_the_organiser_console(page, live_server, published, organiser) -> None:  # type: ignore[no-untyped-def]
    checked = Checked("test_the_organiser_console")
    sign_in(page, live_server, organiser["Authorization"].split()[1], "/console/")
    checked.check(page, "/console/")
    page.goto(f"{live_server}/console/campaigns/{published.campaign_id}")
    checked.check(page, "/console/campaigns/{campaign_id}")
    checked.all_checked()


def test_the_error_pages(page, live_server, published, organiser) -> None:  # type: ignore[no-untyped-def]
    shown = set()
    sign_in(page, live_server, published.team_token, "/team/")
    page.goto(f"{live_server}/team/runs/2000000000/report")
    assert page.inner_text("h1") == "Not found"
    check(page, "error_404")
    shown.add("404")
    page.goto(f"{live_server}/console/")
    assert page.inner_text("h1") == "Not allowed"
    check(page, "error_403")
    shown.add("403")
    # a script's bad bearer token (a stale cookie is no session: it is sent to /login)
    page.set_extra_http_headers({"Authorization": "Bearer tp_not-a-token"})
    page.goto(f"{live_server}/team/")
    page.set_extra_http_headers({})
    assert page.inner_text("h1") == "Error 401"
    check(page, "error_401")
    shown.add("401")
    page.set_content(UNAVAILABLE_PAGE.format(message="The database is unreachable."))
    check(page, "error_unavailable")
    shown.add("unavailable")
    assert shown == set(ERRORS)


def test_the_organiser_pages(page, live_server, published, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    checked = Checked("test_the_organiser_pages")
    token = organiser["Authorization"].split()[1]
    page.goto(f"{live_server}/organise/campaigns/{published.campaign_id}")
    page.wait_for_selector("#token-form:not([hidden])")
    checked.check(page, "/organise/campaigns/{campaign_id}", "token")  # asked for the organiser's token
    page.fill("#token", token)
    page.press("#token", "Enter")
    page.wait_for_selector("#overview")
    checked.check(page, "/organise/campaigns/{campaign_id}/panel")  # shown in the page
    made = build_agreement(client, organiser, sessions, seed=5)
    page.goto(f"{live_server}/organise/campaigns/{made.campaign.id}/agreement")  # type: ignore[attr-defined]
    page.wait_for_selector("#agreement")  # the token is kept in the tab
    checked.check(page, "/organise/campaigns/{campaign_id}/agreement/panel")
    other = page.context.new_page()  # another tab: asked for the token again
    other.goto(f"{live_server}/organise/campaigns/{made.campaign.id}/agreement")  # type: ignore[attr-defined]
    other.wait_for_selector("#token-form:not([hidden])")
    checked.check(other, "/organise/campaigns/{campaign_id}/agreement", "token")
    other.close()
    checked.all_checked()


def example_image() -> bytes:
    """A topic's example image: a small PNG."""
    buffer = io.BytesIO()
    Image.new("RGB", (160, 90), (40, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


GUIDANCE = {"1": ("People dancing in a group, outdoors.", "Count any dance, even brief.", "dancers on a lawn")}


def judge(page, key: str) -> None:  # type: ignore[no-untyped-def]
    """Press a key of the judging page and wait until it shows the next shot (or the end of the queue)."""
    task = page.get_attribute("#item", "data-task")
    page.keyboard.press(key)
    page.wait_for_function(SETTLED, arg=task)


def test_the_judging_page(page, live_server, make_campaign, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    checked = Checked("test_the_judging_page")
    campaign, _ = helpers.setup_campaign(make_campaign, client, organiser, n_runs=2, depth=60, seed=4)
    with sessions() as session:
        for number, (description, guidelines, caption) in GUIDANCE.items():
            example = {"url": f"https://m.example/examples/{number}.png", "caption": caption}
            session.execute(
                update(Topic)
                .where(Topic.campaign_id == campaign.id, Topic.number == number)
                .values(description=description, guidelines=guidelines, examples=[example])
            )
        session.commit()
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 2, "seed": 9}, headers=organiser
    ).json()
    assessor_id, _ = helpers.make_assessor(client, organiser, campaign, "ann")
    body = {"assignments": [{"topic": "1", "assessor_id": assessor_id}]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    wav, png = silence_wav(30), example_image()
    page.route("https://m.example/**", lambda route: serve_with_ranges(route, wav))
    page.route("https://m.example/examples/**", lambda route: route.fulfill(body=png, content_type="image/png"))
    page.goto(f"{live_server}{judge_link(client, organiser, assessor_id)}")
    page.wait_for_function(SETTLED, arg="")
    assert page.text_content("#topic-description") == GUIDANCE["1"][0]
    page.wait_for_function("() => document.querySelector('#topic-examples img').naturalWidth === 160")
    checked.check(page, "/judge")
    page.keyboard.press("?")
    page.wait_for_selector("#help[open]")
    check(page, "judge_help")
    page.click("#keys-button")
    page.wait_for_selector("#keys[open]")
    check(page, "judge_keys")
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    page.click("#pause")
    page.wait_for_selector("#paused:not([hidden])")
    check(page, "judge_paused")
    page.keyboard.press("n")  # any key resumes (and judges nothing)
    page.wait_for_function(SETTLED, arg="")
    judge(page, "n")
    judge(page, "b")  # back to the shot just judged
    assert page.is_visible("#going-back")
    check(page, "judge_going_back")
    for _ in range(20):  # the rest of the queue, to its end
        if page.is_visible("#message"):
            break
        judge(page, "n")
    assert page.text_content("#message").startswith("All done")
    check(page, "judge_all_done")
    checked.all_checked()


def test_the_marking_page(page, live_server, make_campaign, client, organiser) -> None:  # type: ignore[no-untyped-def]
    checked = Checked("test_the_marking_page")
    _, _, assessor_id = marking_pool(make_campaign, client, organiser)
    wav = silence_wav(60)
    page.route("http://media.invalid/**", lambda route: serve_with_ranges(route, wav))
    link = client.post(f"/api/assessors/{assessor_id}/judge-link", headers=organiser).json()["judge_url"]
    page.goto(f"{live_server}/mark{link[link.index('#') :]}")
    page.wait_for_function(
        "() => document.getElementById('main').getAttribute('aria-busy') === 'false'"
        " && document.getElementById('item').dataset.item !== undefined"
    )
    checked.check(page, "/mark")
    page.keyboard.press("?")
    page.wait_for_selector("#help[open]")
    check(page, "mark_help")
    checked.all_checked()

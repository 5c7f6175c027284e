"""The organiser console's campaign series pages: create a series, attach campaigns, add a progress set from
`set number title` lines, build a series pool over two years' runs, release the set (a ticked confirmation), and the
set's board across years rendered from the API's own document (means with intervals); every form's errors named in
the form with nothing stored, a POST without the CSRF field refused, the JSON twins; and the whole in a real browser
(Debian's chromium via Playwright), axe-clean and without horizontal scroll at 390 px and 1280x800."""

from __future__ import annotations

import html
import re
import uuid

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.storage.models import Pool, Series, Topic
from tests.api.helpers import evaluate_campaign, judge_in_process, make_assessor
from tests.web.pages import check_page

SHOTS = "/tmp/h/series_{name}_{width}.png"
JSON = {"Accept": "application/json"}
SET_A = "A 101 A wooden bridge\nA 102 A ring\n"


def hidden(html: str, name: str) -> str:
    """The value of a hidden form field."""
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no field {name}"
    return found.group(1)


def console(client: TestClient, organiser: dict[str, str]) -> tuple[TestClient, str]:
    """A client signed in at /login with the organiser's token (its own cookie jar), and its session's CSRF value."""
    fresh = TestClient(client.app, base_url="http://testserver")
    form = fresh.get("/login")
    token = organiser["Authorization"].split()[1]
    data = {"token": token, "csrf_token": hidden(form.text, "csrf_token"), "next": "/console/"}
    assert fresh.post("/login", data=data, follow_redirects=False).status_code == 303
    return fresh, hidden(fresh.get("/console/").text, "csrf_token")


def run_lines(seed: int, tag: str) -> str:
    """A seeded run over main topics 1, 2 and progress topics 101, 102: 6 shots of 15 per topic."""
    rng = np.random.default_rng(seed)
    return "".join(
        f"{topic} Q0 s{doc} {rank} {10 - rank} {tag}\n"
        for topic in ("1", "2", "101", "102")
        for rank, doc in enumerate(rng.permutation(15)[:6].tolist(), start=1)
    )


def submit_and_close(client, organiser, campaign, seed: int) -> list[str]:  # type: ignore[no-untyped-def]
    """Two teams' runs (one each: vireo, which takes part every year, and another) on the campaign, then its
    submissions closed; the run names."""
    names = []
    for offset in (0, 1):
        _, team = campaign.team("vireo" if offset == 0 else f"team{campaign.id}")
        name = f"y{campaign.id}-{offset}"
        assert campaign.upload(team, run_lines(seed + offset, name), name=name).status_code == 201
        names.append(name)
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    return names


def series_count(sessions) -> int:  # type: ignore[no-untyped-def]
    """How many series exist."""
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(Series))


def pools_of(sessions, campaign_id: int) -> int:  # type: ignore[no-untyped-def]
    """How many pools the campaign has."""
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(Pool).where(Pool.campaign_id == campaign_id))


def progress_numbers(sessions, campaign_id: int) -> list[str]:  # type: ignore[no-untyped-def]
    """The campaign's progress topics' numbers."""
    with sessions() as session:
        query = select(Topic.number).where(Topic.campaign_id == campaign_id, Topic.progress_set.is_not(None))
        return sorted(session.scalars(query))


def field_error(page: str, form: str, field: str) -> str:
    """The error shown under a form's field (asserting there is one)."""
    name = re.escape(f"{form}-{field}-error")
    found = re.search(rf'<span class="field-error" id="{name}">([^<]*)</span>', page)
    assert found, f"no error under {form}-{field}"
    return html.unescape(found.group(1))


@pytest.fixture
def signed(client, organiser):  # type: ignore[no-untyped-def]
    """A console client and its CSRF value."""
    return console(client, organiser)


def test_creating_a_series_names_bad_fields_and_stores_nothing(signed, client, sessions) -> None:  # type: ignore[no-untyped-def]
    web, csrf = signed
    anonymous = TestClient(client.app, base_url="http://testserver")
    away = anonymous.get("/console/series", follow_redirects=False)
    assert away.status_code == 303 and away.headers["location"].startswith("/login?next=")
    assert anonymous.get("/console/series.json").status_code == 401
    listed = web.get("/console/series")
    assert listed.status_code == 200 and 'id="create"' in listed.text
    assert listed.headers["link"] == '</console/series.json>; rel="alternate"; type="application/json"'
    assert 'href="/console/series"' in web.get("/console/").text  # the console's home links here

    before = series_count(sessions)
    for name, message in (("", "required"), ("x" * 201, "at most 200")):
        page = web.post("/console/series", data={"csrf_token": csrf, "name": name, "description": "d"})
        assert page.status_code == 422 and message in field_error(page.text, "create", "name")
        assert 'aria-invalid="true" aria-describedby="create-name-error"' in page.text
    refused = web.post("/console/series", data={"name": "no csrf"})
    assert refused.status_code == 403 and "csrf_token" in refused.text
    assert series_count(sessions) == before

    name = f"avs-progress-{uuid.uuid4().hex[:8]}"
    made = web.post("/console/series", data={"csrf_token": csrf, "name": name}, follow_redirects=False)
    assert made.status_code == 303
    series_id = int(re.fullmatch(r"/console/series/(\d+)\?created=1", made.headers["location"]).group(1))  # type: ignore[union-attr]
    again = web.post("/console/series", data={"csrf_token": csrf, "name": name, "description": "kept"})
    assert again.status_code == 409 and "exists already" in again.text and ">kept</textarea>" in again.text
    assert series_count(sessions) == before + 1
    as_json = web.post("/console/series", data={"csrf_token": csrf, "name": ""}, headers=JSON)
    assert as_json.status_code == 422 and as_json.json()["errors"] == [
        {"field": "name", "message": "required, at most 200 characters"}
    ]
    twin = {s["id"]: s for s in web.get("/console/series.json").json()["series"]}
    assert twin[series_id]["name"] == name and twin[series_id]["url"] == f"/console/series/{series_id}"
    assert "csrf" not in web.get("/console/series.json").text


def test_the_series_page_forms_name_their_errors_and_store_nothing(  # type: ignore[no-untyped-def]
    signed, client, organiser, make_campaign, sessions
) -> None:
    web, csrf = signed
    made = client.post("/api/series", json={"name": f"s-{uuid.uuid4().hex[:8]}"}, headers=organiser).json()
    path = f"/console/series/{made['id']}"
    first, second = make_campaign(n_topics=2), make_campaign(n_topics=2)
    moments = make_campaign(n_topics=1, task_kind="moments")

    # topics before any campaign: the service's conflict, in the form
    page = web.post(f"{path}/topics", data={"csrf_token": csrf, "topics": SET_A})
    assert page.status_code == 409 and 'id="topics-errors"' in page.text and "no campaign yet" in page.text
    # attach: nothing chosen, a moment campaign, a campaign that does not exist
    page = web.post(f"{path}/campaigns", data={"csrf_token": csrf, "campaign_id": ""})
    assert page.status_code == 422 and field_error(page.text, "campaign", "campaign_id") == "choose one"
    page = web.post(f"{path}/campaigns", data={"csrf_token": csrf, "campaign_id": str(moments.id)})
    assert page.status_code == 422 and "a moment campaign" in field_error(page.text, "campaign", "campaign_id")
    page = web.post(f"{path}/campaigns", data={"csrf_token": csrf, "campaign_id": "2147483000"})
    assert page.status_code == 404 and 'id="campaign-errors"' in page.text
    assert web.get(f"{path}.json").json()["series"]["campaigns"] == []
    for campaign in (first, second):
        attached = web.post(f"{path}/campaigns", data={"csrf_token": csrf, "campaign_id": str(campaign.id)})
        assert attached.status_code == 200 and f"Campaign {campaign.id} attached" in attached.text

    # topics: a line without a title, nothing at all, a number given twice; nothing stored
    page = web.post(f"{path}/topics", data={"csrf_token": csrf, "topics": "A 101\nA 102 A ring\nB\n"})
    assert page.status_code == 422
    assert "line 1: expected: set number title" in re.sub(r"<[^>]+>", "", page.text)
    assert (
        "line 3: expected" in re.sub(r"<[^>]+>", "", page.text) and ">A 101\nA 102 A ring\nB\n</textarea>" in page.text
    )
    page = web.post(f"{path}/topics", data={"csrf_token": csrf, "topics": "  \n"})
    assert page.status_code == 422 and "one topic per line" in field_error(page.text, "topics", "topics")
    page = web.post(f"{path}/topics", data={"csrf_token": csrf, "topics": "A 101 x\nB 101 y\n"})
    assert page.status_code == 422 and "101 given twice" in page.text
    assert progress_numbers(sessions, first.id) == [] and web.get(f"{path}.json").json()["sets"] == []
    added = web.post(f"{path}/topics", data={"csrf_token": csrf, "topics": SET_A}, follow_redirects=False)
    assert added.status_code == 303 and added.headers["location"] == f"{path}?topics=2"
    assert progress_numbers(sessions, first.id) == progress_numbers(sessions, second.id) == ["101", "102"]
    twin = web.get(f"{path}.json").json()
    assert twin["series"] | {"url": None} == client.get(f"/api/series/{made['id']}", headers=organiser).json() | {
        "url": None
    }  # the API's view of the series, as is
    assert [(s["name"], s["sealed"], [t["title"] for t in s["topics"]]) for s in twin["sets"]] == [
        ("A", True, ["A wooden bridge", "A ring"])
    ]

    # release without the confirmation: named, still sealed
    page = web.post(f"{path}/sets/A/release", data={"csrf_token": csrf})
    assert page.status_code == 422 and "tick the confirmation" in field_error(page.text, "release", "confirm")
    assert web.get(f"{path}.json").json()["sets"][0]["sealed"] is True

    # pools: open campaigns, nothing ticked, a bad depth, a main topic's depth, an unknown set; nothing stored
    form = {"csrf_token": csrf, "set": "A", "kind": "depth", "depth": "4", "seed": "3", "reuse": "on"}
    both = {"campaign_ids": [str(first.id), str(second.id)]}
    page = web.post(f"{path}/pools", data={**form, **both})
    assert page.status_code == 409 and "close submissions before pooling" in page.text
    runs = submit_and_close(client, organiser, first, 1) + submit_and_close(client, organiser, second, 5)
    page = web.post(f"{path}/pools", data=form)
    assert page.status_code == 422 and field_error(page.text, "pool", "campaign_ids") == "name at least one"
    page = web.post(f"{path}/pools", data={**form, "depth": "0", **both})
    assert page.status_code == 422 and "1 to 100000" in field_error(page.text, "pool", "depth")
    assert 'id="pool-campaign-' in page.text and page.text.count('name="campaign_ids"') == 2
    assert page.text.count('type="checkbox" name="campaign_ids" value') == 2 and page.text.count(" checked>") >= 2
    page = web.post(f"{path}/pools", data={**form, "depths": "1:2, 101:3", **both})
    assert page.status_code == 422 and "not topics of progress set 'A': 1" in field_error(page.text, "pool", "depths")
    page = web.post(f"{path}/pools", data={**form, "set": "Z", **both})
    assert page.status_code == 404 and "no progress set 'Z'" in html.unescape(page.text)
    answer = web.post(f"{path}/pools", data={**form, "depth": "0", **both}, headers=JSON)
    assert answer.status_code == 422 and answer.json()["errors"][0]["field"] == "depth"
    refused = web.post(f"{path}/pools", data={**{k: v for k, v in form.items() if k != "csrf_token"}, **both})
    assert refused.status_code == 403
    assert pools_of(sessions, first.id) == pools_of(sessions, second.id) == 0

    # the board before anything of the set is evaluated says what to do; an unknown set is not found
    board = web.get(f"{path}/sets/A/board")
    assert board.status_code == 200 and 'id="next-step"' in board.text
    assert web.get(f"{path}/sets/A/board.json").json()["board"] is None
    assert web.get(f"{path}/sets/Z/board").status_code == 404

    built = web.post(f"{path}/pools", data={**form, **both}, follow_redirects=False)
    assert built.status_code == 303
    notice = dict(re.findall(r"(\w+)=(\d+)", built.headers["location"]))
    assert notice["host"] == str(second.id) and notice["reused"] == "0"
    pools = web.get(f"{path}.json").json()["sets"][0]["pools"]
    assert [(p["id"], p["campaign_id"], p["campaign_ids"], p["seed"]) for p in pools] == [
        (int(notice["built"]), second.id, [first.id, second.id], 3)
    ]
    stored = client.get(f"/api/pools/{notice['built']}", headers=organiser).json()
    assert {t["topic"] for t in stored["topics"]} == {"101", "102"} and len(stored["params"]["run_ids"]) == len(runs)
    released = web.post(f"{path}/sets/A/release", data={"csrf_token": csrf, "confirm": "on"}, follow_redirects=False)
    assert released.status_code == 303 and released.headers["location"] == f"{path}?released=A"
    assert client.get(f"/api/series/{made['id']}", headers=organiser).json()["sets"][0]["sealed"] is False


def test_a_campaign_bound_organiser_is_refused(client, make_campaign, sessions) -> None:  # type: ignore[no-untyped-def]
    from app.services.auth import issue_token
    from app.storage.database import session_scope
    from app.storage.models import Role

    campaign = make_campaign(n_topics=1)
    with session_scope(sessions) as session:
        _, plain = issue_token(session, Role.organiser, label="bound", campaign_id=campaign.id)
    bound = TestClient(client.app, headers={"Authorization": f"Bearer {plain}", **JSON})
    answer = bound.get("/console/series.json")
    assert answer.status_code == 403 and "not bound to a campaign" in answer.json()["detail"]
    before = series_count(sessions)
    assert bound.post("/console/series", data={"name": f"b-{uuid.uuid4().hex[:6]}"}).status_code == 403
    assert series_count(sessions) == before


def test_the_whole_in_a_browser(browser, live_server, client, organiser, make_campaign, sessions) -> None:  # type: ignore[no-untyped-def]
    first, second = make_campaign(n_topics=2), make_campaign(n_topics=2)
    token = organiser["Authorization"].split()[1]
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(f"{live_server}/console/")
        page.fill("#token", token)
        page.click("button:has-text('Sign in')")
        page.wait_for_url(f"{live_server}/console/")
        page.click("#series-link a")
        page.wait_for_url(f"{live_server}/console/series")
        check_page(page, "series_list", SHOTS)
        name = f"avs-progress-{uuid.uuid4().hex[:8]}"
        page.fill("#create-name", name)
        page.click("button:has-text('Create series')")
        page.wait_for_url(re.compile(r".*/console/series/\d+\?created=1$"))
        path = page.url.split("?")[0]
        series_id = int(path.rsplit("/", 1)[1])
        for campaign in (first, second):
            page.select_option("#attach-campaign_id", str(campaign.id))
            page.click("button:has-text('Attach campaign')")
            page.wait_for_url(f"{path}?attached={campaign.id}")
        assert page.locator("#campaigns tbody tr").count() == 2
        page.fill("#topics-text", SET_A)
        page.click("button:has-text('Add topics')")
        page.wait_for_url(f"{path}?topics=2")
        assert page.inner_text("section[data-set='A'] .state") == "sealed"

        runs = submit_and_close(client, organiser, first, 1) + submit_and_close(client, organiser, second, 5)
        page.check(f"#pool-campaign-{first.id}")
        page.check(f"#pool-campaign-{second.id}")
        page.fill("#pool-depth", "4")
        page.fill("#pool-seed", "3")
        page.click("button:has-text('Build series pool')")
        page.wait_for_url(re.compile(r".*\?built=\d+&host=\d+&reused=0$"))
        pool_id = int(re.search(r"built=(\d+)", page.url).group(1))  # type: ignore[union-attr]
        assert f"Pool {pool_id} built on campaign {second.id}" in page.inner_text("#notice")
        assert page.locator(f"section[data-set='A'] tr[data-pool='{pool_id}']").count() == 1
        check_page(page, "series_page", SHOTS)

        # judged on the host, cut and evaluated there: the board compares both years' runs with intervals
        assessor, headers = make_assessor(client, organiser, second, "ann")
        body = {"assignments": [{"topic": t, "assessor_id": assessor} for t in ("101", "102")]}
        assert client.post(f"/api/pools/{pool_id}/assignments", json=body, headers=organiser).status_code == 201
        judge_in_process(
            sessions, headers, lambda item: "relevant" if int(item["shot_id"][1:]) % 3 == 0 else "not_relevant"
        )
        version = client.post(f"/api/pools/{pool_id}/qrels", json={"label": "set A"}, headers=organiser).json()["id"]
        evaluate_campaign(client, organiser, second.id, qrels_version_id=version, measures=["AP", "P@5"])
        page.click("section[data-set='A'] a.board-link")
        page.wait_for_url(f"{path}/sets/A/board")
        api = client.get(f"/api/series/{series_id}/sets/A/board", headers=organiser).json()
        assert client.get(f"/console/series/{series_id}/sets/A/board.json", headers=organiser).json()["board"] == api
        shown = page.locator("#series-board tbody tr")
        assert shown.count() == len(runs) == len(api["rows"])
        first_row = shown.nth(0).inner_text().split("\t")
        assert first_row[1] == api["rows"][0]["run"] and first_row[2] == api["rows"][0]["campaign"]
        assert f"[{api['rows'][0]['ci_low']:.4f}, {api['rows'][0]['ci_high']:.4f}]" in first_row[4]
        years = {shown.nth(i).inner_text().split("\t")[2] for i in range(len(runs))}
        assert years == {c["name"] for c in api["campaigns"]} and len(years) == 2
        vireo = [r for r in api["rows"] if r["team"] == "vireo"]
        vireo = sorted(vireo, key=lambda r: r["campaign_id"])
        assert [r["campaign_id"] for r in vireo] == [first.id, second.id]  # a team's two years, on one board
        by_team = [page.locator("#by-team tbody tr").nth(i).inner_text().split("\t") for i in range(len(runs))]
        at = [row[0] for row in by_team].index("vireo")
        assert [row[:3] for row in by_team[at : at + 2]] == [
            [team, r["campaign"], r["run"]] for team, r in zip(("vireo", ""), vireo, strict=True)
        ]  # vireo's runs together, oldest year first
        check_page(page, "series_board", SHOTS)

        # release: refused until confirmed, then released
        page.goto(path)
        page.click("button:has-text('Release set A')")
        page.wait_for_load_state()
        assert "tick the confirmation" in page.inner_text("#release-confirm-error")
        page.check("section[data-set='A'] input[name=confirm]")
        page.click("button:has-text('Release set A')")
        page.wait_for_url(f"{path}?released=A")
        assert page.inner_text("section[data-set='A'] .state") == "released"
    finally:
        context.close()

"""The organiser console in a real browser (Debian's chromium via Playwright): sign in with an organiser token, create
a campaign (field errors in the page, nothing stored), edit it, add topics from JSON and a file (line-numbered errors,
nothing stored on error), upload the collection, open and close submissions, the JSON twins, a POST without the CSRF
field refused; each page axe-clean and without horizontal scroll at 390 px and 1280x800."""

from __future__ import annotations

import json
from uuid import uuid4

from tests.web.pages import check_page

SHOTS = "/tmp/h/h4_{name}_{width}.png"
TOPICS_JSON = json.dumps(
    [
        {"number": "101", "title": "a dog on a beach", "description": "Find shots of a dog on sand.",
         "guidelines": "Any breed; the dog must be visible.",
         "examples": [{"url": "https://example.org/dog.jpg", "caption": "a dog"}]},
        {"number": "102", "title": "a red car"},
    ],
    indent=1,
)  # fmt: skip
BROKEN_JSON = '[\n {"number": "101",\n  "title": "x",,\n }\n]'
COLLECTION = "s1 v1 0 1.5\ns2 v1 1.5 3\ns3 v2 0 2\n"
BAD_COLLECTION = "s1 v1 0 1.5\ns2 v1 late 3\ns3 v2 0 2\n"


def send(page, selector: str) -> None:  # type: ignore[no-untyped-def]
    """Click a submit button, without the browser's own field checks (the server's are under test)."""
    page.evaluate("() => document.querySelectorAll('form').forEach(f => { f.noValidate = true; })")
    page.click(selector)
    page.wait_for_load_state()


def named(client, organiser, name: str) -> list[dict]:  # type: ignore[no-untyped-def]
    """The campaigns of that name, by the API."""
    return [c for c in client.get("/api/campaigns", headers=organiser).json() if c["name"] == name]


def test_an_organiser_sets_up_a_campaign_in_the_console(browser, live_server, client, organiser) -> None:  # type: ignore[no-untyped-def]
    token = organiser["Authorization"].split()[1]
    name = f"console-{uuid4().hex[:8]}"
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        # not signed in: sent to /login, and to the console once signed in
        page.goto(f"{live_server}/console/")
        assert page.url == f"{live_server}/login?next=%2Fconsole%2F"
        page.fill("#token", token)
        page.click("button:has-text('Sign in')")
        page.wait_for_url(f"{live_server}/console/")
        check_page(page, "home", SHOTS)

        # bad settings: every bad field named in the page, the values kept, nothing stored
        page.fill("#create-name", name)
        page.fill("#create-max_grade", "11")
        page.fill("#create-interleave_every", "-1")
        send(page, "button:has-text('Create campaign')")
        errors = page.inner_text("#create-errors")
        assert "max_grade: a whole number from 1 to 10" in errors
        assert "interleave_every: a whole number from 0 to 1000" in errors and "max_results" not in errors
        assert page.get_attribute("#create-max_grade", "aria-invalid") == "true"
        assert page.input_value("#create-name") == name and page.input_value("#create-max_grade") == "11"
        assert named(client, organiser, name) == []
        check_page(page, "create_errors", SHOTS)

        # a good campaign: every setting stored as given
        page.fill("#create-max_grade", "2")
        page.fill("#create-interleave_every", "5")
        page.fill("#create-max_results", "50")
        page.check("#create-anonymise_teams")
        page.uncheck("#create-audio_on")
        page.select_option("#create-team_results", "hidden")
        page.click("button:has-text('Create campaign')")
        page.wait_for_url(f"{live_server}/console/campaigns/*?created=1")
        [made] = named(client, organiser, name)
        assert (made["status"], made["max_grade"], made["interleave_every"], made["max_results"]) == ("draft", 2, 5, 50)
        assert (made["anonymise_teams"], made["audio_on"], made["team_results"]) == (True, False, "hidden")
        campaign = f"{live_server}/console/campaigns/{made['id']}"
        assert "Campaign created" in page.inner_text("#notice")
        check_page(page, "campaign", SHOTS)

        # listed with its counts, and in the JSON twin (Link header)
        page.goto(f"{live_server}/console/")
        row = page.locator(f"#campaigns tr[data-campaign='{made['id']}']")
        assert row.inner_text().split("\t")[:3] == [name, "shots", "draft"]
        answer = page.request.get(f"{live_server}/console/")
        assert answer.headers["link"] == '</console/index.json>; rel="alternate"; type="application/json"'
        listed = page.request.get(f"{live_server}/console/index.json").json()["campaigns"]
        assert [c["counts"] for c in listed if c["id"] == made["id"]] == [
            {"topics": 0, "teams": 0, "assessors": 0, "runs": 0, "shots": 0}
        ]

        # edit: a bad media URL template named in the page and nothing changed; then a good change
        page.goto(campaign)
        page.fill("#settings-media_url_template", "ftp://media/{shot_id}")
        page.fill("#settings-max_grade", "3")
        send(page, "button:has-text('Save settings')")
        assert "media_url_template: must be an http:// or https:// URL" in page.inner_text("#settings-errors")
        assert named(client, organiser, name)[0]["max_grade"] == 2
        page.fill("#settings-media_url_template", "https://media.example/{video_id}.mp4")
        page.fill("#settings-interleave_every", "0")
        page.check("#settings-audio_on")
        page.click("button:has-text('Save settings')")
        page.wait_for_url(f"{campaign}?saved=1")
        now = named(client, organiser, name)[0]
        assert (now["max_grade"], now["interleave_every"], now["audio_on"], now["anonymise_teams"]) == (
            3,
            0,
            True,
            True,
        )
        assert now["media_url_template"] == "https://media.example/{video_id}.mp4"

        # topics: broken JSON named by line, nothing stored; then JSON with guidance, then a file
        topics_api = f"/api/campaigns/{made['id']}/topics"
        page.fill("#topics-json", BROKEN_JSON)
        page.click("button:has-text('Add topics')")
        assert "line 3:" in page.inner_text("#topics-errors")
        assert page.input_value("#topics-json") == BROKEN_JSON
        assert client.get(topics_api, headers=organiser).json() == []
        check_page(page, "topics_errors", SHOTS)
        page.fill("#topics-json", TOPICS_JSON)
        page.click("button:has-text('Add topics')")
        page.wait_for_url(f"{campaign}?topics=2")
        stored = client.get(topics_api, headers=organiser).json()
        assert [(t["number"], t["guidelines"]) for t in stored] == [("101", "Any breed; the dog must be visible."),
                                                                    ("102", "")]  # fmt: skip
        assert stored[0]["examples"] == [{"url": "https://example.org/dog.jpg", "caption": "a dog"}]
        page.fill("#topics-json", json.dumps([{"number": "101", "title": "again"}]))
        page.click("button:has-text('Add topics')")
        assert "101" in page.inner_text("#topics-errors") and len(client.get(topics_api, headers=organiser).json()) == 2
        page.set_input_files(
            "#topics-file", files=[{"name": "t.txt", "mimeType": "text/plain", "buffer": b"103 a cat\n"}]
        )
        page.click("button:has-text('Add topics')")
        page.wait_for_url(f"{campaign}?topics=1")
        assert page.locator("#topics tbody tr").count() == 3

        # the collection: a bad line named, nothing stored; then a good file
        shots_api = f"/api/campaigns/{made['id']}/collection"
        files = [{"name": "msb.txt", "mimeType": "text/plain", "buffer": BAD_COLLECTION.encode()}]
        page.set_input_files("#collection-file", files=files)
        page.click("button:has-text('Upload collection')")
        collection_errors = page.inner_text("#collection-errors")
        assert (
            "line 2:" in collection_errors and "line 1:" not in collection_errors and "line 3:" not in collection_errors
        )
        assert client.get(shots_api, headers=organiser).json()["n_shots"] == 0
        files = [{"name": "msb.txt", "mimeType": "text/plain", "buffer": COLLECTION.encode()}]
        page.set_input_files("#collection-file", files=files)
        page.click("button:has-text('Upload collection')")
        page.wait_for_url(f"{campaign}?shots=3")
        assert client.get(shots_api, headers=organiser).json()["n_videos"] == 2
        assert page.inner_text("#collection") == "3 shots in 2 videos."

        # open and close submissions
        page.click("button:has-text('Open submissions')")
        page.wait_for_url(f"{campaign}?status=open")
        assert page.inner_text("#status") == "open" and named(client, organiser, name)[0]["status"] == "open"
        page.click("button:has-text('Close submissions')")
        page.wait_for_url(f"{campaign}?status=closed")
        assert named(client, organiser, name)[0]["status"] == "closed"
        assert page.locator("button:has-text('Open submissions')").count() == 1  # a closed campaign may reopen
        check_page(page, "campaign_full", SHOTS)

        # the campaign page's JSON twin
        twin = page.request.get(f"{campaign}.json").json()
        assert twin["campaign"]["counts"] == {"topics": 3, "teams": 0, "assessors": 0, "runs": 0, "shots": 3}
        assert twin["collection"] == {"n_shots": 3, "n_videos": 2} and twin["may_open"] is True

        # the CSRF field is required: the same POST without it is refused and changes nothing
        status = page.evaluate(
            "async url => (await fetch(url, {method: 'POST', body: new FormData()})).status", f"{campaign}/open"
        )
        assert status == 403 and named(client, organiser, name)[0]["status"] == "closed"
    finally:
        context.close()


def sign_in(page, live_server: str, token: str, target: str) -> None:  # type: ignore[no-untyped-def]
    """Sign in through /login, coming back to `target`."""
    page.goto(f"{live_server}{target}")
    page.fill("#token", token)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(f"{live_server}{target}")


def test_teams_and_assessors_in_the_console(browser, live_server, client, organiser) -> None:  # type: ignore[no-untyped-def]
    name = f"members-{uuid4().hex[:8]}"
    made = client.post("/api/campaigns", json={"name": name, "task_kind": "shots"}, headers=organiser).json()
    campaign = f"/console/campaigns/{made['id']}"
    api = f"/api/campaigns/{made['id']}"
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()

    def works(token: str) -> int:
        return client.get(api, headers={"Authorization": f"Bearer {token}"}).status_code

    try:
        sign_in(page, live_server, organiser["Authorization"].split()[1], campaign)
        # an error page of the console leads back to the console, not to the team console
        page.goto(f"{live_server}/console/campaigns/999999999")
        assert page.get_by_role("link", name="Back to the organiser console").count() == 1
        page.goto(f"{live_server}{campaign}")

        # a team: its token shown once, and it works
        page.fill("#team-name", "alpha")
        page.click("button:has-text('Add team')")
        assert "Team alpha added" in page.inner_text("#secret")
        first = page.input_value("#secret-token")
        assert works(first) == 200
        team_view = client.get("/console/index.json", headers={"Authorization": f"Bearer {first}"})
        assert team_view.status_code == 403 and "organiser" in team_view.json()["detail"]
        check_page(page, "team_token", SHOTS)
        page.goto(f"{live_server}{campaign}")
        assert page.locator("#secret").count() == 0 and first not in page.content()  # shown once only
        assert first not in page.request.get(f"{live_server}{campaign}.json").text()

        # bad names: named in the page, nothing stored
        page.fill("#team-name", "alpha")
        page.click("button:has-text('Add team')")
        assert "exists already" in page.inner_text("#team-errors")
        page.fill("#team-name", "  ")
        send(page, "button:has-text('Add team')")
        assert "name: 1 to 200 characters" in page.inner_text("#team-errors")
        assert [t["name"] for t in client.get(f"{api}/teams", headers=organiser).json()] == ["alpha"]

        # rotate: a new token, the previous one revoked; revoke: none left
        page.click("button[aria-label='New token of alpha']")
        second = page.input_value("#secret-token")
        assert second != first and works(second) == 200 and works(first) == 401
        assert page.locator("#teams tr[data-team='alpha'] td").nth(1).inner_text() == "1"
        page.click("button[aria-label='Revoke tokens of alpha']")
        page.wait_for_url(f"{live_server}{campaign}?revoked=1")
        assert works(second) == 401
        assert page.locator("#teams tr[data-team='alpha'] td").nth(1).inner_text() == "0"

        # a person: token and a one-time judging link
        page.fill("#assessor-name", "ann")
        page.click("button:has-text('Add assessor')")
        assert "Assessor ann added" in page.inner_text("#secret")
        link = page.input_value("#secret-link")
        assert link.startswith(f"{live_server}/judge#link=") and works(page.input_value("#secret-token")) == 200
        check_page(page, "assessor_link", SHOTS)
        page.click("button[aria-label='New judging link of ann']")
        assert page.input_value("#secret-link") not in (link, "") and page.locator("#secret-token").count() == 0

        # a model: its provenance required and checked, then stored
        page.fill("#assessor-name", "judge-llm")
        page.select_option("#assessor-kind", "model")
        page.click("button:has-text('Add assessor')")
        assert "provenance.model" in page.inner_text("#assessor-errors")
        page.fill("#assessor-model", "qwen-vl")
        page.fill("#assessor-parameters", '{"temperature": 0,\n "top_p": }')
        page.click("button:has-text('Add assessor')")
        assert "provenance.parameters: line 2:" in page.inner_text("#assessor-errors")
        assert page.input_value("#assessor-model") == "qwen-vl"
        check_page(page, "assessor_errors", SHOTS)
        page.fill("#assessor-version", "2.5")
        page.fill("#assessor-config_hash", "abc123")
        page.fill("#assessor-parameters", '{"temperature": 0}')
        page.click("button:has-text('Add assessor')")
        assert "Assessor judge-llm added" in page.inner_text("#secret") and page.locator("#secret-link").count() == 0
        assessors = {a["name"]: a for a in client.get(f"{api}/assessors", headers=organiser).json()}
        assert assessors["judge-llm"]["kind"] == "model" and assessors["judge-llm"]["provenance"] == {
            "model": "qwen-vl", "version": "2.5", "config_hash": "abc123", "parameters": {"temperature": 0}
        }  # fmt: skip
        assert "model: qwen-vl 2.5" in page.inner_text("#assessors tr[data-assessor='judge-llm']")
        assert page.locator("button[aria-label='New judging link of judge-llm']").count() == 0
        check_page(page, "members", SHOTS)

        # the JSON twin lists them, without secrets
        twin = page.request.get(f"{live_server}{campaign}.json").json()
        assert [(a["name"], a["kind"]) for a in twin["assessors"]] == [("ann", "human"), ("judge-llm", "model")]
        assert twin["teams"] == [{"id": twin["teams"][0]["id"], "name": "alpha", "live_tokens": 0}]
    finally:
        context.close()

"""A campaign from nothing to a published board in the browser, through the pages alone: the organiser creates it,
uploads the collection and topics, adds teams and assessors, opens submissions; two teams submit runs in the team
console; the organiser closes, builds a depth pool, assigns topics; an assessor judges every shot with the keyboard;
quality control queues second opinions that another assessor gives; the organiser decides the disagreements with the
shot playing, cuts qrels, evaluates, previews and publishes; anyone reads the board. Every request the browsers make
is a page's own (no test-side API call: the test only reads what the pages show, and counts the requests)."""

from __future__ import annotations

import json
import re
from uuid import uuid4

from tests.web.pages import SETTLED, check_page, shown_task

SHOTS = "/tmp/h/e2e_{name}_{width}.png"
VIDEOS = 3
PER_VIDEO = 6
COLLECTION = "".join(f"s{v}_{i} v{v} {i * 2}.0 {i * 2 + 2}.0\n" for v in range(VIDEOS) for i in range(PER_VIDEO))
TOPICS = json.dumps(
    [
        {"number": "1", "title": "a dog on a beach", "description": "Shots of a dog on sand.",
         "guidelines": "Any breed; the dog must be visible."},
        {"number": "2", "title": "a red car", "description": "Shots with a red car in view."},
    ]
)  # fmt: skip
SHOT_IDS = [f"s{v}_{i}" for v in range(VIDEOS) for i in range(PER_VIDEO)]


def run_file(tag: str, order: list[str]) -> str:
    """A TREC run over both topics: `order` ranked first to last."""
    return "".join(f"{t} Q0 {s} {r + 1} {100 - r} {tag}\n" for t in ("1", "2") for r, s in enumerate(order))


RUN_A = run_file("alpha", SHOT_IDS[:8])
RUN_B = run_file("beta", SHOT_IDS[4:12])


def sign_in(page, base: str, path: str, token: str) -> None:  # type: ignore[no-untyped-def]
    """Open a page, get sent to /login, sign in, and land back on the page."""
    page.goto(base + path)
    assert "/login?next=" in page.url
    page.fill("#token", token)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(base + path)


def secret(page) -> str:  # type: ignore[no-untyped-def]
    """The token shown once after adding a team or assessor."""
    return page.input_value("#secret-token")


def judge_everything(page, url: str, verdict_key) -> int:  # type: ignore[no-untyped-def]
    """Open a judging link and answer every shot it offers by keyboard (`verdict_key(n)` the key for the n-th);
    how many were judged."""
    page.goto(url)
    page.wait_for_function(SETTLED, arg="")
    judged = 0
    while page.locator("#message").is_hidden():
        task = shown_task(page)
        page.keyboard.press(verdict_key(judged))
        page.wait_for_function(SETTLED, arg=task)
        judged += 1
    assert "All done" in page.inner_text("#message")
    return judged


def test_a_campaign_from_nothing_to_a_published_board(browser, live_server, organiser, job_worker) -> None:  # type: ignore[no-untyped-def]
    name = f"e2e-{uuid4().hex[:8]}"
    requests: list[str] = []
    contexts = []

    def context(width: int = 1280, height: int = 800):  # type: ignore[no-untyped-def]
        made = browser.new_context(bypass_csp=True, viewport={"width": width, "height": height})
        made.on("request", lambda request: requests.append(request.url))
        contexts.append(made)
        return made.new_page()

    try:
        # the organiser: sign in, create the campaign, its collection, topics, teams, assessors; open
        org = context()
        sign_in(org, live_server, "/console/", organiser["Authorization"].split()[1])
        org.fill("#create-name", name)
        org.fill("#create-max_results", "100")
        org.fill("#create-media_url_template", f"{live_server}/no-such-media/{{video_id}}.mp4")
        org.click("button:has-text('Create campaign')")
        org.wait_for_url(re.compile(r".*/console/campaigns/\d+\?created=1"))
        campaign = org.url.split("?")[0]
        campaign_id = int(campaign.rsplit("/", 1)[1])
        org.set_input_files(
            "#collection-file", files=[{"name": "msb.txt", "mimeType": "text/plain", "buffer": COLLECTION.encode()}]
        )
        org.click("button:has-text('Upload collection')")
        org.wait_for_url(f"{campaign}?shots={len(SHOT_IDS)}")
        org.fill("#topics-json", TOPICS)
        org.click("button:has-text('Add topics')")
        org.wait_for_url(f"{campaign}?topics=2")
        tokens = {}
        for team in ("alpha", "beta"):
            org.fill("#team-name", f"{team}-{name}")
            org.click("button:has-text('Add team')")
            tokens[team] = secret(org)
        links = {}
        for person in ("ann", "bob"):
            org.fill("#assessor-name", person)
            org.select_option("#assessor-kind", "human")
            org.click("button:has-text('Add assessor')")
            links[person] = org.input_value("#secret-link")
        org.click("button:has-text('Open submissions')")
        org.wait_for_url(f"{campaign}?status=open")
        check_page(org, "campaign_open", SHOTS)

        # two teams submit a run each in the team console
        for team, content in (("alpha", RUN_A), ("beta", RUN_B)):
            desk = context(390, 844)
            sign_in(desk, live_server, "/team/", tokens[team])
            desk.set_input_files(
                "#file", files=[{"name": "run.txt", "mimeType": "text/plain", "buffer": content.encode()}]
            )
            desk.fill("#name", f"{team}-run")
            desk.click("text=Submit run")
            desk.wait_for_load_state()
            assert f"{team}-run" in desk.inner_text("#runs")
        check_page(desk, "team_submitted", SHOTS)

        # close; a depth-4 pool; both topics to ann and bob (shared)
        org.goto(campaign)
        org.click("button:has-text('Close submissions')")
        org.wait_for_url(f"{campaign}?status=closed")
        org.goto(f"{campaign}/pool")
        org.check("#build-kind-depth")
        org.fill("#build-depth", "4")
        org.click("button:has-text('Preview')")
        org.wait_for_load_state()
        pooled = int(org.inner_text("#preview-pooled"))
        assert 8 <= pooled <= 16  # both topics: the union of two runs' top 4
        org.click("button:has-text('Build pool')")
        org.wait_for_load_state()
        assert org.locator("#pool-topics").count() == 1 and org.locator("#build").count() == 1  # built, unjudged
        for box in org.locator("#assign input[name=pair]").all():
            box.check()
        org.check("#assign-shared")
        org.click("#assign button:has-text('Assign')")
        org.wait_for_load_state()
        assert org.locator("#assign input[name=pair]").count() == 0  # every pair assigned
        check_page(org, "pool", SHOTS)

        # ann judges every pooled shot (relevant every third), by keyboard
        ann = context()
        assert judge_everything(ann, links["ann"], lambda n: "r" if n % 3 == 0 else "n") == pooled

        # quality control queues second opinions; bob gives them (all relevant)
        org.goto(f"{campaign}/pool")
        org.fill("#qc-min_runs", "2")
        org.fill("#qc-window", "3")
        org.click("button:has-text('Queue second judgements')")
        org.wait_for_load_state()
        queued = int(re.search(r"queued (\d+) second judgement", org.inner_text("#notice")).group(1))
        assert queued > 0
        bob = context()
        assert judge_everything(bob, links["bob"], lambda n: "r") == queued

        # the organiser decides every disagreement with the shot playing beside both verdicts
        org.goto(f"{campaign}/adjudication")
        check_page(org, "adjudication", SHOTS)
        decided = 0
        while org.locator("form.decide").count():
            item = org.locator("form.decide").first
            assert org.locator("video").count() >= 1
            item.locator("button[value=relevant]").click()
            org.wait_for_load_state()
            decided += 1
            assert decided <= queued
        assert decided > 0

        # cut qrels, evaluate, preview, publish
        org.goto(f"{campaign}/qrels")
        org.fill("#cut-label", "final")
        org.click("button:has-text('Cut qrels')")
        org.wait_for_load_state()
        assert org.locator("#cut-incomplete").count() == 0  # every pooled shot judged, every dispute decided
        assert org.locator("#versions tbody tr[data-version]").count() == 1
        check_page(org, "qrels", SHOTS)
        org.goto(f"{campaign}/evaluations")
        org.click("button:has-text('Start evaluation')")
        org.wait_for_url(re.compile(r".*/evaluations\?evaluation=\d+"))
        evaluation_id = int(org.url.rsplit("=", 1)[1])
        org.wait_for_selector(f"tr[data-evaluation='{evaluation_id}'][data-status='done']", timeout=90_000)
        org.goto(f"{campaign}/board")
        assert "Preview — not public." in org.inner_text("#preview")
        check_page(org, "board_preview", SHOTS)
        org.click("button:has-text('Publish the board')")
        org.wait_for_url(f"{live_server}/campaigns/{campaign_id}/leaderboard?published=1")

        # anyone reads the published board: both runs, ranked
        reader = context(390, 844)
        reader.goto(f"{live_server}/campaigns/{campaign_id}/leaderboard")
        board = reader.inner_text("main")
        assert "alpha-run" in board and "beta-run" in board
        check_page(reader, "published_board", SHOTS)
    finally:
        for made in contexts:
            made.close()

    # every request was a page, its static files, its media or the pages' own calls: none named an API the test
    # made up, and no token ever travelled in a URL
    assert requests
    assert not [u for u in requests if any(t in u for t in tokens.values())]

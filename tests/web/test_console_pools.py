"""The organiser console's pool, judging and adjudication pages: build a pool from a form (a preview first, equal to
the build and storing nothing; a bad field named in the form, nothing stored), assign topics, queue quality control,
adjudicate a disputed shot with its video and both verdicts named; the JSON twins, a POST without the CSRF field
refused; the REST twin of the preview; and the whole in a real browser (Debian's chromium via Playwright), axe-clean
and without horizontal scroll at 390 px and 1280x800."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.evaluation.pools.orders import ORDERS
from app.storage.models import Assignment, Judgement, JudgingTask, Pool, PoolItem
from app.web.console_pools import LISTED
from tests.api.helpers import (
    build_moment_pool,
    judge_in_process,
    make_assessor,
    setup_campaign,
)
from tests.web.judging_media import serve_with_ranges, silence_wav
from tests.web.pages import check_page

SHOTS = "/tmp/h/h5_{name}_{width}.png"
STRATA = "1-10:1.0, 11-60:0.5"
JSON = {"Accept": "application/json"}


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


def pools_of(sessions, campaign_id: int) -> int:  # type: ignore[no-untyped-def]
    """How many pools the campaign has."""
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(Pool).where(Pool.campaign_id == campaign_id))


@pytest.fixture
def closed(make_campaign, client, organiser):  # type: ignore[no-untyped-def]
    """A closed campaign (3 topics, 4 runs of two teams, a collection and media URL template) and its console path."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=4, depth=60, seed=5)
    return campaign, f"/console/campaigns/{campaign.id}"


@pytest.fixture
def signed(client, organiser):  # type: ignore[no-untyped-def]
    """A console client and its CSRF value."""
    return console(client, organiser)


def build_form(csrf: str, **fields: str) -> dict[str, str]:
    """A stratified build form with a fixed seed, `fields` changing it."""
    return {"csrf_token": csrf, "kind": "stratified", "strata": STRATA, "order": "shuffled", "seed": "7", **fields}


def test_without_a_pool_the_page_offers_the_build_form(closed, signed) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, _ = signed
    page = web.get(f"{path}/pool")
    assert page.status_code == 200 and 'id="build"' in page.text
    assert page.headers["link"] == f'<{path}/pool.json>; rel="alternate"; type="application/json"'
    assert 'value="1-300:1.0, 301-1000:0.25"' in page.text  # TRECVID's strata shown
    assert all(f'id="build-order-{o}"' in page.text for o in ORDERS)
    assert 'formaction="/console/campaigns/' in page.text and "Preview" in page.text
    twin = web.get(f"{path}/pool.json").json()
    assert twin["pool"] is None and twin["may_build"] is True and twin["may_pool"] is True
    assert [o["name"] for o in twin["orders"]] == list(ORDERS) and all(o["description"] for o in twin["orders"])
    assert twin["campaign"]["id"] == campaign.id and "csrf" not in web.get(f"{path}/pool.json").text
    assert web.get(f"{path}/adjudication.json").json()["pool_id"] is None


def test_the_preview_equals_the_build_and_stores_nothing(closed, signed, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, csrf = signed
    shown = web.post(f"{path}/pool/preview", data=build_form(csrf))
    assert shown.status_code == 200 and 'id="preview"' in shown.text
    preview = web.post(f"{path}/pool/preview", data=build_form(csrf), headers=JSON).json()
    assert pools_of(sessions, campaign.id) == 0
    assert client.get(f"/api/campaigns/{campaign.id}", headers=organiser).json()["status"] == "closed"
    # the REST twin answers the same for the same body
    body = {"kind": "stratified", "strata": STRATA, "seed": 7}
    api = client.post(f"/api/campaigns/{campaign.id}/pools/preview", json=body, headers=organiser)
    assert api.status_code == 200 and api.json() == preview
    assert pools_of(sessions, campaign.id) == 0
    assert preview["seed"] == 7 and preview["strata"] == [[1, 10, 1.0], [11, 60, 0.5]]
    assert [t["topic"] for t in preview["topics"]] == ["1", "2", "3"]
    assert preview["totals"]["pooled"] == sum(t["pooled"] for t in preview["topics"])
    assert 0 < preview["totals"]["sampled"] < preview["totals"]["pooled"]  # the second stratum is sampled at half
    assert f'<td class="num" id="preview-sampled">{preview["totals"]["sampled"]}</td>' in shown.text

    # the build stores exactly the previewed pool
    built = web.post(f"{path}/pool", data=build_form(csrf), follow_redirects=False)
    assert built.status_code == 303 and built.headers["location"].startswith(f"{path}/pool?built=")
    twin = web.get(f"{path}/pool.json").json()
    stored = client.get(f"/api/pools/{twin['pool']['id']}", headers=organiser).json()
    assert stored["topics"] == preview["topics"]
    assert [{k: t[k] for k in ("topic", "pooled", "sampled", "strata")} for t in twin["pool"]["topics"]] == preview[
        "topics"
    ]
    assert twin["pool"]["totals"] == preview["totals"] and twin["pool"]["seed"] == 7
    assert twin["may_build"] is True  # nothing judged yet: it may be rebuilt

    # a preview without a seed draws one, and building with it gives that pool
    api = f"/api/campaigns/{campaign.id}/pools"
    drawn = client.post(f"{api}/preview", json={"kind": "depth", "depth": 8}, headers=organiser).json()
    again = client.post(api, json={"kind": "depth", "depth": 8, "seed": drawn["seed"]}, headers=organiser).json()
    assert again["topics"] == drawn["topics"] and again["seed"] == drawn["seed"]
    assert all(t["pooled"] == t["sampled"] for t in drawn["topics"])
    assert pools_of(sessions, campaign.id) == 1  # the rebuild replaced the unjudged pool


def test_the_preview_fills_in_its_seed_for_the_build(closed, signed) -> None:  # type: ignore[no-untyped-def]
    _, path = closed
    web, csrf = signed
    shown = web.post(f"{path}/pool/preview", data=build_form(csrf, seed="", kind="depth", depth="5"))
    seed = re.search(r'id="preview-seed">(\d+)<', shown.text)
    assert seed and f'id="build-seed" name="seed" type="number" min="0" value="{seed.group(1)}"' in shown.text
    assert 'id="build-kind-depth" type="radio" name="kind" value="depth" checked' in shown.text


@pytest.mark.parametrize("depth", ["0", "abc", "", "100001"])
def test_a_bad_depth_is_named_in_the_form_and_nothing_is_stored(closed, signed, sessions, depth: str) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, csrf = signed
    for action in ("pool", "pool/preview"):
        page = web.post(f"{path}/{action}", data=build_form(csrf, kind="depth", depth=depth))
        assert page.status_code == 422, page.text
        error = re.search(r'<span class="field-error" id="build-depth-error">([^<]*)</span>', page.text)
        assert error and "1 to 100000" in error.group(1)
        assert 'aria-invalid="true" aria-describedby="build-depth-error"' in page.text
        assert f'value="{depth}"' in page.text or depth == ""  # the value as typed, to correct
    assert pools_of(sessions, campaign.id) == 0
    answer = web.post(f"{path}/pool", data=build_form(csrf, kind="depth", depth="0"), headers=JSON)
    assert answer.status_code == 422 and answer.json()["errors"][0]["field"] == "depth"


def test_the_service_s_errors_are_named_in_the_form_too(closed, signed, sessions) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, csrf = signed
    page = web.post(f"{path}/pool", data=build_form(csrf, strata="1-10:1.0, 20-60:0.5"))
    assert page.status_code == 422 and 'id="build-strata-error"' in page.text
    page = web.post(f"{path}/pool", data=build_form(csrf, system_types="R"))  # no run is of type R
    assert page.status_code == 422 and "selection is empty" in page.text
    page = web.post(f"{path}/pool/preview", data=build_form(csrf, model_assisted="on", human_share="0.3"))
    assert page.status_code == 422
    assert "no model assessor" in page.text and 'id="build-verification.model_assessor_id-error"' in page.text
    page = web.post(f"{path}/pool", data=build_form(csrf, order="backwards", human_share="2", model_assisted="on"))
    assert page.status_code == 422
    assert 'id="build-order-error"' in page.text and 'id="build-verification.human_share-error"' in page.text
    assert pools_of(sessions, campaign.id) == 0


def test_a_post_without_the_csrf_field_is_refused(closed, signed, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, csrf = signed
    form = build_form(csrf)
    del form["csrf_token"]
    for action in ("pool", "pool/preview"):
        refused = web.post(f"{path}/{action}", data=form)
        assert refused.status_code == 403 and "csrf_token" in refused.text
    assert web.post(f"{path}/pool", data={**form, "csrf_token": "0" * 64}).status_code == 403
    assert pools_of(sessions, campaign.id) == 0
    assert web.post(f"{path}/pool", data=build_form(csrf), follow_redirects=False).status_code == 303
    ann, _ = make_assessor(client, organiser, campaign, "ann")
    assert web.post(f"{path}/assignments", data={"pair": f"{ann}:1"}).status_code == 403
    assert web.post(f"{path}/quality-control", data={"min_runs": "2", "window": "3"}).status_code == 403
    with sessions() as session:
        assert (
            session.scalar(
                select(func.count()).select_from(Assignment).join(Pool).where(Pool.campaign_id == campaign.id)
            )
            == 0
        )
        item = session.scalar(select(PoolItem.id).join(Pool).where(Pool.campaign_id == campaign.id).limit(1))
    assert web.post(f"{path}/adjudication/{item}", data={"verdict": "relevant"}).status_code == 403
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Judgement).where(Judgement.pool_item_id == item)) == 0


def test_assignments_are_made_from_the_grid(closed, signed, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, csrf = signed
    web.post(f"{path}/pool", data=build_form(csrf))
    ann, _ = make_assessor(client, organiser, campaign, "ann")
    bob, _ = make_assessor(client, organiser, campaign, "bob")
    model = {"name": "robot", "kind": "model", "provenance": {"model": "m"}}
    robot = client.post(f"/api/campaigns/{campaign.id}/assessors", json=model, headers=organiser).json()["id"]
    page = web.get(f"{path}/pool")
    assert f'value="{ann}:1"' in page.text and f'value="{bob}:3"' in page.text
    assert f'value="{robot}:1"' not in page.text  # models judge through their API, not by assignment

    def rows() -> set[tuple[str, int]]:
        with sessions() as session:
            found = session.execute(select(Assignment.assessor_id).join(Pool).where(Pool.campaign_id == campaign.id))
            assert sorted(found.scalars()) == sorted(a for _, a in listed())
        return listed()

    def listed() -> set[tuple[str, int]]:
        return {(a["topic"], a["assessor_id"]) for a in web.get(f"{path}/pool.json").json()["assignments"]}

    made = web.post(
        f"{path}/assignments",
        data={"csrf_token": csrf, "pair": [f"{ann}:1", f"{ann}:2", f"{bob}:3"]},
        follow_redirects=False,
    )
    assert made.status_code == 303 and made.headers["location"] == f"{path}/pool?assigned=3"
    assert rows() == {("1", ann), ("2", ann), ("3", bob)}
    with sessions() as session:
        assert (
            session.scalar(
                select(func.count()).select_from(Assignment).join(Pool).where(Pool.campaign_id == campaign.id)
            )
            == 3
        )
    page = web.get(f"{path}/pool")
    assert f'value="{ann}:1"' not in page.text and "topic 1: ann assigned" in page.text  # shown, not offered again
    twin = web.get(f"{path}/pool.json").json()
    assert {t["topic"]: t["assessors"] for t in twin["pool"]["topics"]} == {"1": ["ann"], "2": ["ann"], "3": ["bob"]}

    # a topic with an owner needs `shared`: named in the form, nothing stored
    refused = web.post(f"{path}/assignments", data={"csrf_token": csrf, "pair": [f"{bob}:1", f"{bob}:2"]})
    assert (
        refused.status_code == 409 and "tick &#39;shared&#39;" in refused.text and 'id="assign-errors"' in refused.text
    )
    assert f'value="{bob}:1" aria-label="Topic 1 to bob" checked' in refused.text  # the ticks kept
    assert rows() == {("1", ann), ("2", ann), ("3", bob)}
    shared = web.post(
        f"{path}/assignments", data={"csrf_token": csrf, "pair": f"{bob}:1", "shared": "on"}, follow_redirects=False
    )
    assert shared.headers["location"] == f"{path}/pool?assigned=1" and ("1", bob) in rows()
    nothing = web.post(f"{path}/assignments", data={"csrf_token": csrf})
    assert nothing.status_code == 422 and 'id="assign-pair-error"' in nothing.text
    assert client.get(f"/api/campaigns/{campaign.id}", headers=organiser).json()["status"] == "judging"


def judged_pool(closed, web: TestClient, csrf: str, client, organiser, sessions):  # type: ignore[no-untyped-def]
    """The campaign's depth-10 pool built from the page, topic 1 judged by ann (relevant: shots at index 0 of their
    video, unsure: index 1) and QC's second opinions by bob (everything relevant); (pool id, ann's items)."""
    campaign, path = closed
    web.post(f"{path}/pool", data=build_form(csrf, kind="depth", depth="10"))
    ann, ann_headers = make_assessor(client, organiser, campaign, "ann")
    bob, bob_headers = make_assessor(client, organiser, campaign, "bob")
    pairs = [f"{ann}:1", f"{bob}:1"]
    web.post(f"{path}/assignments", data={"csrf_token": csrf, "pair": pairs, "shared": "on"})
    decide = {"0": "relevant", "1": "unsure"}
    seen = judge_in_process(sessions, ann_headers, lambda item: decide.get(item["shot_id"][-1], "not_relevant"))
    return web.get(f"{path}/pool.json").json()["pool"]["id"], seen, bob_headers


def test_progress_and_quality_control(closed, signed, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, csrf = signed
    pool_id, seen, bob = judged_pool(closed, web, csrf, client, organiser, sessions)
    twin = web.get(f"{path}/pool.json").json()
    progress = client.get(f"/api/pools/{pool_id}/progress", headers=organiser).json()
    topic_1 = next(t for t in twin["pool"]["topics"] if t["topic"] == "1")
    assert topic_1["rounds"] == {"1": {"done": len(seen), "total": len(seen)}}  # ann and bob share topic 1
    assert [(r["topic"], r["done"], r["total"]) for r in progress["topics"] if r["round"] == 1] == [
        (t["topic"], t["rounds"]["1"]["done"], t["rounds"]["1"]["total"]) for t in twin["pool"]["topics"]
    ]
    assert twin["progress"]["assessors"] == progress["assessors"] and progress["assessors"][0]["judged"] == len(seen)
    page = web.get(f"{path}/pool").text
    assert twin["may_build"] is False and 'id="build"' not in page  # judged: no rebuild
    row = page.split('id="pool-topics"')[1].split('<tr data-topic="1">')[1].split("</tr>")[0]
    assert f'<td class="num">{len(seen)}/{len(seen)}</td>' in row and "<td>ann, bob</td>" in row
    assert f'<tr><td>ann</td><td>1</td><td class="num">{len(seen)}</td>' in page
    stats = client.get(f"/api/pools/{pool_id}/stats", headers=organiser).json()
    assert twin["statistics"] is None and 'id="show-statistics"' in page  # on demand: it reads every run
    shown = web.get(f"{path}/pool.json?statistics=1").json()["statistics"]
    assert shown["judged_share"] == stats["judged_share"] and shown["runs"] == stats["runs"]
    share = f"mean {stats['judged_share']['mean'] * 100:.1f}%"
    assert share in web.get(f"{path}/pool?statistics=1").text

    # bad fields: named, nothing queued
    bad = web.post(f"{path}/quality-control", data={"csrf_token": csrf, "min_runs": "2", "window": "0"})
    assert bad.status_code == 422 and 'id="qc-window-error"' in bad.text and 'value="0"' in bad.text
    with sessions() as session:
        second = (
            select(func.count())
            .select_from(JudgingTask)
            .join(PoolItem)
            .where(PoolItem.pool_id == pool_id, JudgingTask.round == 2)
        )
        assert session.scalar(second) == 0
    queued = web.post(
        f"{path}/quality-control", data={"csrf_token": csrf, "min_runs": "2", "window": "3"}, follow_redirects=False
    )
    assert queued.status_code == 303
    notice = dict(re.findall(r"(\w+)=(\d+)", queued.headers["location"]))
    with sessions() as session:
        assert int(notice["queued"]) == session.scalar(second) > 0
    page = web.get(queued.headers["location"])
    assert f"Quality control queued {notice['queued']} second judgement(s)" in page.text


def test_adjudication_plays_the_shot_names_the_verdicts_and_decides(
    closed, signed, client, organiser, sessions
) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, csrf = signed
    pool_id, seen, bob = judged_pool(closed, web, csrf, client, organiser, sessions)
    web.post(f"{path}/quality-control", data={"csrf_token": csrf, "min_runs": "2", "window": "3"})
    judge_in_process(sessions, bob, lambda item: "relevant")
    queue = client.get(f"/api/pools/{pool_id}/adjudication", headers=organiser).json()
    twin = web.get(f"{path}/adjudication.json").json()
    assert twin["size"] == len(queue) > 0 and twin["pool_id"] == pool_id
    assert [i["pool_item_id"] for i in twin["items"]] == [q["pool_item_id"] for q in queue][:LISTED]
    assert twin["more"] == max(0, len(queue) - LISTED)
    assert twin["per_topic"] == [{"topic": "1", "count": len(queue)}]  # only topic 1 was judged
    disputed = next(i for i in twin["items"] if len(i["judgements"]) == 2)
    assert [(j["round"], j["assessor"]) for j in disputed["judgements"]] == [(1, "ann"), (2, "bob")]
    assert disputed["judgements"][1]["verdict"] == "relevant" and disputed["judgements"][0]["verdict"] != "relevant"
    video = disputed["shot_id"].split("_")[0].removeprefix("s")
    assert disputed["media_url"] == f"https://m.example/v{video}.mp4"
    assert disputed["play_url"] == f"https://m.example/v{video}.mp4#t={disputed['start']:g},{disputed['end']:g}"
    assert twin["agreement"]["assessor_pairs"][0]["first"] == "ann"

    page = web.get(f"{path}/adjudication")
    assert page.status_code == 200 and "media-src *" in page.headers["content-security-policy"]
    assert f'<video controls playsinline preload="metadata" src="{disputed["play_url"]}"' in page.text
    assert page.text.count("<video") == min(len(queue), LISTED)
    assert f">Topic 1 ({len(queue)})</a>" in page.text
    assert 'id="agreement"' in page.text and "Kappa" in page.text

    # a bad verdict is named, nothing stored; then a decision (ann's first verdict was not relevant), back to the
    # queue with a notice, and the cut qrels take it
    target = disputed["pool_item_id"]
    bad = web.post(f"{path}/adjudication/{target}", data={"csrf_token": csrf, "verdict": "maybe"})
    assert bad.status_code == 422 and "relevant or not_relevant" in bad.text
    decided = web.post(
        f"{path}/adjudication/{target}", data={"csrf_token": csrf, "verdict": "relevant"}, follow_redirects=False
    )
    assert decided.status_code == 303
    assert decided.headers["location"] == (f"{path}/adjudication?decided={disputed['shot_id']}&verdict=relevant")
    with sessions() as session:
        final = session.scalar(select(Judgement).where(Judgement.pool_item_id == target, Judgement.round == 3))
        assert final is not None and final.verdict.value == "relevant"
    after = client.get(f"/api/pools/{pool_id}/adjudication", headers=organiser).json()
    assert len(after) == len(queue) - 1 and target not in {q["pool_item_id"] for q in after}
    shown = web.get(decided.headers["location"])
    assert f"Shot {disputed['shot_id']} decided relevant." in shown.text
    qrels = client.post(
        f"/api/pools/{pool_id}/qrels", json={"label": "after", "allow_incomplete": True}, headers=organiser
    ).json()
    text = client.get(f"/api/qrels/{qrels['id']}/download", headers=organiser).text
    assert any(line.split()[2] == disputed["shot_id"] and line.split()[-1] == "1" for line in text.splitlines())

    # one topic at a time, and an unknown item named
    only = web.get(f"{path}/adjudication.json?topic=1").json()
    assert only["topic"] == "1" and only["size"] == len(after) and len(only["items"]) == min(len(after), LISTED)
    none = web.get(f"{path}/adjudication?topic=2")
    assert "Nothing to decide in topic 2." in none.text and "<video" not in none.text
    missing = web.post(f"{path}/adjudication/2147483647", data={"csrf_token": csrf, "verdict": "relevant"})
    assert missing.status_code == 404 and 'id="adjudicate-errors"' in missing.text


def test_a_model_assisted_pool_from_the_form(closed, signed, client, organiser) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    web, csrf = signed
    for name in ("m1", "m2"):
        client.post(
            f"/api/campaigns/{campaign.id}/assessors",
            json={"name": name, "kind": "model", "provenance": {"model": name}},
            headers=organiser,
        )
    models = web.get(f"{path}/pool.json").json()["model_assessors"]
    assert [m["name"] for m in models] == ["m1", "m2"]
    form = build_form(csrf, model_assisted="on", human_share="0.25", stratify="confidence")
    ambiguous = web.post(f"{path}/pool", data=form)
    assert ambiguous.status_code == 422 and "2 model assessors" in ambiguous.text
    built = web.post(f"{path}/pool", data={**form, "model_assessor_id": str(models[1]["id"])}, follow_redirects=False)
    assert built.status_code == 303
    twin = web.get(f"{path}/pool.json").json()
    assert twin["pool"]["params"]["verification"] == {
        "human_share": 0.25,
        "stratify": "confidence",
        "model_assessor_id": models[1]["id"],
    }
    verification = client.get(f"/api/pools/{twin['pool']['id']}/verification", headers=organiser).json()
    assert twin["verification"] == verification and [v["model_judged"] for v in verification] == [0, 0, 0]
    table = web.get(f"{path}/pool").text.split('id="verification"')[1].split("</table>")[0]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", table)
    assert cells[:5] == [verification[0]["topic"], str(verification[0]["items"]), "0", "–", "0"]


def test_a_moment_pool_from_the_form(make_campaign, client, organiser, signed) -> None:  # type: ignore[no-untyped-def]
    campaign, pool, _, _ = build_moment_pool(make_campaign, client, organiser)
    web, csrf = signed
    path = f"/console/campaigns/{campaign.id}"
    twin = web.get(f"{path}/pool.json").json()
    assert twin["pool"]["topics"][0]["proposed"] == 3 and twin["pool"]["totals"] == {
        "topics": 2,
        "proposed": 5,
        "judged": 0,
    }
    page = web.get(f"{path}/pool")
    assert 'id="build-iou"' in page.text and "pool/preview" not in page.text
    bad = web.post(f"{path}/pool", data={"csrf_token": csrf, "depth": "1", "iou": "2"})
    assert bad.status_code == 422 and 'id="build-iou-error"' in bad.text
    assert client.get(f"/api/moment-pools/{pool['id']}", headers=organiser).status_code == 200  # kept
    rebuilt = web.post(
        f"{path}/pool", data={"csrf_token": csrf, "depth": "1", "iou": "0.5", "seed": "4"}, follow_redirects=False
    )
    assert rebuilt.status_code == 303
    after = web.get(f"{path}/pool.json").json()["pool"]
    stored = client.get(f"/api/moment-pools/{after['id']}", headers=organiser).json()
    assert (
        after["params"]["depth"] == 1
        and [{k: t[k] for k in ("topic", "proposed", "judged")} for t in after["topics"]] == stored["topics"]
    )
    assert "no adjudication" in web.get(f"{path}/adjudication").text


def test_the_preview_endpoint_checks_as_the_build_does(make_campaign, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    open_campaign = make_campaign(n_topics=2)
    answer = client.post(
        f"/api/campaigns/{open_campaign.id}/pools/preview", json={"kind": "depth", "depth": 5}, headers=organiser
    )
    assert answer.status_code == 409 and "close submissions" in answer.json()["detail"]
    bad = client.post(
        f"/api/campaigns/{open_campaign.id}/pools/preview", json={"kind": "depth", "depth": 0}, headers=organiser
    )
    assert bad.status_code == 422
    assert pools_of(sessions, open_campaign.id) == 0


def test_only_the_campaign_s_organisers_see_its_pages(closed, client, make_campaign, sessions) -> None:  # type: ignore[no-untyped-def]
    from app.services.auth import issue_token
    from app.storage.database import session_scope
    from app.storage.models import Role

    campaign, path = closed
    anonymous = TestClient(client.app, base_url="http://testserver")
    away = anonymous.get(f"{path}/pool", follow_redirects=False)
    assert away.status_code == 303 and away.headers["location"].startswith("/login?next=")
    assert anonymous.get(f"{path}/adjudication.json").status_code == 401
    _, team = campaign.team()
    as_team = TestClient(client.app, headers=team)
    assert as_team.get(f"{path}/pool").status_code == 403
    other = make_campaign(n_topics=1)
    with session_scope(sessions) as session:
        _, plain = issue_token(session, Role.organiser, label="another campaign's", campaign_id=other.id)
    elsewhere = TestClient(client.app, headers={"Authorization": f"Bearer {plain}", **JSON})
    for page in ("pool.json", "adjudication.json"):  # another campaign's organiser: not even found
        assert elsewhere.get(f"{path}/{page}").status_code == 404
    refused = elsewhere.post(f"{path}/pool", data={"kind": "depth", "depth": "5"})
    assert refused.status_code == 404 and pools_of(sessions, campaign.id) == 0


def test_the_whole_in_a_browser(browser, live_server, closed, client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    campaign, path = closed
    ann, ann_headers = make_assessor(client, organiser, campaign, "ann")
    bob, bob_headers = make_assessor(client, organiser, campaign, "bob")
    token = organiser["Authorization"].split()[1]
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    wav = silence_wav(30)
    page.route("https://m.example/**", lambda route: serve_with_ranges(route, wav))
    try:
        page.goto(f"{live_server}{path}/pool")
        page.fill("#token", token)
        page.click("button:has-text('Sign in')")
        page.wait_for_url(f"{live_server}{path}/pool")
        check_page(page, "pool_empty", SHOTS)

        # a bad depth: named in the form, nothing stored
        page.check("#build-kind-depth")
        page.fill("#build-depth", "0")
        page.evaluate("() => document.querySelectorAll('form').forEach(f => { f.noValidate = true; })")
        page.click("button:has-text('Build pool')")
        page.wait_for_load_state()
        assert "1 to 100000" in page.inner_text("#build-depth-error") and pools_of(sessions, campaign.id) == 0
        check_page(page, "pool_errors", SHOTS)

        # preview, then build the previewed pool
        page.check("#build-kind-stratified")
        page.fill("#build-depth", "")
        page.fill("#build-strata", STRATA)
        page.fill("#build-seed", "")
        page.click("button:has-text('Preview')")
        page.wait_for_load_state()
        sampled = int(page.inner_text("#preview-sampled"))
        seed = page.inner_text("#preview-seed")
        assert page.input_value("#build-seed") == seed and pools_of(sessions, campaign.id) == 0
        check_page(page, "pool_preview", SHOTS)
        page.click("button:has-text('Build pool')")
        page.wait_for_url(f"{live_server}{path}/pool?built=*")
        assert page.inner_text("#pool-seed") == seed and int(page.inner_text("#total-sampled")) == sampled
        pool_id = client.get(f"/api/campaigns/{campaign.id}/overview", headers=organiser).json()["pool_id"]
        stored = client.get(f"/api/pools/{pool_id}", headers=organiser).json()
        assert (stored["seed"], sum(t["sampled"] for t in stored["topics"])) == (int(seed), sampled)

        # assign: ann topics 1 and 2, bob topic 1 too (shared), for second opinions
        for pair in (f"{ann}:1", f"{ann}:2", f"{bob}:1"):
            page.check(f"input[name=pair][value='{pair}']")
        page.check("#assign-shared")
        page.click("button:has-text('Assign')")
        page.wait_for_url(f"{live_server}{path}/pool?assigned=3")
        assert "3 assignment(s) made." in page.inner_text("#notice")
        assert page.inner_text("#pool-topics tr[data-topic='1'] td:last-child") == "ann, bob"
        page.click("#show-statistics")
        page.wait_for_url(f"{live_server}{path}/pool?statistics=1*")
        assert page.locator("#run-statistics tbody tr").count() == 4  # every run of the pool
        check_page(page, "pool_built", SHOTS)

        # ann judges topics 1 and 2 (relevant: the first shot of each video; unsure: the second); quality control
        # from the page queues bob's second opinions, which are all relevant
        judge_in_process(
            sessions,
            ann_headers,
            lambda item: {"0": "relevant", "1": "unsure"}.get(item["shot_id"][-1], "not_relevant"),
        )
        page.goto(f"{live_server}{path}/pool")
        page.fill("#qc-min_runs", "2")
        page.fill("#qc-window", "3")
        page.click("button:has-text('Queue second judgements')")
        page.wait_for_url(f"{live_server}{path}/pool?queued=*")
        queued = int(re.search(r"queued=(\d+)", page.url).group(1))  # type: ignore[union-attr]
        assert queued > 0 and f"Quality control queued {queued} second judgement(s)" in page.inner_text("#notice")
        second = judge_in_process(sessions, bob_headers, lambda item: "relevant")  # topic 1's: bob has no other
        assert 0 < len(second) <= queued and {i["topic"] for i in second} == {"1"}

        # adjudication: the disputed shot plays, both verdicts and who gave them, decided with a button
        page.goto(f"{live_server}{path}/adjudication")
        size = int(page.inner_text("#queue-size strong"))
        assert size == len(client.get(f"/api/pools/{pool_id}/adjudication", headers=organiser).json()) > 0
        disputed = page.locator("ol.queue li.disputed", has=page.locator("td", has_text="second opinion")).first
        shot = disputed.get_attribute("data-shot")
        rows = disputed.locator("table.verdicts tbody tr")
        assert [rows.nth(i).inner_text().split("\t") for i in range(rows.count())][1] == [
            "second opinion",
            "relevant",
            "bob",
        ]
        assert rows.nth(0).inner_text().split("\t")[2] == "ann"
        video = disputed.locator("video")
        assert video.get_attribute("src").startswith(f"https://m.example/v{shot.split('_')[0][1:]}.mp4#t=")
        page.wait_for_function("() => [...document.querySelectorAll('ol.queue video')].every(v => v.readyState >= 1)")
        assert page.locator("#agreement tbody tr").first.inner_text().split("\t")[:3] == [
            "ann",
            "bob",
            str(len(second)),
        ]
        check_page(page, "adjudication", SHOTS)
        disputed.locator("button:has-text('Relevant')").first.click()
        page.wait_for_url(f"{live_server}{path}/adjudication?decided=*")
        assert page.inner_text("#notice") == f"Shot {shot} decided relevant."
        assert int(page.inner_text("#queue-size strong")) == size - 1
        check_page(page, "adjudication_decided", SHOTS)
    finally:
        context.close()

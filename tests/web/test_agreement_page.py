"""The organiser's agreement page (model judge vs people) and its JSON twin: organisers only, the same document in
both, the versions chosen by query, and in a real browser (Debian's chromium via Playwright) the provenance, kappa,
confusion matrix, taus, shifts and warnings shown, within 390 px with tables scrolling in their own boxes."""

from __future__ import annotations

import pytest

from app.services.auth import create_token
from app.storage.database import session_scope
from app.storage.models import Role
from tests.api.helpers import new_campaign
from tests.services.agreement_cases import PROVENANCE, AgreementCampaign, build

SCREENSHOTS = "/tmp/h/a2_agreement_{width}.png"


@pytest.fixture(scope="module")
def made(client, organiser, sessions) -> AgreementCampaign:  # type: ignore[no-untyped-def]
    """One campaign with a human and a model version, only read by the tests."""
    return build(client, organiser, sessions, seed=5)


def _urls(made: AgreementCampaign) -> dict[str, str]:
    """The page, its panel and its twin for the campaign's default versions."""
    base = f"/organise/campaigns/{made.campaign.id}/agreement"  # type: ignore[attr-defined]
    return {"page": base, "panel": f"{base}/panel", "json": f"{base}.json"}


def test_the_json_twin_is_the_document_the_panel_shows(client, organiser, made: AgreementCampaign) -> None:  # type: ignore[no-untyped-def]
    urls = _urls(made)
    twin = client.get(urls["json"], headers=organiser)
    assert twin.status_code == 200, twin.text
    assert twin.headers["link"] == f'<{urls["json"]}>; rel="alternate"; type="application/json"'
    assert twin.headers["cache-control"] == "no-store"
    document = twin.json()
    assert (document["human"]["id"], document["model"]["id"]) == (made.human_id, made.model_id)
    by_accept = client.get(urls["panel"], headers={**organiser, "Accept": "application/json"})
    assert by_accept.json() == document and by_accept.headers["link"] == twin.headers["link"]
    panel = client.get(urls["panel"], headers=organiser)
    assert panel.status_code == 200 and panel.headers["content-type"].startswith("text/html")
    html = panel.text
    assert PROVENANCE["config_hash"] in html and PROVENANCE["version"] in html and "gpt-4o-mini" in html
    assert f"{document['judgements']['kappa']['linear']:.4f}" in html
    for warning in document["warnings"]:
        assert f'data-code="{warning["code"]}"' in html
    # the shell holds no data, names its twin, and sends JSON clients there (their token goes with them)
    shell = client.get(urls["page"])
    assert shell.status_code == 200 and PROVENANCE["config_hash"] not in shell.text
    assert shell.headers["link"] == twin.headers["link"] and f'href="{urls["json"]}"' in shell.text
    redirected = client.get(urls["page"], headers={**organiser, "Accept": "application/json"})
    assert redirected.status_code == 200 and redirected.json() == document
    # named versions, swapped
    swapped = client.get(f"{urls['json']}?human={made.model_id}&model={made.human_id}", headers=organiser)
    assert swapped.json()["labels"] == {"human": "umbrela-only", "model": "people"}
    assert swapped.headers["link"] == (
        f'<{urls["json"]}?human={made.model_id}&model={made.human_id}>; rel="alternate"; type="application/json"'
    )


def test_organisers_only_and_bad_queries_are_4xx(client, organiser, sessions, made: AgreementCampaign) -> None:  # type: ignore[no-untyped-def]
    urls = _urls(made)
    elsewhere = new_campaign(client, organiser, 1)
    assert client.get(urls["json"]).status_code == 401
    assert client.get(urls["panel"]).status_code == 401
    with session_scope(sessions) as session:
        team_token = create_token(session, Role.team, campaign_id=None, team_id=_a_team(session, made))
        other = create_token(session, Role.organiser, campaign_id=elsewhere.id)
    for token in (team_token, other):
        answer = client.get(urls["json"], headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code in (403, 404), answer.text
        assert "people" not in answer.text
    unknown = client.get(f"{urls['json']}?model=2000000", headers=organiser)
    assert unknown.status_code == 422 and unknown.json()["errors"][0]["field"] == "model"
    assert client.get(f"{urls['json']}?human=abc", headers=organiser).status_code == 422
    assert client.get(f"{urls['json']}?human=0", headers=organiser).status_code == 422


def _a_team(session, made: AgreementCampaign) -> int:  # type: ignore[no-untyped-def]
    """The id of a team of the campaign."""
    from sqlalchemy import select

    from app.storage.models import Team

    return session.scalars(select(Team.id).where(Team.campaign_id == made.campaign.id)).first()  # type: ignore[attr-defined]


def _organiser_token(sessions) -> str:  # type: ignore[no-untyped-def]
    """A fresh unbound organiser token."""
    with session_scope(sessions) as session:
        return create_token(session, Role.organiser, label="agreement page")


def test_the_page_in_a_browser_at_390_and_1280_px(client, organiser, sessions, live_server, browser, made) -> None:  # type: ignore[no-untyped-def]
    urls = _urls(made)
    document = client.get(urls["json"], headers=organiser).json()
    token = _organiser_token(sessions)
    for width in (390, 1280):
        page = browser.new_page(viewport={"width": width, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        page.on("console", lambda msg, errors=errors: errors.append(msg.text) if msg.type == "error" else None)
        requested: list[str] = []
        page.on("request", lambda request, requested=requested: requested.append(request.url))
        page.goto(f"{live_server}{urls['page']}")
        page.wait_for_selector("#token-form:not([hidden])")
        page.fill("#token", token)
        page.press("#token", "Enter")
        page.wait_for_selector("#agreement")
        assert not any(token in url for url in requested)  # the token never travels in a URL
        # warnings first and prominent, one per code
        codes = page.eval_on_selector_all("#warnings li", "items => items.map(i => i.dataset.code)")
        assert codes == [w["code"] for w in document["warnings"]] and "self_preference" in codes
        assert page.text_content("#judge .config-hash") == PROVENANCE["config_hash"]
        assert page.text_content("#judge .model-version") == PROVENANCE["version"]
        j = document["judgements"]
        assert page.text_content('#kappa tr[data-weights="quadratic"] td') == f"{j['kappa']['quadratic']:.4f}"
        cells = page.eval_on_selector_all(
            "#confusion tbody tr", "rows => rows.map(r => [...r.cells].slice(1).map(c => +c.textContent))"
        )
        assert cells == j["confusion"]
        assert page.text_content("#tau-b") == f"{document['rankings']['tau_b']:.3f}"
        shown = page.eval_on_selector_all("#shifts tbody tr", "rows => rows.map(r => r.dataset.run)")
        by_human = sorted(document["shifts"]["runs"], key=lambda row: -row["human"])
        assert shown == [row["run"] for row in by_human]
        first = by_human[0]
        assert page.text_content(f'#shifts tr[data-run="{first["run"]}"] .ci') == (
            f"{first['ci_low']:+.4f} … {first['ci_high']:+.4f}"
        )
        # fits: the page never scrolls sideways; wide tables scroll inside their own box
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=SCREENSHOTS.format(width=width), full_page=True)
        assert errors == []
        page.close()


def test_choosing_versions_in_the_browser(sessions, live_server, browser, made) -> None:  # type: ignore[no-untyped-def]
    urls = _urls(made)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{live_server}{urls['page']}")
    page.wait_for_selector("#token-form:not([hidden])")
    page.fill("#token", _organiser_token(sessions))
    page.press("#token", "Enter")
    page.wait_for_selector("#agreement")
    page.select_option("#human-version", str(made.model_id))
    page.select_option("#model-version", str(made.human_id))
    page.click("form.versions button")
    page.wait_for_selector("#agreement")
    assert page.url.endswith(f"?human={made.model_id}&model={made.human_id}")
    assert "umbrela-only" in page.text_content("#agreement-heading + p")
    assert page.is_visible("#no-provenance")  # the 'model' side now is the human version: no model assessor
    page.close()

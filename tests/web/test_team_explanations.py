"""A run report's Explanations section in the team console: how many of its results the run explains, the first
ones, links to all of them (JSON) and to the file as uploaded; the JSON pages and the download for the team only
(assessors and other teams get 404); the page axe-clean and without sideways scroll at 390 px and 1280x800."""

from __future__ import annotations

import re

from tests.api.helpers import evaluate_campaign, make_assessor, new_campaign
from tests.web.pages import check_page

SHOTS = "/tmp/h/explanations_{name}_{width}.png"
N_ITEMS = 22  # topic 1's results; its 11 odd ones explained, and 1 of topic 2: more than the 10 the report lists
QRELS = "".join(f"{t} 0 s{t}_{k} {int(k <= 4)}\n" for t in ("1", "2") for k in range(1, N_ITEMS + 1))


def explained_run() -> str:
    """An XML run over topics 1 and 2: topic 1 explains its odd shots by frame time and box, topic 2 one by text."""
    items = [
        f'<item seqNum="{k}" shotId="s1_{k}"'
        + (f' frameTime="{k}.25" bbox="{k},{k},{k + 100},{k + 80}"/>' if k % 2 else "/>")
        for k in range(1, N_ITEMS + 1)
    ]
    return (
        '<?xml version="1.0"?>\n<videoAdhocSearchResults>\n'
        '<videoAdhocSearchRunResult trType="D" class="F" pid="t" priority="1" desc="x">\n'
        '<videoAdhocSearchTopicResult tNum="1" elapsedTime="1">\n' + "\n".join(items) + "\n"
        "</videoAdhocSearchTopicResult>\n"
        '<videoAdhocSearchTopicResult tNum="2" elapsedTime="1">\n'
        '<item seqNum="1" shotId="s2_1"><explanation>a dog on a skateboard</explanation></item>\n'
        '<item seqNum="2" shotId="s2_2"/>\n'
        "</videoAdhocSearchTopicResult>\n</videoAdhocSearchRunResult>\n</videoAdhocSearchResults>\n"
    )


def evaluated(client, organiser):  # type: ignore[no-untyped-def]
    """An evaluated campaign with our explained XML run and a plain TREC run; (campaign, our headers, their headers,
    explained run id, plain run id)."""
    campaign = new_campaign(client, organiser, 2, max_results=100)
    _, ours = campaign.team(f"ours-{campaign.id}")
    _, theirs = campaign.team(f"theirs-{campaign.id}")
    explained = campaign.upload(ours, explained_run(), name="explained")
    assert explained.status_code == 201, explained.text
    plain = campaign.upload(ours, "1 Q0 s1_1 1 1.0 plain\n2 Q0 s2_1 1 1.0 plain\n", name="plain").json()
    qrels = client.post(
        f"/api/campaigns/{campaign.id}/qrels",
        data={"label": "q"},
        files={"file": ("q", QRELS.encode())},
        headers=organiser,
    )
    assert qrels.status_code == 201, qrels.text
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    evaluate_campaign(client, organiser, campaign.id, measures=["AP"])
    return campaign, ours, theirs, explained.json()["id"], plain["id"]


def test_the_report_shows_the_first_explanations_and_links_to_all(client, organiser) -> None:  # type: ignore[no-untyped-def]
    campaign, ours, theirs, run_id, plain_id = evaluated(client, organiser)
    twin = client.get(f"/team/runs/{run_id}/report.json", headers=ours).json()
    shown = twin["explanations"]
    assert (shown["total"], len(shown["explanations"]), shown["limit"]) == (12, 10, 10)
    assert shown["json"] == f"/team/runs/{run_id}/explanations.json"
    assert shown["download"] == f"/team/runs/{run_id}/download?original=true"
    assert [(e["topic"], e["item"], e["frame_time"]) for e in shown["explanations"][:2]] == [
        ("1", "s1_1", 1.25),
        ("1", "s1_3", 3.25),
    ]
    html = client.get(f"/team/runs/{run_id}/report", headers=ours).text
    section = html[html.index('<section class="explanations"') :]
    assert "This run explains 12 of its results; the first 10 are listed." in re.sub(r"\s+", " ", section)
    rows = re.findall(r"<tr><th scope=\"row\">(\w+)</th><td>(\w+)", section)
    assert rows == [("1", f"s1_{k}") for k in range(1, 20, 2)]
    assert '<td class="num">1.25</td>' in section and "1, 1, 101, 81" in section
    assert f'href="/team/runs/{run_id}/explanations.json"' in section
    # the JSON, a page at a time
    page = client.get(f"/team/runs/{run_id}/explanations.json", params={"offset": 10, "limit": 5}, headers=ours).json()
    assert (page["total"], [e["item"] for e in page["explanations"]]) == (12, ["s1_21", "s2_1"])
    assert page["explanations"][1]["text"] == "a dog on a skateboard"
    # the file as uploaded
    original = client.get(f"/team/runs/{run_id}/download?original=true", headers=ours)
    assert original.status_code == 200 and original.text == explained_run()
    # not for another team, nor an assessor
    _, assessor = make_assessor(client, organiser, campaign, "ann")
    for headers in (theirs, assessor):
        assert client.get(f"/team/runs/{run_id}/explanations.json", headers=headers).status_code == 404
        assert client.get(f"/team/runs/{run_id}/download?original=true", headers=headers).status_code == 404
    # a TREC run: the section says such runs cannot carry explanations
    plain = client.get(f"/team/runs/{plain_id}/report", headers=ours).text
    assert "TREC 6-column runs cannot carry explanations" in plain
    assert client.get(f"/team/runs/{plain_id}/report.json", headers=ours).json()["explanations"]["total"] == 0


def test_the_explanations_section_in_the_browser(browser, live_server, client, organiser) -> None:  # type: ignore[no-untyped-def]
    _, ours, _, run_id, _ = evaluated(client, organiser)
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(f"{live_server}/login")
        page.fill("#token", ours["Authorization"].split()[1])
        page.click("button:has-text('Sign in')")
        page.wait_for_url(f"{live_server}/team/")
        page.goto(f"{live_server}/team/runs/{run_id}/report")
        section = page.locator("section.explanations")
        assert section.locator("tbody tr").count() == 10
        assert "assessors never do" in section.inner_text()
        section.scroll_into_view_if_needed()
        check_page(page, "report", SHOTS)
        page.click("text=All explanations (JSON)")
        assert '"total":12' in page.content().replace(" ", "")
    finally:
        context.close()

"""Explanations of run results over HTTP: stored with the run's file, a page at a time for its team and the
campaign's organisers, refused to assessors and other teams, absent from every judging and marking view, and in the
run's download as uploaded."""

from __future__ import annotations

import gzip
import json

from tests.api.helpers import MOMENT_BLIND_KEYS, TASK_VIEW_KEYS, auth, make_assessor, step

WHY = "because-of-the-red-car"  # an explanation text no view for assessors may carry
EXPLANATION_KEYS = ("explanation", "frame_time", "frameTime", "box", "bbox")


def xml_run(topics: dict[str, list[str]], pid: str = "t") -> str:
    """A TRECVID AVS XML run: per topic its <item> lines."""
    parts = [
        '<?xml version="1.0"?>\n<!DOCTYPE videoAdhocSearchResults SYSTEM "videoAdhocSearchResults.dtd">\n'
        f'<videoAdhocSearchResults>\n<videoAdhocSearchRunResult trType="D" class="F" pid="{pid}" priority="1" '
        'desc="x">\n'
    ]
    for topic, items in topics.items():
        parts.append(f'<videoAdhocSearchTopicResult tNum="{topic}" elapsedTime="3">\n')
        parts += [item + "\n" for item in items]
        parts.append("</videoAdhocSearchTopicResult>\n")
    parts.append("</videoAdhocSearchRunResult>\n</videoAdhocSearchResults>\n")
    return "".join(parts)


EXPLAINED = xml_run(
    {
        "1": [
            '<item seqNum="1" shotId="s0_1" frameTime="12.5" bbox="10,20,110,220"/>',
            '<item seqNum="2" shotId="s0_2"/>',
            f'<item seqNum="3" shotId="s0_3"><explanation frameTime="7" bbox="0 0 5 5">{WHY}</explanation></item>',
        ],
        "2": ['<item seqNum="1" shotId="s1_1" frameTime="0:01:03"/>', '<item seqNum="2" shotId="s1_2"/>'],
    }
)


def test_the_team_and_organisers_read_a_runs_explanations_a_page_at_a_time(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=2)
    _, team = campaign.team()
    _, other = campaign.team()
    run = campaign.upload(team, EXPLAINED, name="explained")
    assert run.status_code == 201, run.text
    assert (run.json()["n_entries"], run.json()["format"]) == (5, "xml")
    path = f"/api/runs/{run.json()['id']}/explanations"
    page = client.get(path, headers=team).json()
    assert (page["total"], page["offset"], page["limit"], page["topic"], page["format"]) == (3, 0, 100, None, "xml")
    assert page["download"] == f"/api/runs/{run.json()['id']}/download?original=true"
    keys = ("topic", "item", "rank", "line", "frame_time", "box", "text")
    assert all(set(e) == set(keys) for e in page["explanations"])
    assert [tuple(e[k] for k in keys) for e in page["explanations"]] == [
        ("1", "s0_1", 1, 6, 12.5, [10, 20, 110, 220], None),
        ("1", "s0_3", 3, 8, 7.0, [0, 0, 5, 5], WHY),
        ("2", "s1_1", 1, 11, 63.0, None, None),
    ]
    assert client.get(path, headers=organiser).json() == page
    second = client.get(path, params={"offset": 1, "limit": 1}, headers=organiser).json()
    assert (second["total"], [e["item"] for e in second["explanations"]]) == (3, ["s0_3"])
    topic = client.get(path, params={"topic": "2"}, headers=team).json()
    assert (topic["total"], [e["item"] for e in topic["explanations"]]) == (1, ["s1_1"])
    assert client.get(path, params={"offset": 3}, headers=team).json()["explanations"] == []
    # another team, an assessor, nobody: refused
    assert client.get(path, headers=other).status_code == 404
    _, assessor = make_assessor(client, organiser, campaign, "ann")
    assert client.get(path, headers=assessor).status_code == 403
    assert client.get(path).status_code == 401
    assert client.get(path, params={"limit": 0}, headers=team).status_code == 422
    assert client.get(path, params={"limit": 1001}, headers=team).status_code == 422
    assert client.get("/api/runs/999999999/explanations", headers=team).status_code == 404


def test_the_download_as_uploaded_carries_the_explanations(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=2)
    _, team = campaign.team()
    _, other = campaign.team()
    run = campaign.upload(team, gzip.compress(EXPLAINED.encode()), name="zipped").json()
    original = client.get(f"/api/runs/{run['id']}/download", params={"original": "true"}, headers=team)
    assert original.status_code == 200
    assert original.content == EXPLAINED.encode()  # the file itself, unzipped, explanations and all
    assert original.headers["content-type"].startswith("application/xml")
    assert 'filename="zipped.xml"' in original.headers["content-disposition"]
    assert client.get(f"/api/runs/{run['id']}/download?original=true", headers=organiser).content == original.content
    assert client.get(f"/api/runs/{run['id']}/download?original=true", headers=other).status_code == 404
    # the plain download is still the run in TREC columns, which have no room for explanations
    converted = client.get(f"/api/runs/{run['id']}/download", headers=team).text.splitlines()
    assert [line.split()[:4] for line in converted] == [
        ["1", "Q0", "s0_1", "1"],
        ["1", "Q0", "s0_2", "2"],
        ["1", "Q0", "s0_3", "3"],
        ["2", "Q0", "s1_1", "1"],
        ["2", "Q0", "s1_2", "2"],
    ]
    trec = campaign.upload(team, "1 Q0 s0_1 1 1.0 t\n", name="plain").json()
    assert client.get(f"/api/runs/{trec['id']}/explanations", headers=team).json()["total"] == 0
    assert client.get(f"/api/runs/{trec['id']}/download?original=1", headers=team).text == "1 Q0 s0_1 1 1.0 t\n"


def test_malformed_explanations_refuse_the_upload_by_line(make_campaign, client):
    campaign = make_campaign(n_topics=1)
    _, team = campaign.team()
    bad = xml_run({"1": ['<item seqNum="1" shotId="s0_1" frameTime="1" bbox="9,9,1,1"/>']})
    response = campaign.upload(team, bad, name="bad")
    assert response.status_code == 422
    assert response.json()["errors"] == [
        {
            "line": 6,
            "message": "explanation of shot 's0_1': bounding box 9,9,1,1 needs x1 < x2 and y1 < y2 (left, top, right, "
            "bottom)",
        }
    ]
    assert client.get(f"/api/campaigns/{campaign.id}/runs", headers=team).json() == []


def test_assessors_judge_blind_of_explanations(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=2, max_results=100)
    msr = "".join(f"s{v}_{s}\tv{v}\t{s * 2}\t{s * 2 + 2}\n" for v in range(2) for s in range(1, 4))
    assert campaign.set_collection(msr).status_code == 200
    patched = client.patch(
        f"/api/campaigns/{campaign.id}",
        json={"media_url_template": "https://m.example/{video_id}.mp4"},
        headers=organiser,
    )
    assert patched.status_code == 200
    _, team = campaign.team()
    assert campaign.upload(team, EXPLAINED, name="explained").status_code == 201
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 10, "seed": 1}, headers=organiser
    ).json()
    ann_id, ann = make_assessor(client, organiser, campaign, "ann")
    body = {"assignments": [{"topic": t, "assessor_id": ann_id} for t in ("1", "2")]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    answers = [step(client, ann)]
    while answers[-1]["next"]:
        task = answers[-1]["next"][0]
        answers.append(step(client, ann, task_id=task["task_id"], verdict="relevant", seconds_spent=1.0))
    seen = [item for answer in answers for item in answer["next"]]
    assert {item["shot_id"] for item in seen} == {"s0_1", "s0_2", "s0_3", "s1_1", "s1_2"}
    assert all(set(item) == TASK_VIEW_KEYS for item in seen)
    history = client.get("/api/judging/history", headers=ann)
    assert history.status_code == 200
    dump = json.dumps([answers, history.json()])
    for secret in (*EXPLANATION_KEYS, WHY, "12.5", "110", "220"):
        assert secret not in dump
    run_id = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()[0]["id"]
    assert client.get(f"/api/runs/{run_id}/explanations", headers=ann).status_code == 403
    assert client.get(f"/api/runs/{run_id}/download?original=true", headers=ann).status_code == 403


def test_json_lines_moment_runs_keep_their_explanations_and_marking_stays_blind(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=1, task_kind="moments", media_url_template="https://media.example/{video_id}.mp4")
    assert campaign.set_collection("s1 vidA 0 60\n").status_code == 200
    _, team = campaign.team()
    lines: list[dict[str, object]] = [
        {"topic": "1", "video_id": "vidA", "start": 10, "end": 20, "score": 0.9},
        {"topic": "1", "video_id": "vidA", "start": 40, "end": 46, "score": 0.8},
    ]
    lines[0]["explanation"] = {"time": 12, "text": WHY}
    text = "".join(json.dumps(line) + "\n" for line in lines)
    run = campaign.upload(team, text, name="moments")
    assert run.status_code == 201, run.text
    page = client.get(f"/api/runs/{run.json()['id']}/explanations", headers=team).json()
    assert (page["format"], page["total"]) == ("moments", 1)
    assert page["explanations"] == [
        {"topic": "1", "item": "vidA", "rank": None, "line": 1, "frame_time": 12.0, "box": None, "text": WHY}
    ]
    original = client.get(f"/api/runs/{run.json()['id']}/download?original=true", headers=team)
    assert original.text == text and 'filename="moments.jsonl"' in original.headers["content-disposition"]
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    pool = client.post(
        f"/api/campaigns/{campaign.id}/moment-pools", json={"depth": 2, "iou": 0.5, "seed": 3}, headers=organiser
    ).json()
    ann_id, ann = make_assessor(client, organiser, campaign, "ann")
    body = {"assignments": [{"topic": "1", "assessor_id": ann_id}]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    item = client.post("/api/moment-judging/next", headers=ann).json()
    assert set(item) == MOMENT_BLIND_KEYS
    again = client.get(f"/api/moment-judging/items/{item['item_id']}", headers=ann).json()
    dump = json.dumps([item, again])
    for secret in (*EXPLANATION_KEYS, WHY):
        assert secret not in dump
    assert client.get(f"/api/runs/{run.json()['id']}/explanations", headers=ann).status_code == 403
    assert client.get(f"/api/runs/{run.json()['id']}/explanations", headers=auth("not-a-token")).status_code == 401

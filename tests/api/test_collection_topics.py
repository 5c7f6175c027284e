"""Collection (master shot reference) and topic registration."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"


def test_collection_upload_and_summary(make_campaign, client, organiser):
    campaign = make_campaign()
    tsv = "shot_id\tvideo_id\tstart\tend\ns1_1\tv1\t0\t2.5\ns1_2\tv1\t2.5\t5\ns2_1\tv2\t0\t1\n"
    response = campaign.set_collection(tsv)
    assert response.status_code == 200, response.text
    assert (response.json()["n_shots"], response.json()["n_videos"]) == (3, 2)
    # a second upload replaces the first
    assert campaign.set_collection("s9_1 v9 0 1\n").json()["n_shots"] == 1


def test_collection_errors_name_every_line(make_campaign):
    campaign = make_campaign()
    tsv = "s1 v1 0 1\ns2 v1 x 2\ns3 v1 3 2\ns1 v1 0 1\ns4 v1\n"
    response = campaign.set_collection(tsv)
    assert response.status_code == 422
    assert [e["line"] for e in response.json()["errors"]] == [2, 3, 4, 5]
    assert "line 1" in response.json()["errors"][2]["message"]


def test_media_url_template_is_checked(make_campaign, client, organiser):
    campaign = make_campaign()
    response = client.put(
        f"/api/campaigns/{campaign.id}/collection",
        data={"media_url_template": "http://x/{nope}"},
        files={"file": ("m.tsv", b"s1 v1 0 1\n")},
        headers=organiser,
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "media_url_template"


def test_topics_from_trecvid_file(client, organiser):
    cid = client.post("/api/campaigns", json={"name": "tv21-topics", "task_kind": "shots"}, headers=organiser).json()[
        "id"
    ]
    data = (DATA / "tv21.avs.topics.txt").read_bytes()
    response = client.post(f"/api/campaigns/{cid}/topics/file", files={"file": ("t.txt", data)}, headers=organiser)
    assert response.status_code == 201, response.text
    listed = client.get(f"/api/campaigns/{cid}/topics", headers=organiser).json()
    assert [t["number"] for t in listed] == [str(n) for n in range(661, 681)]
    assert listed[0]["title"] == "a hang glider floating in the sky on a sunny day"


def test_topics_from_trec_xml(client, organiser):
    cid = client.post("/api/campaigns", json={"name": "xml-topics", "task_kind": "shots"}, headers=organiser).json()[
        "id"
    ]
    xml = b'<topics><topic number="7"><query>covid origin</query><narrative>n</narrative></topic></topics>'
    response = client.post(f"/api/campaigns/{cid}/topics/file", files={"file": ("t.xml", xml)}, headers=organiser)
    assert response.status_code == 201
    assert response.json()[0] == {
        "id": response.json()[0]["id"],
        "number": "7",
        "title": "covid origin",
        "description": "n",
        "guidelines": "",
        "examples": [],
    }


def test_topic_numbers_are_unique(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=2)
    response = client.post(
        f"/api/campaigns/{campaign.id}/topics", json=[{"number": "1", "title": "again"}], headers=organiser
    )
    assert response.status_code == 409
    response = client.post(
        f"/api/campaigns/{campaign.id}/topics",
        json=[{"number": "9", "title": "a"}, {"number": "9", "title": "b"}],
        headers=organiser,
    )
    assert response.status_code == 422

"""Gzipped uploads over REST: told by their magic bytes (not their name), decompressed within a limit, a gzip bomb is
a 413 naming the limit, a broken gzip stream a 422, and either way nothing is stored."""

from __future__ import annotations

import gzip
import hashlib

from sqlalchemy import func, select

from app.storage.models import Run

RUN = "".join(f"{t} Q0 shot{t}_{i} {i + 1} {1.0 / (i + 2)!r} gz\n" for t in (1, 2) for i in range(300))


def count_runs(sessions, campaign_id: int) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(Run).where(Run.campaign_id == campaign_id))


def test_a_gzipped_run_named_txt_is_decompressed_and_stored(make_campaign, client):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, gzip.compress(RUN.encode()), name="zipped")
    assert response.status_code == 201, response.text
    body = response.json()
    assert (body["n_entries"], body["n_topics"], body["tag"]) == (600, 2, "gz")
    assert body["sha256"] == hashlib.sha256(RUN.encode()).hexdigest()  # of the run, however it travelled
    downloaded = client.get(f"/api/runs/{body['id']}/download", headers=team)
    assert downloaded.text.split() == RUN.split()


def test_a_gzipped_xml_run_is_read_as_xml(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    xml = (
        '<?xml version="1.0"?>\n<videoAdhocSearchResults>\n'
        '<videoAdhocSearchRunResult trType="D" class="F" pid="p" priority="1" desc="d">\n'
        '<videoAdhocSearchTopicResult tNum="1" elapsedTime="2">\n<item seqNum="1" shotId="a"/>\n'
        "</videoAdhocSearchTopicResult>\n</videoAdhocSearchRunResult>\n</videoAdhocSearchResults>\n"
    )
    response = campaign.upload(team, gzip.compress(xml.encode()), name="zipped-xml")
    assert response.status_code == 201, response.text
    assert (response.json()["format"], response.json()["n_entries"]) == ("xml", 1)


def test_a_gzip_bomb_is_413_naming_the_limit_and_stores_nothing(make_campaign, client, sessions, monkeypatch):
    campaign = make_campaign()
    _, team = campaign.team()
    monkeypatch.setattr(client.app.state.settings, "max_decompressed_bytes", 100_000)
    bomb = gzip.compress(b"1 Q0 a 1 1 t\n" + b" " * (20 << 20))  # 20 MB of text in about 20 KB
    assert len(bomb) < 100_000
    response = campaign.upload(team, bomb)
    assert response.status_code == 413, response.text
    assert "100000 bytes once decompressed" in response.json()["detail"]
    assert count_runs(sessions, campaign.id) == 0
    exactly = RUN.encode()[: 100_000 - 1000]
    exactly = exactly[: exactly.rindex(b"\n") + 1]
    assert campaign.upload(team, gzip.compress(exactly)).status_code == 201  # under the limit: accepted


def test_a_truncated_gzip_upload_is_422_naming_the_file(make_campaign, sessions):
    campaign = make_campaign()
    _, team = campaign.team()
    whole = gzip.compress(RUN.encode())
    response = campaign.upload(team, whole[: len(whole) // 2])
    assert response.status_code == 422, response.text
    assert response.json()["errors"] == [
        {"field": "file", "message": "not a complete gzip file (it ends before its end-of-stream marker)"}
    ]
    assert count_runs(sessions, campaign.id) == 0


def test_a_nul_byte_inside_a_gzipped_run_is_found_after_decompression(make_campaign):
    campaign = make_campaign()
    _, team = campaign.team()
    response = campaign.upload(team, gzip.compress(b"1 Q0 a 1 1 t\n1 Q0 b\x00 2 0.5 t\n"))
    assert response.status_code == 422
    assert response.json()["errors"] == [{"line": 2, "message": "NUL byte (\\x00)"}]

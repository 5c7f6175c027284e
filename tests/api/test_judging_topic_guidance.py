"""Topics carry guidelines and example images, which the assessor's items show beside the video."""

from __future__ import annotations

from sqlalchemy import update

from app.storage.models import Topic
from tests.api.helpers import depth_pool, step

EXAMPLES = [{"url": "https://img.example/dog.jpg", "caption": "a dog on a beach"}, {"url": "http://img.example/2.png"}]


def test_topics_take_guidelines_and_http_examples(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=1)
    body = [
        {
            "number": "9",
            "title": "dogs",
            "description": "a dog outdoors",
            "guidelines": "not toys",
            "examples": EXAMPLES,
        }
    ]
    added = client.post(f"/api/campaigns/{campaign.id}/topics", json=body, headers=organiser)
    assert added.status_code == 201, added.text
    [topic] = [
        t for t in client.get(f"/api/campaigns/{campaign.id}/topics", headers=organiser).json() if t["number"] == "9"
    ]
    assert topic["guidelines"] == "not toys"
    assert topic["examples"] == [EXAMPLES[0], {"url": "http://img.example/2.png", "caption": ""}]
    for examples in ([{"url": "javascript:alert(1)"}], [{"url": "file:///etc/passwd"}], [{"url": "x"}] * 21):
        bad = [{"number": "10", "title": "t", "examples": examples}]
        refused = client.post(f"/api/campaigns/{campaign.id}/topics", json=bad, headers=organiser)
        assert refused.status_code == 422 and "examples" in refused.text, refused.text
    plain = client.post(
        f"/api/campaigns/{campaign.id}/topics", json=[{"number": "11", "title": "t"}], headers=organiser
    )
    assert plain.json()[0]["guidelines"] == "" and plain.json()[0]["examples"] == []


def test_an_item_carries_its_topics_description_guidelines_and_examples(make_campaign, client, organiser, sessions):
    pool, _, [(_, ann)], _ = depth_pool(make_campaign, client, organiser)
    with sessions() as session:
        session.execute(
            update(Topic)
            .where(Topic.campaign_id == pool["campaign_id"], Topic.number == "1")
            .values(description="people dancing", guidelines="count any dance", examples=EXAMPLES[:1])
        )
        session.commit()
    item = step(client, ann)["next"][0]
    assert item["topic_description"] == "people dancing" and item["topic_guidelines"] == "count any dance"
    assert item["topic_examples"] == EXAMPLES[:1]

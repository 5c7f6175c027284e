"""The organiser console's submission dates: set in the create and edit forms (read as UTC), shown back in the form,
checked (a close before the open, a non-date) with the field named and nothing stored."""

from __future__ import annotations

from uuid import uuid4

FORM = {
    "max_results": "100",
    "max_runs_per_team": "5",
    "max_grade": "1",
    "interleave_every": "10",
    "team_results": "own",
}


def test_dates_are_stored_in_utc_and_shown_back_in_the_form(client, organiser) -> None:  # type: ignore[no-untyped-def]
    name = f"dates-{uuid4().hex[:8]}"
    given = {**FORM, "name": name, "task_kind": "shots", "submission_opens_at": "2026-09-01T12:00",
             "submission_closes_at": "2026-10-01T18:30"}  # fmt: skip
    made = client.post("/console/campaigns", data=given, headers={**organiser, "Accept": "application/json"})
    assert made.status_code == 201, made.text
    campaign_id = made.json()["created"]["id"]
    stored = client.get(f"/api/campaigns/{campaign_id}", headers=organiser).json()
    assert stored["submission_opens_at"].startswith("2026-09-01T12:00:00")
    assert stored["submission_closes_at"].startswith("2026-10-01T18:30:00")
    assert stored["submission_opens_at"].endswith(("Z", "+00:00"))
    page = client.get(f"/console/campaigns/{campaign_id}", headers=organiser)
    assert 'name="submission_opens_at" type="datetime-local" value="2026-09-01T12:00"' in page.text
    assert 'name="submission_closes_at" type="datetime-local" value="2026-10-01T18:30"' in page.text

    # edit: the window emptied (no dates), then a close before the open refused with the field named
    cleared = {**FORM, "submission_opens_at": "", "submission_closes_at": ""}
    saved = client.post(f"/console/campaigns/{campaign_id}", data=cleared, headers=organiser, follow_redirects=False)
    assert saved.status_code == 303
    stored = client.get(f"/api/campaigns/{campaign_id}", headers=organiser).json()
    assert (stored["submission_opens_at"], stored["submission_closes_at"]) == (None, None)
    backwards = {**FORM, "submission_opens_at": "2026-09-02T00:00", "submission_closes_at": "2026-09-01T00:00"}
    refused = client.post(f"/console/campaigns/{campaign_id}", data=backwards, headers=organiser)
    assert refused.status_code == 422
    assert "submission_closes_at: must be after the opening" in refused.text.replace("</li>", "")
    assert 'value="2026-09-02T00:00"' in refused.text  # what was typed is kept
    stored = client.get(f"/api/campaigns/{campaign_id}", headers=organiser).json()
    assert (stored["submission_opens_at"], stored["submission_closes_at"]) == (None, None)


def test_a_date_that_is_not_one_is_named_and_nothing_is_created(client, organiser) -> None:  # type: ignore[no-untyped-def]
    name = f"dates-{uuid4().hex[:8]}"
    given = {**FORM, "name": name, "task_kind": "shots", "submission_opens_at": "next tuesday"}
    refused = client.post("/console/campaigns", data=given, headers={**organiser, "Accept": "application/json"})
    assert refused.status_code == 422
    assert {"field": "submission_opens_at", "message": "a date and time (UTC), e.g. 2026-09-01T12:00, or empty"} in (
        refused.json()["errors"]
    )
    assert [c for c in client.get("/api/campaigns", headers=organiser).json() if c["name"] == name] == []

"""The run-type filter (system_type, training_type, novelty) is declared once, by leaderboards.Filters, and every board
endpoint and page takes it whole: the same documented parameters everywhere, the same 422 for a value no run has."""

from __future__ import annotations

import inspect
import typing

from fastapi import Depends
from fastapi.routing import APIRoute

from app.api import leaderboards as api
from app.services.leaderboards import Filters
from app.services.scores import RunInfo
from app.web import results

FILTERED = (
    "/api/campaigns/{campaign_id}/leaderboard",
    "/api/campaigns/{campaign_id}/significance",
    "/api/public/campaigns/{campaign_id}/leaderboard",
    "/api/public/campaigns/{campaign_id}/significance",
)
NAMES = ("system_type", "training_type", "novelty")


def test_every_filtered_endpoint_documents_the_filters_as_filters_declares_them(client):
    paths = client.app.openapi()["paths"]
    for path in FILTERED:
        parameters = {p["name"]: p for p in paths[path]["get"]["parameters"]}
        for name in NAMES:
            assert parameters[name]["in"] == "query" and not parameters[name]["required"], (path, name)
            assert parameters[name]["description"] == Filters.model_fields[name].description, (path, name)


def _filter_parameters(endpoint: typing.Callable[..., object]) -> list[str]:
    """The parameters of an endpoint that carry run-type filters: the Filters model, or one of its fields."""
    hints = typing.get_type_hints(endpoint, include_extras=True)
    found = []
    for name in inspect.signature(endpoint).parameters:
        hint = hints.get(name)
        if name in NAMES or (typing.get_origin(hint) is typing.Annotated and typing.get_args(hint)[0] is Filters):
            found.append(name)
    return found


def test_each_endpoint_and_the_page_declare_one_filters_parameter():
    endpoints = [api.live, api.significance, api.published, api.published_significance]
    pages = results.make_router(Depends(lambda: None), lambda: None)
    page = next(r for r in pages.routes if isinstance(r, APIRoute) and r.name == "leaderboard_page")
    for endpoint in [*endpoints, page.endpoint]:
        assert _filter_parameters(endpoint) == ["filters"], endpoint.__name__


def test_a_filter_that_cannot_be_read_is_a_422_naming_the_field_and_an_unknown_type_matches_no_run(client):
    for url in (
        "/api/public/campaigns/1/leaderboard?system_type=M%00",
        "/api/public/campaigns/1/significance?training_type=%00",
        "/api/public/campaigns/1/leaderboard?novelty=maybe",
    ):
        answer = client.get(url)
        assert answer.status_code == 422, url
        field = url.split("?")[1].split("=")[0]
        assert [e["field"] for e in answer.json()["errors"]] == [field], answer.json()
    assert client.get("/campaigns/1/leaderboard?novelty=maybe").status_code == 422  # the page, as its JSON twin
    assert Filters(system_type="X").keep(RunInfo(1, "r", 1, "F", "D", False, 1)) is False


def test_the_filters_are_what_a_board_says_it_was_built_with():
    chosen = Filters(system_type="M", novelty=False)
    assert chosen.model_dump() == {"system_type": "M", "training_type": None, "novelty": False}
    assert chosen == Filters(novelty=False, system_type="M") and hash(chosen) == hash(
        Filters(system_type="M", novelty=False)
    )
    assert Filters() == Filters(system_type=None)

"""A field is declared once: where the REST answer is a service's view as it is, the service's pydantic dataclass is
the response model (no API class copies it field for field); the few mirrors left say why."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

from fastapi.routing import APIRoute
from pydantic import BaseModel

import app.api
import app.services
from app.api import collection, judging, moment_judging, organiser
from app.services import collection as collection_service
from app.services import judging as judging_service
from app.services import moment_judging as moment_service
from app.services import organiser_view

# API models that still carry a service dataclass's fields, and why each is kept apart.
KEPT_APART = {
    (
        "app.api.campaigns.CampaignIn",
        "app.services.campaigns.CampaignSpec",
    ): "request body: bounds, lengths, NUL checks",
    ("app.api.pools.PoolIn", "app.services.pools.PoolSpec"): "request body: bounds and the strata validator",
    ("app.api.pools.VerificationIn", "app.services.pools.VerificationSpec"): "request body: bounds and the choices",
    ("app.api.moment_judging.MomentPoolIn", "app.services.moment_judging.MomentPoolSpec"): "request body: bounds",
    ("app.api.judging.StepOut", "app.services.judging.Step"): "types the service's progress dict (ProgressOut)",
    ("app.api.topics.ExampleIn", "app.services.topics.TopicExample"): "request body: http(s) URL pattern, lengths",
    ("app.api.series.ProgressTopicIn", "app.services.series.ProgressTopic"): "request body: lengths, NUL checks",
}


def _classes(package: object, keep: type | None = None) -> dict[str, type]:
    """The classes defined in a package's modules (dataclasses, or subclasses of `keep`), by dotted name."""
    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(package.__path__):  # type: ignore[attr-defined]
        module = importlib.import_module(f"{package.__name__}.{info.name}")  # type: ignore[attr-defined]
        for name, obj in vars(module).items():
            if not inspect.isclass(obj) or obj.__module__ != module.__name__:
                continue
            if (keep is None and dataclasses.is_dataclass(obj)) or (keep is not None and issubclass(obj, keep)):
                found[f"{module.__name__}.{name}"] = obj
    return found


def test_no_api_model_copies_a_service_dataclass_field_for_field_unless_kept_apart_for_a_reason():
    services = {name: {f.name for f in dataclasses.fields(cls)} for name, cls in _classes(app.services).items()}
    mirrors = set()
    for api_name, model in _classes(app.api, BaseModel).items():
        fields = set(model.model_fields)  # type: ignore[attr-defined]
        mirrors |= {(api_name, name) for name, own in services.items() if own and own <= fields <= own | {"id"}}
    assert mirrors == set(KEPT_APART)


def _response_model(router: object, name: str) -> object:
    """The response model of a router's endpoint."""
    routes = [r for r in router.routes if isinstance(r, APIRoute) and r.name == name]  # type: ignore[attr-defined]
    assert len(routes) == 1, name
    return routes[0].response_model


def test_views_are_the_response_models_with_their_descriptions(client):
    assert _response_model(organiser.router, "overview") is organiser_view.CampaignView
    assert _response_model(judging.router, "next_item") is judging_service.TaskView
    assert _response_model(moment_judging.router, "own_item") is moment_service.MarkView
    assert _response_model(collection.router, "get_collection") is collection_service.CollectionSummary
    schemas = client.app.openapi()["components"]["schemas"]
    job = schemas["JobView"]["properties"]
    assert {"cancellable", "url", "cancel_url"} <= set(job)  # computed from the job, in the answer too
    assert schemas["TopicProgress"]["properties"]["total"]["description"] == "Round-1 tasks: the sampled items"
    assert (
        schemas["TaskView"]["properties"]["verdict"]["description"] == "Your own verdict, when you go back to an item"
    )


def test_a_job_answers_its_links_and_whether_a_cancel_still_changes_something():
    from datetime import UTC, datetime

    from pydantic import TypeAdapter

    now = datetime.now(UTC)
    running = organiser_view.JobView("analysis", 7, "ties", "ties", "running", 0.5, 1, False, None, now, now, None)
    done = organiser_view.JobView("evaluation", 3, "evaluation", "e", "done", 1.0, 1, False, None, now, now, now)
    rows = TypeAdapter(list[organiser_view.JobView]).dump_python([running, done], mode="json")
    assert [(r["url"], r["cancel_url"], r["cancellable"]) for r in rows] == [
        ("/api/analyses/7", "/api/analyses/7/cancel", True),
        ("/api/evaluations/3", "/api/evaluations/3/cancel", False),
    ]

"""The agreement report of a campaign: a model qrels version against a human one (issue 25), for organisers.

The document the organiser's agreement page shows and its JSON twin gives: which versions were compared (the newest
human and the newest model version unless named), the model judge's provenance (model, version, configuration hash,
parameters, from the model version's `provenance`), and the core's comparison (`machine_agreement`): weighted kappa
with base rates, the confusion matrix, tau_b, tau_AP and the top-k tau_b of the rankings, every run's score shift with
its interval, and the warnings. Self-preference looks for the judge's model family (the leading word of each model
assessor's model name) in each run's name, tag, description and team; run types are the runs' system and training
types. Versions are immutable and runs are keyed by their content hash, so a report is cached per process.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.analyses.machine_agreement import machine_agreement, model_family
from app.services.analysis_registry import json_safe
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import Conflict, InvalidInput
from app.services.qrels import load_qrels
from app.services.run_blocks import StoredBlocks
from app.storage.models import Campaign, QrelsVersion, Run, TaskKind, Team

RESAMPLES = 10_000
MAX_CACHED = 16
_CACHE: OrderedDict[tuple[object, ...], dict[str, Any]] = OrderedDict()


def _refuse(field: str, message: str) -> InvalidInput:
    """A 422 naming one query parameter."""
    return InvalidInput("invalid agreement report request", [{"field": field, "message": message}])


def versions_of(session: Session, campaign_id: int) -> list[QrelsVersion]:
    """The campaign's qrels versions, newest first."""
    query = select(QrelsVersion).where(QrelsVersion.campaign_id == campaign_id).order_by(QrelsVersion.id.desc())
    return list(session.scalars(query))


def default_versions(versions: list[QrelsVersion]) -> tuple[int | None, int | None]:
    """The newest human and the newest model version among `versions` (None where there is none); a human version
    holding only the verification sample of a model-judged pool counts when no fully human version exists."""
    people = [v for v in versions if v.judges == "human"]
    full = [v for v in people if not (v.provenance or {}).get("verification_only")]
    human = next((v.id for v in full or people), None)
    model = next((v.id for v in versions if v.judges == "model"), None)
    return human, model


def _chosen(versions: list[QrelsVersion], given: int | None, default: int | None, field: str) -> QrelsVersion:
    """The version named by `field` (or the default), one of the campaign's (422 otherwise)."""
    by_id = {v.id: v for v in versions}
    if given is None:
        if default is None:
            kind = "human" if field == "human" else "model"
            raise Conflict(
                f"the campaign has no {kind} qrels version to compare: cut or import one, or name it with ?{field}="
            )
        given = default
    if given not in by_id:
        raise _refuse(field, f"qrels version {given} is not a version of this campaign")
    return by_id[given]


def judge_provenance(version: QrelsVersion) -> list[dict[str, Any]]:
    """The model assessors behind a version, with their model, version, configuration hash and parameters."""
    provenance = version.provenance or {}
    out = []
    for assessor in provenance.get("model_assessors") or []:
        facts = assessor.get("provenance") or {}
        out.append(
            {
                "id": assessor.get("id"),
                "name": assessor.get("name"),
                "model": facts.get("model"),
                "version": facts.get("version"),
                "config_hash": facts.get("config_hash"),
                "parameters": facts.get("parameters"),
                "family": model_family(str(facts.get("model") or "")) or None,
            }
        )
    return out


def _version(version: QrelsVersion) -> dict[str, Any]:
    """A version as the report names it."""
    return {
        "id": version.id,
        "label": version.label,
        "judges": version.judges,
        "source": version.source,
        "created_at": version.created_at.isoformat(),
        "n_entries": version.n_entries,
    }


def agreement_report(
    session: Session,
    principal: Principal,
    campaign_id: int,
    human_id: int | None = None,
    model_id: int | None = None,
    *,
    top_k: int | None = None,
) -> dict[str, Any]:
    """The report of the model version against the human one (defaults: the newest of each), as plain JSON data."""
    campaign = get_organised(session, principal, campaign_id)
    if campaign.task_kind != TaskKind.shots:
        raise Conflict("the agreement report compares qrels versions: for shot campaigns only")
    versions = versions_of(session, campaign_id)
    default_human, default_model = default_versions(versions)
    human = _chosen(versions, human_id, default_human, "human")
    model = _chosen(versions, model_id, default_model, "model")
    if human.id == model.id:
        raise _refuse("model", "the human and the model version are the same version")
    rows = session.execute(
        select(Run.id, Run.name, Run.tag, Run.description, Run.system_type, Run.training_type, Run.sha256, Team.name)
        .join(Team, Team.id == Run.team_id)
        .where(Run.campaign_id == campaign_id)
        .order_by(Run.id)
    ).all()
    if len(rows) < 2:
        raise Conflict(f"the campaign has {len(rows)} run(s): comparing rankings needs at least 2")
    judges = judge_provenance(model)
    families = sorted({j["family"] for j in judges if j["family"]})
    key = (campaign_id, human.id, model.id, top_k, campaign.max_grade, campaign.max_results,
           tuple((r.id, r.sha256, r.description, r.name, r.tag) for r in rows))  # fmt: skip
    if key not in _CACHE:
        _CACHE[key] = _compute(session, campaign, human, model, rows, families, top_k)
        while len(_CACHE) > MAX_CACHED:
            _CACHE.popitem(last=False)
    _CACHE.move_to_end(key)
    computed = dict(_CACHE[key])
    if (human.provenance or {}).get("verification_only"):
        computed["warnings"] = [_partial_human(human), *computed.get("warnings", [])]
    return {
        "campaign_id": campaign_id,
        "human": _version(human),
        "model": {
            **_version(model),
            "model_assessors": judges,
            "human_share": (model.provenance or {}).get("human_share"),
        },
        "judge_families": families,
        "versions": [_version(v) for v in versions],
        **computed,
    }


def _partial_human(human: QrelsVersion) -> dict[str, Any]:
    """The warning of a human version that holds only a model-assisted pool's verification sample."""
    return {
        "code": "partial_human",
        "message": (
            f"{human.label} holds only the people's verification sample of a model-judged pool: its unjudged items"
            " count as not relevant, so the run rankings and shifts compare the model with a partial human"
            " judgement (the kappa and confusion matrix, on the items both judged, stand). Compare with a fully"
            " human version, or read the combined version's prediction-powered estimates."
        ),
        "details": {"human_version_id": human.id},
    }


def _compute(
    session: Session,
    campaign: Campaign,
    human: QrelsVersion,
    model: QrelsVersion,
    rows: Sequence[Any],
    families: list[str],
    top_k: int | None,
) -> dict[str, Any]:
    """The core's comparison of the two versions over every run of the campaign."""
    names = [r.name for r in rows]
    if len(set(names)) != len(names):  # run names are unique per team only
        names = [f"{r.name} ({r[7]})" for r in rows]
    blocks = StoredBlocks(session, [r.id for r in rows], names, campaign.max_results)
    metadata = [" ".join(str(x or "") for x in (r.name, r.tag, r.description, r[7])) for r in rows]
    human_qrels, model_qrels = load_qrels(session, human), load_qrels(session, model)
    given = max(int(q.grades.max(initial=0)) for q in (human_qrels, model_qrels))
    scale = max(campaign.max_grade, given, 1)  # the campaign's scale, or wider where an imported version goes past it
    try:
        result = machine_agreement(
            human_qrels,
            model_qrels,
            blocks,
            labels=(human.label, model.label),
            max_grade=scale,
            top_k=top_k,
            judge_families=families,
            run_metadata=metadata,
            run_types={"system_type": [r.system_type for r in rows], "training_type": [r.training_type for r in rows]},
            n_resamples=RESAMPLES,
            max_results=campaign.max_results,
        )
    except ValueError as exc:
        raise Conflict(f"cannot compare {human.label} with {model.label}: {exc}") from None
    return cast(dict[str, Any], json_safe(result.to_dict()))  # JSON has no NaN

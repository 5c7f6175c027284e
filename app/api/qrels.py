"""Qrels versions: import, list, export."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Form, Request, Response, UploadFile
from pydantic import BaseModel, Field

from app.api.media import TEXT_FILE
from app.api.security import Organiser, SessionDep
from app.api.uploads import read_limited
from app.services import qrels, sealing
from app.services.inputs import Id, Text
from app.services.tables import attachment
from app.storage.models import QrelsVersion

router = APIRouter(prefix="/api", tags=["qrels"])


class JudgingOrderMark(BaseModel):
    """How a cut qrels version's judgements were ordered; `biased` when the order is not random and the cut left
    sampled items unjudged, so every score and estimate from the version is biased."""

    order: str
    random: bool
    unjudged_sampled: int | None
    biased: bool
    note: str | None = None


class QrelsOut(BaseModel):
    """A qrels version."""

    id: int
    campaign_id: int
    label: str
    kind: str
    source: str
    pool_id: int | None
    n_entries: int
    judging_order: JudgingOrderMark | None = Field(default=None, description="None for imported versions")
    unjudged_topics: list[str] | None = Field(
        default=None,
        description="The campaign's topics without any judgement in this version (boards warn about them); null when "
        "not known (moment versions cut before this was recorded)",
    )
    judges: Literal["human", "model", "combined"] = Field(
        default="human", description="Whose verdicts the version holds: people's, a model's, or both combined"
    )
    provenance: dict[str, object] | None = Field(
        default=None,
        description="For cut versions: model_assessors [{id, name, provenance}], human_share and stratify (the pool's "
        "verification design, null without one), human_judgements and model_judgements (items graded by each); "
        "verification_only and a note for the human version of a model-assisted pool",
    )

    @classmethod
    def of(cls, version: QrelsVersion) -> QrelsOut:
        """The output of a stored version, with its judging-order mark."""
        fields = (
            "id",
            "campaign_id",
            "label",
            "kind",
            "source",
            "pool_id",
            "n_entries",
            "unjudged_topics",
            "judges",
            "provenance",
        )
        return cls(**{f: getattr(version, f) for f in fields}, judging_order=qrels.order_mark(version))


@router.post("/campaigns/{campaign_id}/qrels", status_code=201, response_model=QrelsOut)
def import_qrels(
    campaign_id: Id,
    request: Request,
    file: UploadFile,
    session: SessionDep,
    principal: Organiser,
    label: Annotated[Text, Form(min_length=1, max_length=200)],
) -> QrelsOut:
    """Import TREC qrels (4 columns) or sample_eval qrels (5 columns, grade -1 = unsampled) as a new version."""
    data = read_limited(request, file)
    version = qrels.import_qrels(
        session, principal, campaign_id, data, label, max_errors=request.app.state.settings.max_errors
    )
    session.commit()
    return QrelsOut.of(version)


@router.get("/campaigns/{campaign_id}/qrels", response_model=list[QrelsOut])
def list_qrels(campaign_id: Id, session: SessionDep, principal: Organiser) -> list[QrelsOut]:
    """The campaign's qrels versions."""
    return [QrelsOut.of(v) for v in qrels.list_qrels(session, principal, campaign_id)]


@router.get("/qrels/{qrels_id}/download", response_class=Response, responses=TEXT_FILE)
def download(
    qrels_id: Id, session: SessionDep, principal: Organiser, format: Literal["trec", "sample_eval"] = "trec"
) -> Response:
    """The version as a TREC or sample_eval qrels file; the judgements of sealed progress topics are left out, and the
    `X-Sealed-Topics-Left-Out` header names those topics."""
    body = b"".join(qrels.export_qrels(session, principal, qrels_id, format))
    headers = {"Content-Disposition": attachment(f"qrels-{qrels_id}.{format}.txt")}
    left_out = sealing.sealed_numbers_of_version(session, qrels_id)
    if left_out:
        headers["X-Sealed-Topics-Left-Out"] = " ".join(left_out)
    return Response(body, media_type="text/plain; charset=utf-8", headers=headers)

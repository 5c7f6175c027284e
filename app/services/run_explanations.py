"""A run's explanations (a frame's time and box, or a text, per result), read on demand from its stored file.

Runs are stored as their uploaded file (compressed), so the explanations are stored with them and a run's download
as uploaded (`runs.original_upload`) carries them. They are shown a page at a time to the run's own team and the
organisers of its campaign (`runs.visible_run`: NotFound for anyone else); assessors never see them: nothing of a run
reaches a judging or marking view, and the routes here refuse their tokens. TREC 6-column runs have no room for
explanations: their page is empty.
"""

from __future__ import annotations

from dataclasses import field

from pydantic import dataclasses as pydantic_dataclasses
from sqlalchemy.orm import Session

from app.evaluation.explanations import Explanation
from app.services import run_files
from app.services.auth import Principal
from app.services.run_arrays import stored_file
from app.services.runs import visible_run
from app.storage.models import Run

MAX_PAGE = 1000


# Pydantic dataclasses: the REST endpoint returns the page as it is (its response model).
@pydantic_dataclasses.dataclass(frozen=True)
class ExplainedResult:
    """Why the run returned one result: the time of a frame (seconds into the video), the box around what made it
    relevant in that frame (x1, y1, x2, y2: left, top, right, bottom, pixels) and a free text, each when given."""

    topic: str
    item: str = field(metadata={"description": "The shot id (shot runs) or video id (moment runs)"})
    rank: int | None = field(metadata={"description": "An XML run's seqNum"})
    line: int = field(metadata={"description": "The line of the run file that holds the result"})
    frame_time: float | None
    box: list[float] | None
    text: str | None


@pydantic_dataclasses.dataclass(frozen=True)
class ExplanationsPage:
    """One page of a run's explanations, in file order (of one topic when `topic` is given)."""

    run_id: int
    run_name: str
    format: str
    total: int = field(metadata={"description": "Explanations of the run (of the topic, when one is given)"})
    offset: int
    limit: int
    topic: str | None
    explanations: list[ExplainedResult]
    download: str = field(metadata={"description": "The run file as uploaded, explanations included"})


def _result(said: Explanation) -> ExplainedResult:
    """The API's view of one explanation."""
    return ExplainedResult(**said.as_json())


def explanations_page(
    session: Session,
    principal: Principal,
    run_id: int,
    *,
    offset: int = 0,
    limit: int = 100,
    topic: str | None = None,
) -> ExplanationsPage:
    """Explanations `offset` to `offset + limit` (at most MAX_PAGE) of a run the caller may see, read from its stored
    file (its decompressed size is bounded by the upload limit; only the page is returned)."""
    run = visible_run(session, principal, run_id)
    limit = max(1, min(limit, MAX_PAGE))
    said = _explanations(session, run)
    if topic is not None:
        said = [e for e in said if e.topic == topic]
    shown = [_result(e) for e in said[offset : offset + limit]]
    return ExplanationsPage(
        run_id=run.id,
        run_name=run.name,
        format=run.format,
        total=len(said),
        offset=offset,
        limit=limit,
        topic=topic,
        explanations=shown,
        download=f"/api/runs/{run.id}/download?original=true",
    )


def _explanations(session: Session, run: Run) -> list[Explanation]:
    """The explanations of a stored run file (none for TREC runs, which cannot state any)."""
    if run.format == "trec":
        return []
    return list(run_files.parse(stored_file(session, run), run.format, max_errors=1).explanations)

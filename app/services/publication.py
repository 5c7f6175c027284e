"""Publishing: freeze the score table (every measure), significance groups and the report as one public snapshot.

The snapshot holds the table, not prebuilt boards: a published board is built from it by the same code and rule
as the live one (leaderboards.board_document, over snapshots.published_table), whatever the measure and filters.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.services import sealing
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import Conflict
from app.services.leaderboards import significance
from app.services.reports import build_report
from app.services.scores import default_measure, finished_evaluation, score_table
from app.services.snapshots import snapshot_content
from app.storage.models import CampaignStatus, LeaderboardSnapshot, QrelsVersion


def publish(
    session: Session, principal: Principal, campaign_id: int, *, evaluation_id: int | None = None
) -> LeaderboardSnapshot:
    """Freeze the campaign's results as a snapshot that is public from now on, and mark the campaign published."""
    campaign = get_organised(session, principal, campaign_id)
    if campaign.status in (CampaignStatus.draft, CampaignStatus.open):
        raise Conflict(f"close submissions before publishing (campaign is {campaign.status.value})")
    evaluation = finished_evaluation(session, campaign_id, evaluation_id)
    sealing.refuse_publishing_sealed(session, evaluation)  # sealed progress topics never reach the public
    table = score_table(session, evaluation)
    measure = default_measure(campaign, table.measures)
    qrels = session.get(QrelsVersion, evaluation.qrels_version_id) if evaluation.qrels_version_id else None
    content = {
        **snapshot_content(campaign, evaluation, table),
        "qrels_label": qrels.label if qrels else None,
        "significance": significance(table, measure),
        "report": build_report(session, campaign, evaluation),
    }
    snapshot = LeaderboardSnapshot(campaign_id=campaign_id, evaluation_id=evaluation.id, content=content)
    session.add(snapshot)
    campaign.status = CampaignStatus.published
    session.flush()
    return snapshot

"""The organiser's overview of a campaign: the JSON twin of the organiser page (/organise/campaigns/{id})."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.security import Organiser, SessionDep, role
from app.services import organiser_view
from app.services.inputs import Id
from app.storage.models import Role

router = APIRouter(prefix="/api", tags=["organiser"])
PANEL_ROLE = role(Role.organiser, session_cookie_reads=True)
"""The role the organiser page's panel (app/web/organiser_page.py, the HTML twin of this view) declares: a bearer
token, or the browser session's cookie of an organiser signed in at /login."""


@router.get("/campaigns/{campaign_id}/overview", response_model=organiser_view.CampaignView)
def overview(campaign_id: Id, session: SessionDep, principal: Organiser) -> organiser_view.CampaignView:
    """Judging progress per topic and assessor, time left, QC and adjudication queues, and the campaign's jobs (the
    service's view as it is: its classes are the response model)."""
    return organiser_view.campaign_view(session, principal, campaign_id)

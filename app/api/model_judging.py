"""The batch judging API of model assessors: who they are, pull leased items, push graded verdicts; rate-limited.

Payloads carry a topic and a shot only, never runs, ranks, strata or anyone's verdicts (SPEC section 7): a model
judges as blind as a person. A person's token gets 403 here, as a model's does on the judging page.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Annotated

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from app.api.security import SessionDep, role
from app.api.throttle import MAX_TRACKED, FailureThrottle
from app.services import model_judging
from app.services.auth import Principal
from app.services.errors import TooManyAttempts
from app.services.inputs import Text
from app.services.model_judging import BatchInfo, ModelVerdictIn, Pulled, Pushed
from app.storage.models import Role

router = APIRouter(prefix="/api/judging/batch", tags=["model judging"])
Assessor = Annotated[Principal, role(Role.assessor)]
_limits_lock = threading.Lock()


class RateLimit(FailureThrottle):
    """Sliding-window counts of units (items pulled, verdicts pushed) per model assessor; a request over the limit is
    refused whole, and refused requests count nothing."""

    def spend(self, key: str, units: int) -> None:
        """Count `units` for the key; TooManyAttempts (with the seconds until they fit) if they would pass the limit."""
        units = min(max(units, 1), self.max_failures)
        moment = time.monotonic()
        with self._lock:
            if key not in self._failures and len(self._failures) >= MAX_TRACKED:
                self._forget_oldest()
            times = self._recent(key, moment)
            over = len(times) + units - self.max_failures
            if over > 0:
                wait = max(1, math.ceil(times[over - 1] + self.window - moment))
                raise TooManyAttempts(
                    f"over {self.max_failures} items and verdicts per minute: try again in {wait} s", retry_after=wait
                )
            times.extend([moment] * units)
            self._failures[key] = times


def _limit(request: Request, principal: Principal, units: int) -> None:
    """Spend the caller's units of the app's model judging limit (made on first use from its settings)."""
    state = request.app.state
    with _limits_lock:
        if getattr(state, "model_judging_limit", None) is None:
            state.model_judging_limit = RateLimit(state.settings.model_judging_per_minute, 60.0)
    limit: RateLimit = state.model_judging_limit
    limit.spend(f"assessor:{principal.assessor_id}", units)


class PullIn(BaseModel):
    """How many items to lease."""

    n: int = Field(default=10, ge=1, le=10_000, description="Items to lease, 1..max_batch (GET /api/judging/batch)")


class VerdictsIn(BaseModel):
    """A batch of verdicts, stored all or none."""

    verdicts: list[ModelVerdictIn] = Field(max_length=10_000, description="At most max_batch, each item once")
    config_hash: Text | None = Field(
        default=None, min_length=1, max_length=64, description="The judge's configuration (prompt, parameters) hash"
    )


@router.get("", response_model=BatchInfo)
def whoami(request: Request, session: SessionDep, principal: Assessor) -> BatchInfo:
    """Your name, provenance and the campaign's grade scale, with the batch limits (403 for a person's token)."""
    settings = request.app.state.settings
    return model_judging.batch_info(
        session,
        principal,
        max_batch=settings.model_judging_max_batch,
        lease_seconds=settings.model_lease_seconds,
    )


@router.post("/pull", response_model=Pulled)
def pull(request: Request, body: PullIn, session: SessionDep, principal: Assessor) -> Pulled:
    """Lease up to `n` items of your assigned topics (those you were handed and never answered first); an empty
    list when nothing is left. An item stays yours for `lease_seconds`: no other pull gets it meanwhile."""
    _limit(request, principal, body.n)
    settings = request.app.state.settings
    pulled = model_judging.pull(
        session,
        principal,
        body.n,
        max_batch=settings.model_judging_max_batch,
        lease_seconds=settings.model_lease_seconds,
    )
    session.commit()
    return pulled


@router.post("/verdicts", response_model=Pushed)
def push(request: Request, body: VerdictsIn, session: SessionDep, principal: Assessor) -> Pushed:
    """Store your verdicts, all or none: the same grade again is `unchanged` (a retry is safe), another grade for an
    item you judged is a 409 naming it, an item not of your assigned topics in the current pool a 404."""
    _limit(request, principal, len(body.verdicts))
    pushed = model_judging.push(
        session,
        principal,
        body.verdicts,
        config_hash=body.config_hash,
        max_batch=request.app.state.settings.model_judging_max_batch,
    )
    session.commit()
    return pushed

"""Which role may call each endpoint, stated per endpoint: widening or narrowing one, or adding one unlisted, fails.

The table is the access policy in one place (SPEC section 7); the test compares it with what each route declares.
"""

from __future__ import annotations

from tests.api.helpers import roles_of, routes

ORG = ("organiser",)
MEMBER = ("organiser", "team", "assessor")
SUBMITTER = ("organiser", "team")
ASSESSOR = ("assessor",)
PUBLIC = ("public",)

ROLE_TABLE: dict[tuple[str, str], tuple[str, ...]] = {
    ("GET", "/api/analyses/{job_id}"): ORG,
    ("POST", "/api/assessors/{assessor_id}/judge-link"): ORG,
    ("POST", "/api/assessors/{assessor_id}/tokens"): ORG,
    ("GET", "/api/campaigns/{campaign_id}/audit"): ORG,
    ("GET", "/api/campaigns/{campaign_id}/tokens"): ORG,
    ("POST", "/api/judging/session"): PUBLIC,
    ("POST", "/api/tokens/{token_id}/revoke"): MEMBER,
    ("POST", "/api/analyses/{job_id}/cancel"): ORG,
    ("GET", "/api/analyses/{job_id}/figure"): ORG,
    ("GET", "/api/campaigns"): MEMBER,
    ("POST", "/api/campaigns"): ORG,
    ("GET", "/api/campaigns/{campaign_id}"): MEMBER,
    ("PATCH", "/api/campaigns/{campaign_id}"): ORG,
    ("POST", "/api/campaigns/{campaign_id}/analyses"): ORG,
    ("GET", "/api/campaigns/{campaign_id}/assessors"): ORG,
    ("POST", "/api/campaigns/{campaign_id}/assessors"): ORG,
    ("POST", "/api/campaigns/{campaign_id}/close"): ORG,
    ("GET", "/api/campaigns/{campaign_id}/collection"): MEMBER,
    ("PUT", "/api/campaigns/{campaign_id}/collection"): ORG,
    ("POST", "/api/campaigns/{campaign_id}/evaluations"): ORG,
    ("PUT", "/api/campaigns/{campaign_id}/ground-truth"): ORG,
    ("GET", "/api/campaigns/{campaign_id}/leaderboard"): MEMBER,
    ("POST", "/api/campaigns/{campaign_id}/open"): ORG,
    ("GET", "/api/campaigns/{campaign_id}/overview"): ORG,
    ("POST", "/api/campaigns/{campaign_id}/pools"): ORG,
    ("POST", "/api/campaigns/{campaign_id}/pools/preview"): ORG,
    ("POST", "/api/campaigns/{campaign_id}/publish"): ORG,
    ("GET", "/api/campaigns/{campaign_id}/qrels"): ORG,
    ("POST", "/api/campaigns/{campaign_id}/qrels"): ORG,
    ("GET", "/api/campaigns/{campaign_id}/report"): ORG,
    ("GET", "/api/campaigns/{campaign_id}/runs"): SUBMITTER,
    ("POST", "/api/campaigns/{campaign_id}/runs"): SUBMITTER,
    ("GET", "/api/campaigns/{campaign_id}/significance"): ORG,
    ("GET", "/api/campaigns/{campaign_id}/teams"): ORG,
    ("POST", "/api/campaigns/{campaign_id}/teams"): ORG,
    ("GET", "/api/campaigns/{campaign_id}/topics"): MEMBER,
    ("POST", "/api/campaigns/{campaign_id}/topics"): ORG,
    ("POST", "/api/campaigns/{campaign_id}/topics/file"): ORG,
    ("GET", "/api/evaluations/{evaluation_id}"): ORG,
    ("POST", "/api/evaluations/{evaluation_id}/cancel"): ORG,
    ("GET", "/api/health"): PUBLIC,
    ("GET", "/api/judging/history"): ASSESSOR,
    ("GET", "/api/judging/items/{task_id}"): ASSESSOR,
    ("POST", "/api/judging/items/{task_id}"): ASSESSOR,
    ("POST", "/api/judging/next"): ASSESSOR,
    ("POST", "/api/judging/step"): ASSESSOR,
    ("POST", "/api/judging/release"): ASSESSOR,
    ("GET", "/api/judging/progress"): ASSESSOR,
    ("GET", "/api/judging/batch"): ASSESSOR,
    ("POST", "/api/judging/batch/pull"): ASSESSOR,
    ("POST", "/api/judging/batch/verdicts"): ASSESSOR,
    ("POST", "/api/campaigns/{campaign_id}/moment-pools"): ORG,
    ("GET", "/api/moment-pools/{pool_id}"): ORG,
    ("GET", "/api/moment-pools/{pool_id}/agreement"): ORG,
    ("POST", "/api/moment-pools/{pool_id}/truth"): ORG,
    ("GET", "/api/moment-truth/{version_id}"): ORG,
    ("POST", "/api/moment-judging/next"): ASSESSOR,
    ("GET", "/api/moment-judging/items/{item_id}"): ASSESSOR,
    ("POST", "/api/moment-judging/items/{item_id}"): ASSESSOR,
    ("GET", "/api/moment-judging/progress"): ASSESSOR,
    ("GET", "/api/pools/{pool_id}"): ORG,
    ("GET", "/api/pools/{pool_id}/adjudication"): ORG,
    ("POST", "/api/pools/{pool_id}/adjudication"): ORG,
    ("GET", "/api/pools/{pool_id}/agreement"): ORG,
    ("GET", "/api/pools/{pool_id}/budget"): ORG,
    ("GET", "/api/pools/{pool_id}/live"): ORG,
    ("POST", "/api/pools/{pool_id}/assignments"): ORG,
    ("GET", "/api/pools/{pool_id}/progress"): ORG,
    ("POST", "/api/pools/{pool_id}/qrels"): ORG,
    ("POST", "/api/pools/{pool_id}/quality-control"): ORG,
    ("GET", "/api/pools/{pool_id}/stats"): ORG,
    ("GET", "/api/pools/{pool_id}/verification"): ORG,
    ("GET", "/api/public/campaigns/{campaign_id}/leaderboard"): PUBLIC,
    ("GET", "/api/public/campaigns/{campaign_id}/report"): PUBLIC,
    ("GET", "/api/public/campaigns/{campaign_id}/significance"): PUBLIC,
    ("GET", "/api/public/series/{series_id}/sets/{name}/board"): PUBLIC,
    ("GET", "/api/series"): ORG,
    ("POST", "/api/series"): ORG,
    ("GET", "/api/series/{series_id}"): ORG,
    ("POST", "/api/series/{series_id}/campaigns"): ORG,
    ("POST", "/api/series/{series_id}/topics"): ORG,
    ("POST", "/api/series/{series_id}/sets/{name}/release"): ORG,
    ("POST", "/api/series/{series_id}/sets/{name}/pools"): ORG,
    ("GET", "/api/series/{series_id}/sets/{name}/board"): ORG,
    ("GET", "/api/series/{series_id}/pools/{pool_id}/reused"): ORG,
    ("GET", "/api/qrels/{qrels_id}/download"): ORG,
    ("DELETE", "/api/runs/{run_id}"): SUBMITTER,
    ("GET", "/api/runs/{run_id}"): SUBMITTER,
    ("PATCH", "/api/runs/{run_id}"): ORG,
    ("GET", "/api/runs/{run_id}/download"): SUBMITTER,
    ("GET", "/api/runs/{run_id}/explanations"): SUBMITTER,
    ("GET", "/api/runs/{run_id}/versus"): SUBMITTER,
    ("POST", "/api/teams/{team_id}/tokens"): ORG,
}


def test_each_endpoint_admits_exactly_the_roles_of_the_table(client):
    declared = {}
    for route in routes(client.app.routes):
        if route.path.startswith("/api"):
            (roles,) = roles_of(route)
            for method in route.methods:
                declared[(method, route.path)] = roles
    assert {k: v for k, v in declared.items() if ROLE_TABLE.get(k) != v} == {}
    assert set(ROLE_TABLE) - set(declared) == set()

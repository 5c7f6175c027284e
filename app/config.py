"""Service settings, read from the environment (prefix TRECPOOL_, plus DATABASE_URL)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """All tunables of the service; every limit is a setting."""

    model_config = SettingsConfigDict(env_prefix="TRECPOOL_", extra="ignore")

    database_url: str | None = Field(
        default=None, validation_alias=AliasChoices("DATABASE_URL", "TRECPOOL_DATABASE_URL")
    )
    data_dir: Path = Field(default=Path(".trecpool"), description="Where the embedded PostgreSQL keeps its data.")
    max_upload_bytes: int = Field(default=64 * 1024 * 1024, gt=0, description="Largest accepted upload (413 above).")
    max_decompressed_bytes: int = Field(
        default=512 * 1024 * 1024,
        gt=0,
        description="Largest accepted gzip-compressed upload once decompressed (413 above; never inflated further).",
    )
    max_json_bytes: int = Field(
        default=1024 * 1024,
        gt=0,
        description="Largest accepted body of every request but file uploads (413 above, counted as it arrives).",
    )
    max_bulk_json_bytes: int = Field(
        default=8 * 1024 * 1024,
        gt=0,
        description="Largest accepted JSON body of an organiser's bulk request (a topic list, pool assignments).",
    )
    max_errors: int = Field(default=50, gt=0, description="How many validation errors one response lists at most.")
    judging_lease_seconds: float = Field(
        default=300.0, gt=0, description="How long an item stays leased to one assessor."
    )
    job_heartbeat_seconds: float = Field(
        default=5.0, gt=0, description="How often a worker, and each job it runs, records that it is alive."
    )
    job_stall_seconds: float = Field(
        default=30.0, gt=0, description="A worker silent this long is presumed dead: its jobs are retried or failed."
    )
    job_max_run_seconds: float = Field(
        default=3600.0, gt=0, description="A job running longer is stopped and fails, saying so."
    )
    job_max_attempts: int = Field(
        default=3, ge=1, description="Tries of a job whose worker died or that met a transient error (input errors: 1)."
    )
    job_campaign_concurrency: int = Field(
        default=1, ge=1, description="Jobs (evaluations and analyses) of one campaign that may run at once."
    )
    worker_concurrency: int = Field(
        default=1, ge=1, description="Jobs one worker process runs at once (each holds a campaign's data in memory)."
    )
    parse_processes: int = Field(
        default=1,
        ge=0,
        le=64,
        description="Processes (at worker_niceness) that read uploaded run files, so parsing never holds the server's "
        "GIL; 0 reads them in the request's thread.",
    )
    worker_niceness: int = Field(
        default=10, ge=0, le=19, description="How much lower a worker process's CPU priority is than the server's."
    )
    auth_max_failures: int = Field(
        default=100, ge=1, description="Failed authentications one client address may make per window (then 429)."
    )
    auth_failure_window_seconds: float = Field(
        default=60.0, gt=0, description="The window of auth_max_failures, in seconds."
    )
    judge_link_seconds: float = Field(
        default=72 * 3600.0, gt=0, description="How long a one-time judging link (judge_url) stays valid."
    )
    judge_session_seconds: float = Field(
        default=7 * 24 * 3600.0, gt=0, description="Lifetime of the session token a judging link is traded for."
    )
    web_session_seconds: float = Field(
        default=12 * 3600.0,
        gt=0,
        le=366 * 24 * 3600.0,
        description="Lifetime of the browser session (cookie and its token) a console sign-in at /login starts.",
    )
    model_judging_per_minute: int = Field(
        default=6000,
        ge=1,
        description="Items one model assessor may pull plus verdicts it may push per minute, per server process "
        "(then 429 with Retry-After).",
    )
    model_judging_max_batch: int = Field(
        default=100, ge=1, le=1000, description="Most items one pull leases, and verdicts one push carries."
    )
    model_lease_seconds: float = Field(
        default=600.0, gt=0, description="How long an item pulled by a model assessor stays leased to it."
    )
    host: str = "127.0.0.1"
    port: int = 8000


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()

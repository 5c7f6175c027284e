"""Service settings, read from the environment (prefix TRECPOOL_, plus DATABASE_URL)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

RUN_STORAGE_POSTGRES, RUN_STORAGE_DIR, RUN_STORAGE_S3 = "postgres", "dir:", "s3://"  # app/storage/run_store.py


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
    job_memory_mb: float = Field(
        default=512.0,
        gt=0,
        description="Memory an evaluation job may give the runs it holds at once: it reads and evaluates the runs in "
        "blocks of about this size (run lines x bytes per line), storing each block's scores before the next, and "
        "queues one task per block for the workers when there is more than one.",
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
    run_storage: str = Field(
        default="postgres",
        description="Where new run files are stored: postgres (the runs table), dir:/path (a local directory) or "
        "s3://bucket/prefix (S3-compatible object storage: the s3 extra); `trecpool storage migrate` moves the others.",
    )
    s3_endpoint_url: str | None = Field(
        default=None, description="The S3 endpoint of s3:// run storage (MinIO, Ceph, ...); unset: AWS's own."
    )
    s3_region: str | None = Field(default=None, description="The S3 region of s3:// run storage; unset: boto3's.")
    s3_access_key_id: SecretStr | None = Field(
        default=None, description="The S3 access key; unset: boto3's own (AWS_ACCESS_KEY_ID, a profile, a role)."
    )
    s3_secret_access_key: SecretStr | None = Field(
        default=None, description="The S3 secret key (never logged nor shown); unset: boto3's own."
    )
    s3_timeout_seconds: float = Field(
        default=10.0, gt=0, description="How long an S3 request may take to connect, and then to answer, per attempt."
    )
    s3_max_attempts: int = Field(
        default=3, ge=1, description="Attempts of one S3 request (boto3's standard retries) before it is a 503."
    )
    run_storage_gc_minutes: float = Field(
        default=60.0,
        ge=0,
        description="`trecpool storage gc` never deletes a file written in the last so many minutes (an upload whose "
        "row is not committed yet, a migration under way).",
    )
    host: str = "127.0.0.1"
    port: int = 8000

    @field_validator("run_storage")
    @classmethod
    def _run_storage(cls, value: str) -> str:
        """postgres, dir: with a directory (made absolute), or s3:// with a bucket."""
        return check_location(value.strip())


def check_location(location: str) -> str:
    """A store location as rows name it: 'postgres', 'dir:' and an absolute path, or 's3://bucket[/prefix]';
    ValueError saying what is wrong."""
    if location == RUN_STORAGE_POSTGRES:
        return location
    if location.startswith(RUN_STORAGE_DIR):
        path = location[len(RUN_STORAGE_DIR) :]
        if not path:
            raise ValueError("dir: needs a directory, e.g. dir:/var/lib/trecpool/runs")
        return RUN_STORAGE_DIR + str(Path(path).expanduser().resolve())
    if location.startswith(RUN_STORAGE_S3):
        bucket, _, prefix = location[len(RUN_STORAGE_S3) :].partition("/")
        if "@" in bucket or ":" in bucket:
            raise ValueError("credentials go in TRECPOOL_S3_ACCESS_KEY_ID and _SECRET_ACCESS_KEY, not the location")
        if not bucket:
            raise ValueError("s3:// needs a bucket, e.g. s3://trecpool-runs/campaigns")
        prefix = prefix.strip("/")
        return f"{RUN_STORAGE_S3}{bucket}/{prefix}" if prefix else f"{RUN_STORAGE_S3}{bucket}"
    raise ValueError(f"{location!r} is no run storage: use postgres, dir:/path or s3://bucket/prefix")


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()

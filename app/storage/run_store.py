"""Where run files live: in PostgreSQL (`runs.content`, the default), a local directory, or S3-compatible storage.

A run's file is stored as its validated upload, zlib-compressed, addressed by the SHA-256 of those stored bytes
(`runs.storage_key`): identical files are stored once in a directory or a bucket. `runs.storage` names each run's
store by its location: `postgres`, `dir:/absolute/path` or `s3://bucket/prefix`; the `run_storage` setting
(TRECPOOL_RUN_STORAGE) is where new files go, and `trecpool storage migrate` (`run_migration.py`) moves the others.
Every read is of one run's bytes at a time. S3 needs boto3 (the `s3` extra), imported only when such a store is used;
its endpoint, region and credentials are settings (or boto3's own environment), never part of a location.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.config import RUN_STORAGE_DIR, RUN_STORAGE_POSTGRES, RUN_STORAGE_S3, Settings, check_location, get_settings

if TYPE_CHECKING:
    from app.storage.models import Run

POSTGRES, DIR_PREFIX, S3_PREFIX = RUN_STORAGE_POSTGRES, RUN_STORAGE_DIR, RUN_STORAGE_S3
S3_INSTALL = "pip install 'trecpool[s3]'"
COMPRESSION_LEVEL = 1  # zlib level of stored files: 10.4 bytes per run line at a fraction of level 6's time


class RunStoreError(Exception):
    """A store cannot be used (not installed, unreachable, refused): the message says which and why."""


class RunFileMissing(RunStoreError):
    """A run's file is not in the store its row names."""

    def __init__(self, location: str, key: str) -> None:
        super().__init__(f"the run file {key} is missing from {location}")
        self.location = location
        self.key = key


class RunStore(Protocol):
    """A content-addressed store of run files: bytes under the SHA-256 (hex) of those bytes."""

    location: str  # what `runs.storage` says of the runs stored here

    def put(self, key: str, data: bytes) -> None:
        """Store `data` under `key` (storing it again changes nothing)."""
        ...

    def get(self, key: str) -> bytes:
        """The bytes under `key`; RunFileMissing when there are none."""
        ...

    def delete(self, key: str) -> None:
        """Remove the bytes under `key` (nothing when absent)."""
        ...


def key_of(data: bytes) -> str:
    """The address of stored bytes: their SHA-256, hex."""
    return hashlib.sha256(data).hexdigest()


def compress(data: bytes) -> bytes:
    """A run file as it is stored."""
    return zlib.compress(data, COMPRESSION_LEVEL)


class PostgresStore:
    """Files in `runs.content`, each in the row of the run it belongs to (no sharing between rows).

    `put` stores the bytes in every run row addressing `key`, moving those rows here; `delete` does nothing, as a
    row's file leaves with the row, or when the row moves to another store (in the same UPDATE). An upload sets
    its new row's `content` itself (`save`).
    """

    location = POSTGRES

    def __init__(self, session: Session) -> None:
        self.session = session

    def put(self, key: str, data: bytes) -> None:
        """Keep the bytes in the rows of the runs addressing `key`, which are PostgreSQL's from then on."""
        self.session.execute(
            text("UPDATE runs SET storage = :here, content = :data WHERE storage_key = :key AND content IS NULL"),
            {"here": POSTGRES, "data": data, "key": key},
        )

    def get(self, key: str) -> bytes:
        """The bytes of one of the rows addressing `key`."""
        found = self.session.execute(
            text("SELECT content FROM runs WHERE storage_key = :key AND content IS NOT NULL LIMIT 1"), {"key": key}
        ).scalar()
        if found is None:
            raise RunFileMissing(POSTGRES, key)
        return bytes(found)

    def delete(self, key: str) -> None:
        """Nothing: a run's bytes leave with its row, or with the UPDATE that moves the row to another store."""


class DirectoryStore:
    """Files in a local directory, as ab/abcdef... (the key's first two hex digits as a subdirectory)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.location = DIR_PREFIX + str(root)

    def _path(self, key: str) -> Path:
        """Where the file of `key` is."""
        return self.root / key[:2] / key

    def put(self, key: str, data: bytes) -> None:
        """Write the file whole (a temporary file renamed into place), so a reader never sees part of it."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".part-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, path)
            finally:
                Path(temporary).unlink(missing_ok=True)
        except OSError as exc:
            raise RunStoreError(f"cannot write run files in {self.root}: {exc.strerror or exc}") from None

    def get(self, key: str) -> bytes:
        """The file's bytes."""
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            raise RunFileMissing(self.location, key) from None
        except OSError as exc:
            raise RunStoreError(f"cannot read run files in {self.root}: {exc.strerror or exc}") from None

    def delete(self, key: str) -> None:
        """Remove the file."""
        try:
            self._path(key).unlink(missing_ok=True)
        except OSError as exc:
            raise RunStoreError(f"cannot delete run files in {self.root}: {exc.strerror or exc}") from None


class S3Store:
    """Objects in an S3-compatible bucket (AWS, MinIO, ...), as PREFIX/ab/abcdef..."""

    def __init__(self, bucket: str, prefix: str, client: Any) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self.client = client
        self.location = f"{S3_PREFIX}{bucket}/{prefix}" if prefix else f"{S3_PREFIX}{bucket}"

    def _key(self, key: str) -> str:
        """The object's name."""
        return f"{self.prefix}/{key[:2]}/{key}" if self.prefix else f"{key[:2]}/{key}"

    def _failed(self, action: str, exc: Exception) -> RunStoreError:
        """A store error naming the bucket and what the client said (never credentials)."""
        return RunStoreError(f"cannot {action} run files in {self.location}: {exc}")

    def put(self, key: str, data: bytes) -> None:
        """Upload the object (S3 writes it whole or not at all)."""
        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data)
        except Exception as exc:  # noqa: BLE001 - botocore's errors (connection, refused, no bucket), named
            raise self._failed("write", exc) from None

    def get(self, key: str) -> bytes:
        """The object's bytes."""
        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=self._key(key))
            return bytes(answer["Body"].read())
        except Exception as exc:  # noqa: BLE001 - botocore's errors, a missing object told apart
            if _status(exc) == 404 or _code(exc) in ("NoSuchKey", "404"):
                raise RunFileMissing(self.location, key) from None
            raise self._failed("read", exc) from None

    def delete(self, key: str) -> None:
        """Delete the object (S3 answers the same when it is absent)."""
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key))
        except Exception as exc:  # noqa: BLE001 - botocore's errors, named
            raise self._failed("delete", exc) from None


def _code(exc: Exception) -> str:
    """The error code of a botocore ClientError ('' for other errors)."""
    response = getattr(exc, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


def _status(exc: Exception) -> int:
    """The HTTP status of a botocore ClientError (0 for other errors)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return 0
    return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)


_clients: dict[tuple[str | None, str | None, str | None], Any] = {}
_clients_lock = threading.Lock()


def _s3_client(settings: Settings) -> Any:
    """One boto3 S3 client per endpoint, region and access key in the process (clients are thread-safe)."""
    try:
        import boto3
    except ImportError:
        raise RunStoreError(f"run storage in S3 needs boto3, which is not installed: {S3_INSTALL}") from None
    access = settings.s3_access_key_id.get_secret_value() if settings.s3_access_key_id else None
    secret = settings.s3_secret_access_key.get_secret_value() if settings.s3_secret_access_key else None
    cache_key = (settings.s3_endpoint_url, settings.s3_region, access)
    with _clients_lock:
        if cache_key not in _clients:
            _clients[cache_key] = boto3.session.Session().client(
                "s3",
                endpoint_url=settings.s3_endpoint_url,
                region_name=settings.s3_region,
                aws_access_key_id=access,
                aws_secret_access_key=secret,
            )
        return _clients[cache_key]


def open_store(location: str, session: Session, settings: Settings | None = None) -> RunStore:
    """The store at `location` (a `runs.storage` value or the setting); S3 with the settings' endpoint and keys."""
    location = check_location(location)
    if location == POSTGRES:
        return PostgresStore(session)
    if location.startswith(DIR_PREFIX):
        return DirectoryStore(Path(location[len(DIR_PREFIX) :]))
    bucket, _, prefix = location[len(S3_PREFIX) :].partition("/")
    return S3Store(bucket, prefix, _s3_client(settings or get_settings()))


def configured_store(session: Session, settings: Settings | None = None) -> RunStore:
    """Where new run files go: the run_storage setting."""
    settings = settings or get_settings()
    return open_store(settings.run_storage, session, settings)


def save(session: Session, run: Run, stored: bytes, store: RunStore) -> None:
    """Store a new run's file (already compressed) in `store` and address it from the run's row."""
    run.storage_key = key_of(stored)
    run.storage = store.location
    if store.location == POSTGRES:
        run.content = stored  # the run's own row holds it
    else:
        store.put(run.storage_key, stored)
        run.content = None


def load(session: Session, storage: str, key: str) -> bytes:
    """The file (decompressed) of the run whose row says `storage` and `key`; RunStoreError when it cannot be read."""
    stored = open_store(storage, session).get(key)
    try:
        return zlib.decompress(stored)
    except zlib.error as exc:
        raise RunStoreError(f"the run file {key} in {storage} is damaged: {exc}") from None

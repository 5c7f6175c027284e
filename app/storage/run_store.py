"""Where run files live: in PostgreSQL (`runs.content`, the default), a local directory, or S3-compatible storage.

A run's file is stored as its validated upload, zlib-compressed, addressed by the SHA-256 of those stored bytes
(`runs.storage_key`): identical files are stored once in a directory or a bucket. `runs.storage` names each run's
store by its location: `postgres`, `dir:/absolute/path` or `s3://bucket/prefix`; the `run_storage` setting
(TRECPOOL_RUN_STORAGE) is where new files go, and `trecpool storage migrate` (`run_migration.py`) moves the others.
Every read is of one run's bytes at a time. S3 needs boto3 (the `s3` extra), imported only when such a store is used;
its endpoint, region and credentials are settings (or boto3's own environment), never part of a location, and no
error names them. A store that cannot be reached or read raises RunStoreUnavailable (the API's 503, a job's retry);
a missing or damaged file is a plain RunStoreError. Writers of a file hold its advisory lock (`hold_file`, shared,
until their transaction ends), so `trecpool storage gc` (`run_gc.py`) never deletes a file whose row is on its way.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from isal import isal_zlib
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.config import RUN_STORAGE_DIR, RUN_STORAGE_POSTGRES, RUN_STORAGE_S3, Settings, check_location, get_settings

if TYPE_CHECKING:
    from app.storage.models import Run

POSTGRES, DIR_PREFIX, S3_PREFIX = RUN_STORAGE_POSTGRES, RUN_STORAGE_DIR, RUN_STORAGE_S3
S3_INSTALL = "pip install 'trecpool[s3]'"
COMPRESSION_LEVEL = 1  # ISA-L's level of stored files (0-3), as run_files.STORED_LEVEL: about 11 bytes per run line


class RunStoreError(Exception):
    """A store cannot be used (not installed, unreachable, refused): the message says which and why."""


class RunStoreUnavailable(RunStoreError):
    """A store cannot be reached or read now (a refused connection, a timeout, a denied bucket, an unmounted disk)."""


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


@dataclass(frozen=True)
class StoredObject:
    """One file of a directory or S3 store: its key, size in bytes and when it was last written (UTC)."""

    key: str
    size: int
    modified: datetime


class ListedStore(RunStore, Protocol):
    """A store whose files can be listed apart from the rows naming them (a directory, S3): what gc sweeps."""

    def objects(self) -> Iterator[StoredObject]:
        """Every run file in the store (names that are not SHA-256 keys are not run files, and not listed)."""
        ...

    def stat(self, key: str) -> StoredObject | None:
        """The file under `key` as it is now (None when absent)."""
        ...


KEY_NAME = re.compile(r"[0-9a-f]{64}")
# The file locks' one-bigint advisory key space: the key's first 14 hex digits above this base (clear of
# model_judging's PULL_LOCK_BASE = 25 << 40 and its assessor ids); a clash of two keys only makes one wait.
FILE_LOCK_BASE = 1 << 61


def file_lock(key: str) -> int:
    """The advisory lock id of a file's key."""
    return FILE_LOCK_BASE + int(key[:14], 16)


def hold_file(session: Session, key: str) -> None:
    """Hold the file's lock (shared) until the transaction ends: gc leaves the file alone while its row is unsaved."""
    session.execute(text("SELECT pg_advisory_xact_lock_shared(CAST(:lock AS bigint))"), {"lock": file_lock(key)})


def key_of(data: bytes) -> str:
    """The address of stored bytes: their SHA-256, hex."""
    return hashlib.sha256(data).hexdigest()


def compress(data: bytes) -> bytes:
    """A run file as it is stored: a zlib stream made by ISA-L at the level uploads use (run_files.STORED_LEVEL), so
    the same file uploaded or imported from an archive is the same bytes under the same key, stored once."""
    return isal_zlib.compress(data, COMPRESSION_LEVEL)


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
            raise RunStoreUnavailable(f"cannot write run files in {self.location}: {exc.strerror or exc}") from None

    def get(self, key: str) -> bytes:
        """The file's bytes."""
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            raise RunFileMissing(self.location, key) from None
        except OSError as exc:
            raise RunStoreUnavailable(f"cannot read run files in {self.location}: {exc.strerror or exc}") from None

    def delete(self, key: str) -> None:
        """Remove the file."""
        try:
            self._path(key).unlink(missing_ok=True)
        except OSError as exc:
            raise RunStoreUnavailable(f"cannot delete run files in {self.location}: {exc.strerror or exc}") from None

    def objects(self) -> Iterator[StoredObject]:
        """Every ab/abcdef... file (a writer's unfinished .part- files and other names are left out)."""
        try:
            if not self.root.is_dir():
                raise FileNotFoundError(2, "no such directory")
            for folder in sorted(self.root.iterdir()):
                if len(folder.name) != 2 or not folder.is_dir():
                    continue
                for path in sorted(folder.iterdir()):
                    if KEY_NAME.fullmatch(path.name) and path.name[:2] == folder.name:
                        found = self.stat(path.name)
                        if found is not None:
                            yield found
        except OSError as exc:
            raise RunStoreUnavailable(f"cannot list run files in {self.location}: {exc.strerror or exc}") from None

    def stat(self, key: str) -> StoredObject | None:
        """The file's size and time of writing."""
        try:
            info = self._path(key).stat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise RunStoreUnavailable(f"cannot read run files in {self.location}: {exc.strerror or exc}") from None
        return StoredObject(key, info.st_size, datetime.fromtimestamp(info.st_mtime, UTC))


class S3Store:
    """Objects in an S3-compatible bucket (AWS, MinIO, ...), as PREFIX/ab/abcdef..."""

    def __init__(self, bucket: str, prefix: str, client: Any, secrets: tuple[str, ...] = ()) -> None:
        self.bucket = bucket
        self.prefix = prefix
        self.client = client
        self.secrets = tuple(s for s in secrets if s)  # blanked out of every message, should the client quote one
        self.location = f"{S3_PREFIX}{bucket}/{prefix}" if prefix else f"{S3_PREFIX}{bucket}"

    def _key(self, key: str) -> str:
        """The object's name."""
        return f"{self.prefix}/{key[:2]}/{key}" if self.prefix else f"{key[:2]}/{key}"

    def _failed(self, action: str, exc: Exception) -> RunStoreUnavailable:
        """A store error naming the bucket and what the client said (never credentials)."""
        said = _USERINFO.sub(r"\1", str(exc))
        for secret in self.secrets:
            said = said.replace(secret, "***")
        return RunStoreUnavailable(f"cannot {action} run files in {self.location}: {said}")

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

    def objects(self) -> Iterator[StoredObject]:
        """Every PREFIX/ab/abcdef... object, a page of the listing at a time (other objects are left out)."""
        start = f"{self.prefix}/" if self.prefix else ""
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=start)
        try:
            for page in pages:
                for found in page.get("Contents", []):
                    folder, _, key = str(found["Key"])[len(start) :].partition("/")
                    if KEY_NAME.fullmatch(key) and key[:2] == folder:
                        yield StoredObject(key, int(found["Size"]), found["LastModified"].astimezone(UTC))
        except Exception as exc:  # noqa: BLE001 - botocore's errors, named
            raise self._failed("list", exc) from None

    def stat(self, key: str) -> StoredObject | None:
        """The object's size and time of writing (a HEAD request)."""
        try:
            found = self.client.head_object(Bucket=self.bucket, Key=self._key(key))
        except Exception as exc:  # noqa: BLE001 - botocore's errors, a missing object told apart
            if _status(exc) == 404 or _code(exc) in ("NoSuchKey", "404"):
                return None
            raise self._failed("read", exc) from None
        return StoredObject(key, int(found["ContentLength"]), found["LastModified"].astimezone(UTC))


_USERINFO = re.compile(r"(\w+://)[^/@\s]+@")  # user:password@ in a URL a client error quotes


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


_clients: dict[tuple[str | None, str | None, str | None, float, int], Any] = {}
_clients_lock = threading.Lock()


def _s3_client(settings: Settings) -> Any:
    """One boto3 S3 client per endpoint, region and access key in the process (clients are thread-safe)."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise RunStoreUnavailable(f"run storage in S3 needs boto3, which is not installed: {S3_INSTALL}") from None
    access = settings.s3_access_key_id.get_secret_value() if settings.s3_access_key_id else None
    secret = settings.s3_secret_access_key.get_secret_value() if settings.s3_secret_access_key else None
    timeout, attempts = settings.s3_timeout_seconds, settings.s3_max_attempts
    cache_key = (settings.s3_endpoint_url, settings.s3_region, access, timeout, attempts)
    with _clients_lock:
        if cache_key not in _clients:
            _clients[cache_key] = boto3.session.Session().client(
                "s3",
                endpoint_url=settings.s3_endpoint_url,
                region_name=settings.s3_region,
                aws_access_key_id=access,
                aws_secret_access_key=secret,
                config=Config(
                    connect_timeout=timeout,
                    read_timeout=timeout,
                    retries={"max_attempts": attempts, "mode": "standard"},
                ),
            )
        return _clients[cache_key]


def _secrets(settings: Settings) -> tuple[str, ...]:
    """The S3 keys of the settings, to blank out of error messages."""
    return tuple(s.get_secret_value() for s in (settings.s3_access_key_id, settings.s3_secret_access_key) if s)


def open_store(location: str, session: Session, settings: Settings | None = None) -> RunStore:
    """The store at `location` (a `runs.storage` value or the setting); S3 with the settings' endpoint and keys."""
    location = check_location(location)
    if location == POSTGRES:
        return PostgresStore(session)
    if location.startswith(DIR_PREFIX):
        return DirectoryStore(Path(location[len(DIR_PREFIX) :]))
    bucket, _, prefix = location[len(S3_PREFIX) :].partition("/")
    settings = settings or get_settings()
    return S3Store(bucket, prefix, _s3_client(settings), _secrets(settings))


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
        hold_file(session, run.storage_key)  # until the row is committed: gc keeps the file
        store.put(run.storage_key, stored)
        run.content = None


def load(session: Session, storage: str, key: str) -> bytes:
    """The file (decompressed) of the run whose row says `storage` and `key`; RunStoreError when it cannot be read."""
    stored = open_store(storage, session).get(key)
    try:
        return zlib.decompress(stored)
    except zlib.error as exc:
        raise RunStoreError(f"the run file {key} in {storage} is damaged: {exc}") from None

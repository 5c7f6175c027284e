"""The master shot reference: `shot_id video_id start end` per line (tabs or spaces; a header line is allowed)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.evaluation.errors import FormatError, decode_utf8

HEADER_FIRST_FIELDS = {"shot_id", "shot", "shotid"}


@dataclass(frozen=True)
class ShotReference:
    """Shots of a collection as parallel arrays, in file order."""

    shot_ids: np.ndarray
    video_ids: np.ndarray
    starts: np.ndarray
    ends: np.ndarray


def parse_shot_reference(data: bytes | str, *, max_errors: int = 50, source: str = "collection") -> ShotReference:
    """Parse a master shot reference, collecting every error (up to `max_errors`) with its line number."""
    text = decode_utf8(data, source=source)
    errors: list[tuple[int, str]] = []
    shots: list[str] = []
    videos: list[str] = []
    starts: list[float] = []
    ends: list[float] = []
    first_line_of: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if not shots and not errors and fields[0].lower() in HEADER_FIRST_FIELDS:
            continue
        if len(errors) >= max_errors:
            break
        if len(fields) != 4:
            errors.append((number, f"expected 4 columns (shot_id video_id start end), found {len(fields)}"))
            continue
        shot, video, start_text, end_text = fields
        try:
            start, end = float(start_text), float(end_text)
        except ValueError:
            errors.append((number, f"start and end must be numbers, got {start_text!r} and {end_text!r}"))
            continue
        if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end < start:
            errors.append((number, f"invalid interval [{start_text}, {end_text}]: need 0 <= start <= end"))
            continue
        if shot in first_line_of:
            errors.append((number, f"shot {shot!r} already given on line {first_line_of[shot]}"))
            continue
        first_line_of[shot] = number
        shots.append(shot)
        videos.append(video)
        starts.append(start)
        ends.append(end)
    if not errors and not shots:
        errors.append((0, "the file holds no shots"))
    if errors:
        raise FormatError(errors[:max_errors], source=source)
    return ShotReference(
        shot_ids=np.array(shots, dtype=object),
        video_ids=np.array(videos, dtype=object),
        starts=np.array(starts, dtype=np.float64),
        ends=np.array(ends, dtype=np.float64),
    )

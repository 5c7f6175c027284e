"""Explanations of run results: why a system returned a shot (or moment), as TRECVID AVS allowed since 2020.

NIST's AVS task pages (2020-2022) allow "optional explainability attributes with each submitted shot in the xml run
file (timestamp of a frame within the shot and associated bounding box coordinates)". An explanation here is that:
the time of one frame (seconds from the start of the video; `[[h:]m:]s` is read too), optionally the box around what
made the shot relevant in that frame (x1, y1, x2, y2: left, top, right, bottom, in the frame's pixels, x1 < x2 and
y1 < y2), and optionally a short free text. Explanations are kept with the run's stored file, shown to the run's team
and the campaign's organisers, and never to assessors (judging stays blind).

Spellings read (names in any case):
- XML, on <item> or on an <explanation> element inside it: the time as `frameTime`, `timestamp`, `frameTimestamp` or
  `time`; the box as one `bbox` (or `boundingBox`, `box`) attribute of four numbers separated by commas or spaces, or
  as the four attributes `x1 y1 x2 y2` (or `xmin ymin xmax ymax`); the text as the element's content.
- JSON lines: an `explanation` field, an object with `time` (or `frame_time`), `box` ([x1, y1, x2, y2]) and `text`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MAX_TEXT = 1000  # characters of an explanation's free text
TIME_NAMES = ("frametime", "timestamp", "frametimestamp", "time")
BOX_NAMES = ("bbox", "boundingbox", "box")
CORNER_NAMES = (("x1", "y1", "x2", "y2"), ("xmin", "ymin", "xmax", "ymax"))
EXPLANATION_KEYS = ("frame_time", "box", "text")  # what an explanation says, as the API shows it
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Explanation:
    """One result's explanation: the frame's time in seconds, the box in that frame, a free text (each optional, but
    not all missing; a box needs its frame's time)."""

    line: int
    topic: str
    item: str  # the shot id (shot runs) or video id (moment runs)
    rank: int | None  # an XML run's seqNum
    frame_time: float | None
    box: Box | None
    text: str | None

    def as_json(self) -> dict[str, Any]:
        """The explanation as the API shows it."""
        return {
            "topic": self.topic,
            "item": self.item,
            "rank": self.rank,
            "line": self.line,
            "frame_time": self.frame_time,
            "box": list(self.box) if self.box is not None else None,
            "text": self.text,
        }


def _finite(text: str, what: str) -> float:
    """A finite number >= 0 from an attribute's text; ValueError naming `what` otherwise."""
    token = text.strip()
    try:
        value = float(token) if "_" not in token else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} {text!r} is not a number >= 0")
    return value


def read_time(text: str) -> float:
    """Seconds from `s`, `m:s` or `h:m:s` (each part a number >= 0; minutes and seconds below 60 after the first)."""
    parts = text.strip().split(":")
    if len(parts) > 3:
        raise ValueError(f"frame time {text!r} is not seconds or [h:]m:s")
    values = [_finite(part, "frame time") if part.strip() else math.nan for part in parts]
    if any(math.isnan(v) for v in values) or any(v >= 60 for v in values[1:]):
        raise ValueError(f"frame time {text!r} is not seconds or [h:]m:s")
    seconds = 0.0
    for value in values:
        seconds = seconds * 60 + value
    return seconds


def checked_box(values: list[float]) -> Box:
    """A box (x1, y1, x2, y2) whose corners are in order; ValueError otherwise."""
    x1, y1, x2, y2 = values
    if not (x1 < x2 and y1 < y2):
        raise ValueError(f"bounding box {_shown(values)} needs x1 < x2 and y1 < y2 (left, top, right, bottom)")
    return (x1, y1, x2, y2)


def _shown(values: list[float]) -> str:
    """Box values as the file wrote them, near enough."""
    return ",".join(f"{v:g}" for v in values)


def read_box_text(text: str) -> Box:
    """A box from one attribute: four numbers >= 0 separated by commas or white space."""
    tokens = text.replace(",", " ").split()
    if len(tokens) != 4:
        raise ValueError(f"bounding box {text!r} is not four numbers x1,y1,x2,y2")
    return checked_box([_finite(t, "bounding box coordinate") for t in tokens])


def from_attributes(attrs: dict[str, str]) -> tuple[float | None, Box | None, bool]:
    """The frame time and box stated by XML attributes (names in any case), and whether any was stated; ValueError
    with a message on a malformed one."""
    by_name = {name.rsplit(":", 1)[-1].lower(): value for name, value in attrs.items()}
    time_key = next((k for k in TIME_NAMES if k in by_name), None)
    frame_time = read_time(by_name[time_key]) if time_key is not None else None
    box_key = next((k for k in BOX_NAMES if k in by_name), None)
    box = read_box_text(by_name[box_key]) if box_key is not None else None
    for corners in CORNER_NAMES:
        given = [k for k in corners if k in by_name]
        if not given:
            continue
        if box is not None:
            raise ValueError(f"the bounding box is given twice ({box_key} and {', '.join(given)})")
        missing = [k for k in corners if k not in by_name]
        if missing:
            raise ValueError(f"bounding box lacks {', '.join(missing)} (give all of {' '.join(corners)})")
        box = checked_box([_finite(by_name[k], f"bounding box {k}") for k in corners])
    stated = frame_time is not None or box is not None
    if box is not None and frame_time is None:
        raise ValueError("a bounding box needs the time of its frame (frameTime)")
    return frame_time, box, stated


def checked_text(text: str | None) -> str | None:
    """An explanation's free text, stripped (None when empty); ValueError when too long."""
    if text is None or not text.strip():
        return None
    if len(text) > MAX_TEXT:
        raise ValueError(f"explanation text is longer than {MAX_TEXT} characters")
    return text.strip()


def from_json(value: object) -> tuple[float | None, Box | None, str | None]:
    """(frame time, box, text) of a JSON line's `explanation` field; ValueError with a message on a malformed one."""
    if isinstance(value, str):
        return None, None, checked_text(value)
    if not isinstance(value, dict):
        raise ValueError("explanation must be an object (time, box, text) or a string")
    unknown = sorted(set(value) - {"time", "frame_time", "box", "text"})
    if unknown:
        raise ValueError(f"explanation has unknown field(s) {', '.join(unknown)} (time, box, text)")
    raw_time = value.get("time", value.get("frame_time"))
    frame_time = None if raw_time is None else _json_number(raw_time, "explanation time")
    box: Box | None = None
    if value.get("box") is not None:
        raw = value["box"]
        if not isinstance(raw, list) or len(raw) != 4:
            raise ValueError(f"explanation box {raw!r} is not a list of four numbers [x1, y1, x2, y2]")
        box = checked_box([_json_number(v, "explanation box coordinate") for v in raw])
    text = value.get("text")
    if text is not None and not isinstance(text, str):
        raise ValueError(f"explanation text {text!r} is not a string")
    if box is not None and frame_time is None:
        raise ValueError("an explanation box needs the time of its frame (time)")
    text = checked_text(text)
    if frame_time is None and box is None and text is None:
        raise ValueError("explanation is empty (give time, box or text)")
    return frame_time, box, text


def _json_number(value: object, what: str) -> float:
    """A finite number >= 0 from a JSON value (not a boolean, not a string)."""
    try:
        number = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
    except OverflowError:
        number = math.nan
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{what} {value!r} is not a number >= 0")
    return number

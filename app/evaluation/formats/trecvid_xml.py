"""Reading TRECVID AVS XML runs (NIST's videoAdhocSearchResults format): the ranked shots with their line numbers,
the run's attributes (trType, class, novelty, pid, priority, desc), each topic's elapsedTime and the optional
explanation of each shot (a frame's time and a bounding box, as attributes of <item> or of an <explanation> element
inside it: `app.evaluation.explanations`).

The text is fed to expat a block at a time, so a file is never needed whole. A DOCTYPE line naming NIST's DTD is
accepted (the DTD is never fetched); an internal DTD subset, entity declarations and entity references are refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NoReturn
from xml.parsers import expat

import numpy as np

from app.evaluation import explanations as explaining
from app.evaluation.errors import FormatError, decode_utf8
from app.evaluation.explanations import Explanation
from app.evaluation.formats.scanning import (
    Errors,
    RunScan,
    TooManyErrors,
    parse_finite,
    parse_int,
    read_only,
    str_array,
)
from app.evaluation.records import RunTable

RUN_TAG_ATTRIBUTES = ("runId", "runid", "run_id", "runID", "id", "name", "tag")


class _ForbiddenMarkup(Exception):
    """A DTD or entity declaration in an uploaded XML run."""


def parse_trecvid_xml(
    data: bytes | str, *, max_errors: int = 50, source: str = "run"
) -> tuple[RunTable, dict[str, str]]:
    """Parse a TRECVID AVS XML run; returns the table (rank = seqNum, score = -seqNum) and the run attributes."""
    scan = scan_trecvid_xml(data, max_errors=max_errors, source=source).checked(source)
    return scan.table, scan.attributes


def scan_trecvid_xml(data: bytes | str, *, max_errors: int = 50, source: str = "run") -> RunScan:
    """Read a TRECVID AVS XML run as far as it goes: its well-formed items and every problem, by line."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return scan_trecvid_xml_blocks([(raw, 1)], max_errors=max_errors, source=source)


def scan_trecvid_xml_blocks(
    blocks: Iterable[tuple[bytes, int]], *, max_errors: int = 50, source: str = "run"
) -> RunScan:
    """`scan_trecvid_xml` over blocks of whole lines (each with its first line number), fed to expat one by one."""
    reader = _AvsXmlReader(max_errors)
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    reader.attach(parser)
    complete = True
    try:
        for block, first_line in blocks:
            _check_utf8(block, first_line, source)
            parser.Parse(block, False)
        parser.Parse(b"", True)
    except TooManyErrors:
        complete = False
    except FormatError as exc:  # bytes that are not UTF-8: expat cannot go on
        reader.errors.items.extend(exc.errors)
        complete = False
    except _ForbiddenMarkup as exc:
        reader.errors.items.append((parser.CurrentLineNumber, str(exc)))
        complete = False
    except expat.ExpatError as exc:
        reader.errors.items.append((exc.lineno, f"not well-formed XML: {expat.errors.messages[exc.code]}"))
        complete = False
    errors = reader.errors.items[: reader.errors.max_errors]
    if not errors and not reader.docs:
        errors.append((0, "the XML run holds no <item> results"))
    attributes = reader.attributes
    tag = next((attributes[k] for k in RUN_TAG_ATTRIBUTES if attributes.get(k)), None)
    if tag is None:
        tag = "_".join(attributes[k] for k in ("pid", "priority") if attributes.get(k)) or source
    seq = np.array(reader.ranks, dtype=np.int64)
    table = RunTable(
        tag=tag,
        topics=str_array(reader.topics),
        docs=str_array(reader.docs),
        ranks=seq,
        scores=-seq.astype(np.float64),
        lines=np.array(reader.lines, dtype=np.int64),
    )
    return RunScan(read_only(table), errors, complete, attributes, reader.elapsed, reader.explanations)


def _check_utf8(block: bytes, first_line: int, source: str) -> None:
    """FormatError naming the line of the first bytes of `block` that are not UTF-8."""
    if block.isascii():
        return
    try:
        decode_utf8(block, source=source)
    except FormatError as exc:
        raise FormatError([(line + first_line - 1, message) for line, message in exc.errors], source=source) from None


def _local(name: str) -> str:
    """An element name without namespace."""
    return name.rsplit("}", 1)[-1].rsplit(":", 1)[-1]


class _AvsXmlReader:
    """Expat callbacks collecting TRECVID AVS items with their line numbers, the run attributes and elapsed times."""

    def __init__(self, max_errors: int) -> None:
        self.errors = Errors(max_errors)
        self.attributes: dict[str, str] = {}
        self.elapsed: dict[str, float] = {}
        self.topics: list[str] = []
        self.docs: list[str] = []
        self.ranks: list[int] = []
        self.lines: list[int] = []
        self.topic: str | None = None
        self.seen: dict[tuple[str, str], int] = {}
        self.seen_seq: dict[tuple[str, int], int] = {}
        self.parser: expat.XMLParserType | None = None
        self.explanations: list[Explanation] = []
        self.current: Explanation | None = None  # the open <item> kept as a row (its explanation fields empty)
        self.explained = False  # whether the open <item> has its explanation
        self.element: tuple[int, float | None, explaining.Box | None] | None = None  # an open <explanation>
        self.text: list[str] = []  # the open <explanation>'s content
        self.n_text = 0

    def attach(self, parser: expat.XMLParserType) -> None:
        """Install the callbacks on an expat parser."""
        self.parser = parser
        parser.StartElementHandler = self.start
        parser.EndElementHandler = self.end
        parser.StartDoctypeDeclHandler = self.doctype
        parser.EntityDeclHandler = self.forbid
        parser.ExternalEntityRefHandler = self.forbid

    def doctype(self, name: str, system_id: str | None, public_id: str | None, internal_subset: bool) -> None:
        """Accept a DOCTYPE that only names an external DTD, as NIST's runs carry (expat never fetches it); refuse one
        with an internal subset, where entities could be declared."""
        if internal_subset:
            raise _ForbiddenMarkup("DTDs with declarations of their own are not accepted in XML runs")

    def forbid(self, *args: object) -> NoReturn:
        """Refuse entity declarations and references."""
        raise _ForbiddenMarkup("DTDs and entity declarations are not accepted in XML runs")

    def line(self) -> int:
        """The current line number."""
        return self.parser.CurrentLineNumber if self.parser is not None else 0

    def start(self, name: str, attrs: dict[str, str]) -> None:
        """Handle an opening tag."""
        tag = _local(name)
        if tag.endswith("RunResult") or (tag.endswith("Run") and not self.attributes):
            self.attributes.update({_local(k): v for k, v in attrs.items()})
        elif tag.endswith("TopicResult") or tag == "topic":
            number = attrs.get("tNum") or attrs.get("tnum") or attrs.get("num") or attrs.get("topic")
            if not number:
                self.errors.add(self.line(), f"<{tag}> has no tNum attribute")
            self.topic = number.strip() if number else None
            elapsed = attrs.get("elapsedTime") or attrs.get("elapsedtime")
            if elapsed is not None and self.topic is not None:
                self.elapsed_time(self.topic, elapsed)
        elif tag == "item":
            self.item(attrs)
        elif tag == "explanation":
            self.explanation_start(attrs)

    def elapsed_time(self, topic: str, text: str) -> None:
        """Record a topic's elapsedTime (seconds, finite and >= 0); the first one given for a topic counts."""
        seconds = parse_finite(text.strip())
        if seconds is None or seconds < 0:
            self.errors.add(self.line(), f"elapsedTime {text!r} of topic {topic!r} is not a number of seconds >= 0")
            return
        self.elapsed.setdefault(topic, seconds)

    def item(self, attrs: dict[str, str]) -> None:
        """Handle one <item seqNum=.. shotId=../>."""
        line = self.line()
        if self.topic is None:
            self.errors.add(line, "<item> outside a topic result with a tNum")
            return
        shot = (attrs.get("shotId") or attrs.get("shotid") or attrs.get("docno") or "").strip()
        seq_text = attrs.get("seqNum") or attrs.get("seqnum") or attrs.get("rank") or ""
        seq = parse_int(seq_text.strip())
        ok = True
        if not shot:
            self.errors.add(line, "<item> has no shotId attribute")
            ok = False
        if seq is None:
            self.errors.add(line, f"seqNum {seq_text!r} is not an integer")
            ok = False
        if ok and seq is not None:
            first = self.seen.setdefault((self.topic, shot), line)
            if first != line:
                where = f"(lines {first} and {line})"
                self.errors.add(line, f"shot {shot!r} appears twice for topic {self.topic!r} {where}")
                return
            first = self.seen_seq.setdefault((self.topic, seq), line)
            if first != line:
                self.errors.add(line, f"seqNum {seq} appears twice for topic {self.topic!r} (lines {first} and {line})")
                return
            self.topics.append(self.topic)
            self.docs.append(shot)
            self.ranks.append(seq)
            self.lines.append(line)
            self.current = Explanation(line, self.topic, shot, seq, None, None, None)
            self.explained = False
            self.item_explanation(attrs)

    def item_explanation(self, attrs: dict[str, str]) -> None:
        """Keep the explanation an <item>'s own attributes state (frame time, box), if any."""
        assert self.current is not None
        try:
            frame_time, box, stated = explaining.from_attributes(attrs)
        except ValueError as exc:
            self.errors.add(self.current.line, f"explanation of shot {self.current.item!r}: {exc}")
            self.explained = True  # reported: an <explanation> inside would be a second one
            return
        if stated:
            self.explanations.append(_with(self.current, frame_time, box, None))
            self.explained = True

    def explanation_start(self, attrs: dict[str, str]) -> None:
        """Open an <explanation> of the current <item>: its attributes now, its text at its end."""
        line = self.line()
        if self.current is None:
            self.errors.add(line, "<explanation> outside an <item> (or inside one with errors)")
            return
        if self.explained:
            self.errors.add(line, f"shot {self.current.item!r} has more than one explanation")
            return
        self.explained = True
        try:
            frame_time, box, _ = explaining.from_attributes(attrs)
        except ValueError as exc:
            self.errors.add(line, f"explanation of shot {self.current.item!r}: {exc}")
            return
        self.element = (line, frame_time, box)
        self.text, self.n_text = [], 0
        if self.parser is not None:  # text is read inside an <explanation> only: no call per line elsewhere
            self.parser.CharacterDataHandler = self.characters

    def characters(self, data: str) -> None:
        """Collect the text of an open <explanation> (no more than it may hold)."""
        if self.element is not None and self.n_text <= explaining.MAX_TEXT:
            self.text.append(data)
            self.n_text += len(data)

    def explanation_end(self) -> None:
        """Close an <explanation>: keep it, or report it empty or too long."""
        if self.element is None or self.current is None:
            return
        line, frame_time, box = self.element
        self.element = None
        if self.parser is not None:
            self.parser.CharacterDataHandler = None
        try:
            text = explaining.checked_text("".join(self.text))
        except ValueError as exc:
            self.errors.add(line, f"explanation of shot {self.current.item!r}: {exc}")
            return
        if frame_time is None and text is None:
            self.errors.add(line, f"explanation of shot {self.current.item!r} is empty (give frameTime, bbox or text)")
            return
        self.explanations.append(_with(self.current, frame_time, box, text))

    def end(self, name: str) -> None:
        """Handle a closing tag."""
        tag = _local(name)
        if tag.endswith("TopicResult") or tag == "topic":
            self.topic = None
        elif tag == "explanation":
            self.explanation_end()
        elif tag == "item":
            self.current = None


def _with(row: Explanation, frame_time: float | None, box: explaining.Box | None, text: str | None) -> Explanation:
    """A row's explanation with what it states."""
    return Explanation(row.line, row.topic, row.item, row.rank, frame_time, box, text)

"""Topic files: `number text` lines (TRECVID), TREC topics XML, or TRECVID topics XML."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from app.evaluation.errors import FormatError, decode_utf8

_LINE = re.compile(r"^\s*(\S+)\s+(.+?)\s*$")


@dataclass(frozen=True)
class TopicDef:
    """One topic as read from a file."""

    number: str
    title: str
    description: str = ""


def parse_topics(data: bytes | str, *, source: str = "topics") -> list[TopicDef]:
    """Parse a topics file of any supported kind, with line-numbered errors."""
    text = decode_utf8(data, source=source)
    stripped = text.lstrip()
    topics = _parse_xml(text, source) if stripped.startswith("<") else _parse_lines(text, source)
    if not topics:
        raise FormatError([(0, "the file holds no topics")], source=source)
    seen: dict[str, int] = {}
    errors = []
    for index, topic in enumerate(topics):
        if topic.number in seen:
            errors.append((0, f"topic {topic.number} given twice (topics #{seen[topic.number] + 1} and #{index + 1})"))
        seen.setdefault(topic.number, index)
    if errors:
        raise FormatError(errors, source=source)
    return topics


def _parse_lines(text: str, source: str) -> list[TopicDef]:
    """`number text` per line."""
    topics, errors = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _LINE.match(line)
        if match is None:
            errors.append((number, "expected a topic number followed by its text"))
            continue
        topics.append(TopicDef(number=match.group(1), title=match.group(2)))
    if errors:
        raise FormatError(errors, source=source)
    return topics


def _parse_xml(text: str, source: str) -> list[TopicDef]:
    """TREC `<topic number=..><query>..` or TRECVID `<videoAdhocSearchTopic num=..><textDescription text=..>`."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise FormatError([(0, "DTDs and entities are not accepted in topic files")], source=source)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise FormatError([(exc.position[0], f"not well-formed XML: {exc}")], source=source) from None
    topics = []
    for element in root.iter():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "topic":
            number = element.get("number") or element.get("num")
            query = (element.findtext("query") or element.findtext("title") or "").strip()
            parts = [(element.findtext(name) or "").strip() for name in ("question", "narrative", "description")]
            description = "\n".join(p for p in parts if p)
        elif tag == "videoAdhocSearchTopic":
            number = element.get("num") or element.get("number")
            desc = element.find("textDescription")
            query = (desc.get("text", "") if desc is not None else "").strip() or (element.text or "").strip()
            description = ""
        else:
            continue
        if not number:
            raise FormatError([(0, f"a <{tag}> element has no number attribute")], source=source)
        topics.append(TopicDef(number=number.strip(), title=query or number, description=description))
    return topics

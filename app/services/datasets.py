"""Topics and qrels of a past campaign from ir_datasets by dataset id (e.g. `cord19/trec-covid/round1`), so that it
can be re-run here: the optional extra `pip install trecpool[datasets]`.

ir_datasets is imported only when a dataset is loaded (`load_dataset`): the core install neither needs nor imports it.
A dataset is read through its own API (`queries_iter()`: query_id, title or text, description, narrative;
`qrels_iter()`: query_id, doc_id, relevance, iteration), written out as a TREC topics XML file and a TREC qrels file,
and those go through the same services, and so the same parsers and checks, as an uploaded topics file and qrels
file (`add_topics_file`, `import_qrels`). Topics and qrels are stored in one savepoint: all or nothing.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy.orm import Session

from app.services.auth import Principal
from app.services.errors import InvalidInput, ServiceError
from app.services.qrels import import_qrels
from app.services.topics import add_topics_file
from app.storage.models import QrelsVersion, Topic

INSTALL = "pip install 'trecpool[datasets]'"


class DatasetsUnavailable(ServiceError):
    """ir_datasets is not installed (the core install): the message says how to install it."""


class Dataset(Protocol):
    """What is read of an ir_datasets dataset."""

    def queries_iter(self) -> Iterable[Any]:
        """The topics: named tuples with query_id and title (or text), perhaps description and narrative."""
        ...

    def qrels_iter(self) -> Iterable[Any]:
        """The judgements: named tuples with query_id, doc_id, relevance, perhaps iteration."""
        ...


@dataclass(frozen=True)
class DatasetImport:
    """What an import stored."""

    dataset_id: str
    topics: list[Topic]
    qrels: QrelsVersion | None


def load_dataset(dataset_id: str) -> Dataset:
    """The ir_datasets dataset of that id (DatasetsUnavailable without the extra, InvalidInput for an unknown id)."""
    try:
        import ir_datasets  # type: ignore[import-untyped]  # it ships no annotations (the datasets extra)
    except ImportError:
        raise DatasetsUnavailable(f"importing by dataset id needs ir_datasets: {INSTALL}") from None
    try:
        dataset: Dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise InvalidInput(
            f"no ir_datasets dataset {dataset_id!r}",
            [{"field": "dataset_id", "message": "not a dataset id of ir_datasets (see ir-datasets.com)"}],
        ) from None
    return dataset


def _text(value: object) -> str:
    """A field's text ('' for None)."""
    return "" if value is None else str(value).strip()


def topics_file(queries: Iterable[Any]) -> bytes:
    """The topics as TREC topics XML (`<topic number=..>` with `<query>`, `<question>`, `<narrative>`: the layout of
    TREC-COVID's topics file, so the title is the query and the description its question and narrative)."""
    root = ET.Element("topics")
    for query in queries:
        topic = ET.SubElement(root, "topic", number=_text(getattr(query, "query_id", "")))
        title = _text(getattr(query, "title", None)) or _text(getattr(query, "text", None))
        for tag, value in (
            ("query", title),
            ("question", _text(getattr(query, "description", None))),
            ("narrative", _text(getattr(query, "narrative", None))),
        ):
            if value:
                ET.SubElement(topic, tag).text = value
    return ET.tostring(root, encoding="utf-8", xml_declaration=False)


def qrels_file(qrels: Iterable[Any]) -> bytes:
    """The judgements as a TREC qrels file: `topic iteration doc grade` per line (iteration 0 when it has none)."""
    lines = []
    for row in qrels:
        iteration = _text(getattr(row, "iteration", None)) or "0"
        lines.append(f"{_text(row.query_id)} {iteration} {_text(row.doc_id)} {_text(row.relevance)}\n")
    return "".join(lines).encode("utf-8")


def _read(dataset_id: str, what: str, read: Any) -> bytes:
    """One part of the dataset as file bytes; a failure to fetch or read it (ir_datasets downloads on first use and
    raises what its downloader or parser raises) becomes an InvalidInput naming the dataset and the part."""
    try:
        data: bytes = read()
    except ServiceError:
        raise
    except Exception as exc:  # the library's own errors: network, missing files, formats
        raise InvalidInput(
            f"could not read the {what} of dataset {dataset_id!r}: {exc}", [{"field": "dataset_id", "message": what}]
        ) from None
    return data


def import_dataset(
    session: Session,
    principal: Principal,
    campaign_id: int,
    dataset_id: str,
    dataset: Dataset,
    *,
    label: str | None = None,
    topics: bool = True,
    qrels: bool = True,
    max_errors: int = 20,
) -> DatasetImport:
    """Add the dataset's topics and store its qrels as a version labelled `label` (default: the dataset id) in the
    campaign, through the topics-file and qrels-file services, all or nothing."""
    if not topics and not qrels:
        raise InvalidInput("nothing to import", [{"field": "dataset_id", "message": "import topics, qrels or both"}])
    for part, wanted in (("queries", topics), ("qrels", qrels)):
        if wanted and not getattr(dataset, f"has_{part}", lambda: True)():
            raise InvalidInput(
                f"dataset {dataset_id!r} has no {'topics' if part == 'queries' else part}",
                [{"field": "dataset_id", "message": f"no {part}"}],
            )
    topic_bytes = _read(dataset_id, "topics", lambda: topics_file(dataset.queries_iter())) if topics else b""
    qrels_bytes = _read(dataset_id, "qrels", lambda: qrels_file(dataset.qrels_iter())) if qrels else b""
    with session.begin_nested():  # a qrels file the parser refuses also takes back the topics
        added = add_topics_file(session, principal, campaign_id, topic_bytes, max_errors=max_errors) if topics else []
        version = (
            import_qrels(session, principal, campaign_id, qrels_bytes, label or dataset_id, max_errors=max_errors)
            if qrels
            else None
        )
    return DatasetImport(dataset_id=dataset_id, topics=added, qrels=version)

"""Files read as streams: gzip decompressed a piece at a time and text parsed a block of lines at a time give exactly
what parsing the whole file gives, with the same line numbers and errors, without holding the whole text."""

from __future__ import annotations

import gzip
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from app.evaluation.errors import FormatError
from app.evaluation.formats import streams
from app.evaluation.formats.streams import TooLarge, decompressed_pieces, gunzip_limited, line_blocks
from app.evaluation.formats.trec_files import parse_qrels, parse_trec_run, read_bytes, read_qrels, read_run


def run_text(n_topics: int = 7, per_topic: int = 300, tag: str = "tagA") -> str:
    """A well-formed run with blank lines here and there."""
    rng = np.random.default_rng(3)
    lines = []
    for topic in range(1, n_topics + 1):
        for rank in range(per_topic):
            lines.append(f"{topic} Q0 doc{topic}_{rank * 7 % per_topic} {rank + 1} {rng.normal()!r} {tag}")
            if rank % 97 == 0:
                lines.append("")
    return "\n".join(lines) + "\n"


def same_table(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.tag == b.tag
    assert a.topics.tolist() == b.topics.tolist()
    assert a.docs.tolist() == b.docs.tolist()
    assert np.array_equal(a.ranks, b.ranks) and np.array_equal(a.scores, b.scores)
    assert np.array_equal(a.lines, b.lines)


@pytest.fixture
def small_blocks(monkeypatch):  # type: ignore[no-untyped-def]
    """Blocks of about 1 KiB, so that every test file spans many blocks."""
    monkeypatch.setattr(streams, "BLOCK_BYTES", 1024)


@pytest.mark.parametrize("compress", [False, True])
def test_a_run_read_in_blocks_is_the_run_parsed_whole(tmp_path: Path, small_blocks, compress: bool) -> None:
    text = run_text().encode()
    path = tmp_path / ("run.gz" if compress else "run.txt")
    path.write_bytes(gzip.compress(text) if compress else text)
    table = read_run(path)
    same_table(table, parse_trec_run(text))
    assert table.lines[-1] == text.count(b"\n")
    assert table.doc_hashes is not None and len(table.doc_hashes) == len(table)


def test_errors_found_in_a_later_block_name_their_line(tmp_path: Path, small_blocks) -> None:
    lines = run_text().splitlines()
    lines[1500] = lines[1500].replace(" Q0 ", " Q0 extra ")
    lines[1800] = lines[1800].rsplit(" ", 1)[0] + " tagB"
    lines[1900] = lines[1900].replace("doc", "d\udcffc")  # a byte that is not UTF-8
    data = "\n".join(lines).encode("utf-8", errors="surrogateescape") + b"\n"
    (tmp_path / "run.gz").write_bytes(gzip.compress(data))
    with pytest.raises(FormatError) as info:
        read_run(tmp_path / "run.gz")
    assert [line for line, _ in info.value.errors] == [1501, 1801, 1901]
    assert "differs from 'tagA' on line 1" in info.value.errors[1][1]
    assert "not UTF-8" in info.value.errors[2][1]


@pytest.fixture
def small_pieces(monkeypatch):  # type: ignore[no-untyped-def]
    """Bytes held in memory (an upload, a stored run) cut in pieces of 300 bytes, blocks of about 1 KiB."""
    monkeypatch.setattr(streams, "PIECE", 300)
    monkeypatch.setattr(streams, "BLOCK_BYTES", 1024)


def test_bytes_parsed_in_blocks_are_the_run_parsed_whole(small_pieces, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A large upload or stored run is parsed a block of lines at a time (its working arrays a block's): the same
    table, line numbers, dtypes and docno hashes as one block, with a byte-order mark and blank lines."""
    text = ("\ufeff" + run_text()).encode()
    blocked = parse_trec_run(text)
    monkeypatch.setattr(streams, "BLOCK_BYTES", 1 << 30)
    whole = parse_trec_run(text)
    same_table(blocked, whole)
    assert blocked.docs.dtype == whole.docs.dtype and blocked.topics.dtype == whole.topics.dtype
    assert blocked.doc_hashes is not None and whole.doc_hashes is not None
    assert np.array_equal(blocked.doc_hashes, whole.doc_hashes)
    assert blocked.lines[-1] == text.count(b"\n")


def test_bytes_with_errors_in_a_later_block_name_their_line(small_pieces) -> None:  # type: ignore[no-untyped-def]
    lines = run_text().splitlines()
    lines[1500] = lines[1500].replace(" Q0 ", " Q0 extra ")
    lines[1800] = lines[1800].rsplit(" ", 1)[0] + " tagB"
    with pytest.raises(FormatError) as info:
        parse_trec_run(("\n".join(lines) + "\n").encode())
    assert [line for line, _ in info.value.errors] == [1501, 1801]
    repeated = run_text(n_topics=1, per_topic=200) + "1 Q0 doc1_0 201 -9 tagA\n"
    with pytest.raises(FormatError, match="appears twice for topic '1'"):
        parse_trec_run(repeated.encode())


def test_a_docno_repeated_across_blocks_is_found(tmp_path: Path, small_blocks) -> None:
    text = run_text(n_topics=1, per_topic=200) + "1 Q0 doc1_0 201 -9 tagA\n"
    (tmp_path / "run.txt").write_text(text)
    with pytest.raises(FormatError, match="appears twice for topic '1'"):
        read_run(tmp_path / "run.txt")


def test_concatenated_gzip_members_padding_and_a_byte_order_mark(tmp_path: Path, small_blocks) -> None:
    text = run_text().encode()
    half = text.index(b"\n", len(text) // 2) + 1
    joined = gzip.compress(b"\xef\xbb\xbf" + text[:half]) + b"\x00" * 5 + gzip.compress(text[half:]) + b"\x00"
    (tmp_path / "run.gz").write_bytes(joined)
    same_table(read_run(tmp_path / "run.gz"), parse_trec_run(text))
    assert read_bytes(tmp_path / "run.gz") == text


def test_a_truncated_or_corrupt_gzip_file_is_one_error(tmp_path: Path) -> None:
    whole = gzip.compress(run_text().encode())
    for name, data in [("cut.gz", whole[: len(whole) // 2]), ("bad.gz", whole[:20] + b"\xff" * 40 + whole[60:])]:
        (tmp_path / name).write_bytes(data)
        with pytest.raises(FormatError, match=rf"{name}: not a complete gzip file"):
            read_run(tmp_path / name)


def test_xml_runs_are_fed_to_expat_a_block_at_a_time(tmp_path: Path, small_blocks) -> None:
    items = "".join(f'<item seqNum="{i}" shotId="shot{i}_1"/>\n' for i in range(1, 400))
    xml = (
        '<?xml version="1.0"?>\n<videoAdhocSearchResults>\n'
        '<videoAdhocSearchRunResult trType="D" class="F" pid="team" priority="1" desc="d">\n'
        f'<videoAdhocSearchTopicResult tNum="1" elapsedTime="3.5">\n{items}</videoAdhocSearchTopicResult>\n'
        "</videoAdhocSearchRunResult>\n</videoAdhocSearchResults>\n"
    )
    (tmp_path / "run.xml.gz").write_bytes(gzip.compress(xml.encode()))
    table = read_run(tmp_path / "run.xml.gz")
    assert len(table) == 399 and table.lines[0] == 5 and table.lines[-1] == 403
    broken = xml.replace('shotId="shot300_1"/>', 'shotId="shot300_1">')
    (tmp_path / "broken.xml").write_text(broken)
    with pytest.raises(FormatError, match="not well-formed") as info:
        read_run(tmp_path / "broken.xml")
    assert info.value.errors[0][0] == 404  # the <item> left open on line 304 shows at the end tag that mismatches


@pytest.mark.parametrize("width", [4, 5])
def test_qrels_read_in_blocks_are_the_qrels_parsed_whole(tmp_path: Path, small_blocks, width: int) -> None:
    rows = [f"{t} 0 d{t}_{i} {i % 3}" if width == 4 else f"{t} 0 d{t}_{i} {i % 2 + 1} {i % 3 - 1}" for t in
            range(1, 6) for i in range(150)]  # fmt: skip
    rows.insert(400, "# a comment line")
    text = ("\n".join(rows) + "\n").encode()
    (tmp_path / "qrels.gz").write_bytes(gzip.compress(text))
    streamed, whole = read_qrels(tmp_path / "qrels.gz"), parse_qrels(text)
    assert streamed.topics.tolist() == whole.topics.tolist() and streamed.docs.tolist() == whole.docs.tolist()
    assert np.array_equal(streamed.grades, whole.grades) and np.array_equal(streamed.lines, whole.lines)
    assert streamed.stratified == (width == 5) and streamed.lines[-1] == len(rows)
    (tmp_path / "bad").write_bytes(text + (b"9 0 d1 x\n" if width == 4 else b"9 0 d1 1 x\n"))
    with pytest.raises(FormatError, match="grade 'x'") as info:
        read_qrels(tmp_path / "bad")
    assert info.value.errors[0][0] == len(rows) + 1


def test_reading_a_gzipped_run_does_not_hold_its_whole_text(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(streams, "PIECE", 1 << 16)
    monkeypatch.setattr(streams, "BLOCK_BYTES", 1 << 18)
    text = run_text(n_topics=20, per_topic=3000).encode()  # about 2.5 MB
    (tmp_path / "run.gz").write_bytes(gzip.compress(text))
    del text

    def peak(read) -> int:  # type: ignore[no-untyped-def]
        tracemalloc.start()
        try:
            read()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    streamed = peak(lambda: read_run(tmp_path / "run.gz"))
    in_blocks = peak(lambda: parse_trec_run(read_bytes(tmp_path / "run.gz")))  # the bytes held, parsed in blocks
    monkeypatch.setattr(streams, "BLOCK_BYTES", 1 << 30)
    whole = peak(lambda: parse_trec_run(read_bytes(tmp_path / "run.gz")))  # the bytes parsed as one block
    assert streamed < 0.5 * whole, (streamed, whole)
    assert in_blocks < 0.9 * whole, (in_blocks, whole)


def test_line_blocks_cut_after_newlines_and_number_lines() -> None:
    data = b"".join(b"line %d\n" % i for i in range(1, 200)) + b"last"
    pieces = [data[i : i + 7] for i in range(0, len(data), 7)]
    blocks = list(line_blocks(pieces, block_bytes=100))
    assert b"".join(block for block, _ in blocks) == data
    assert all(block.endswith(b"\n") for block, _ in blocks[:-1]) and blocks[-1][0].endswith(b"last")
    for block, first in blocks:
        assert block.split(b"\n", 1)[0] == (b"line %d" % first if first < 200 else b"last")


def test_gzip_is_told_by_its_magic_bytes_and_inflated_within_a_limit() -> None:
    assert b"".join(decompressed_pieces([b"\x1f", b"\x8b" + gzip.compress(b"abc")[2:]])) == b"abc"
    assert b"".join(decompressed_pieces([b"plain ", b"text"])) == b"plain text"
    bomb = gzip.compress(b"0" * (50 << 20))
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge) as info:
            gunzip_limited(bomb, 1 << 20)
        held = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.limit == 1 << 20 and "1048576" in str(info.value)
    assert held < 4 << 20  # the limit and a piece or two, never the 50 MB
    assert gunzip_limited(gzip.compress(b"x" * 1000), 1000) == b"x" * 1000

"""Streams tell compression by the first bytes: bzip2 and xz are read a piece at a time as gzip is (several streams,
zero padding, a limit), zstd and zip are refused saying what to do; a file that cannot be opened is one FormatError
naming it; `first_line` reads only as far as the first data line."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import Path

import pytest

from app.evaluation.errors import FormatError
from app.evaluation.formats import streams
from app.evaluation.formats.streams import TooLarge, check_readable, compression, decompressed_pieces, first_line
from app.evaluation.formats.trec_files import read_bytes, read_run

TEXT = b"".join(b"%d Q0 doc%d %d %d.5 tag\n" % (t, d, d + 1, 1000 - d) for t in range(1, 30) for d in range(200))
COMPRESSORS = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}


def _pieces(data: bytes, size: int) -> list[bytes]:
    """`data` cut into pieces of `size` bytes."""
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("kind", COMPRESSORS)
def test_each_format_is_told_by_its_first_bytes(kind: str) -> None:
    assert compression(COMPRESSORS[kind](b"x")[:10]) == kind
    assert compression(b"BZh91 Q0 d 1 1 tag\n") is None  # a run line that starts like bzip2 is text
    assert compression(TEXT[:10]) is None


@pytest.mark.parametrize("kind", COMPRESSORS)
@pytest.mark.parametrize("size", [1, 9, 4096])
def test_streams_padding_and_small_pieces(monkeypatch, kind: str, size: int) -> None:
    monkeypatch.setattr(streams, "PIECE", 1000)  # each output piece at most 1000 bytes
    half = len(TEXT) // 2
    data = COMPRESSORS[kind](TEXT[:half]) + b"\x00" * 8 + COMPRESSORS[kind](TEXT[half:]) + b"\x00" * 4
    out = list(decompressed_pieces(_pieces(data, size), source="f"))
    assert b"".join(out) == TEXT
    assert max(map(len, out)) <= 1000


@pytest.mark.parametrize("kind", ["bzip2", "xz"])
def test_a_limit_stops_at_most_one_byte_past_it(kind: str) -> None:
    data = COMPRESSORS[kind](TEXT)
    assert len(b"".join(decompressed_pieces([data], limit=len(TEXT)))) == len(TEXT)
    produced = 0
    with pytest.raises(TooLarge):
        for piece in decompressed_pieces(_pieces(data, 100), limit=len(TEXT) - 1):
            produced += len(piece)
    assert produced <= len(TEXT)


@pytest.mark.parametrize("kind", ["bzip2", "xz"])
def test_truncated_or_corrupt_data_is_one_error_naming_the_file(kind: str) -> None:
    data = COMPRESSORS[kind](TEXT)
    with pytest.raises(FormatError) as info:
        b"".join(decompressed_pieces([data[:-30]], source="run.x"))
    assert str(info.value) == f"run.x: not a complete {kind} file (it ends before its end-of-stream marker)"
    with pytest.raises(FormatError, match=f"^run.x: not a complete {kind} file"):
        b"".join(decompressed_pieces([data + b"garbage"], source="run.x"))


@pytest.mark.parametrize(
    ("head", "advice"),
    [(b"\x28\xb5\x2f\xfd\x00\x00", "zstd-compressed: decompress it first (zstd -d)"), (b"PK\x03\x04", "a zip archive")],
)
def test_zstd_and_zip_are_refused_saying_what_to_do(head: bytes, advice: str) -> None:
    with pytest.raises(FormatError) as info:
        list(decompressed_pieces([head + b"\x00" * 20], source="run.z"))
    assert str(info.value).startswith(f"run.z: {advice}")
    assert str(info.value).endswith("trecpool reads text, gzip, bzip2 and xz files")


def test_bzip2_and_xz_runs_read_like_text(tmp_path: Path) -> None:
    plain = tmp_path / "run"
    plain.write_bytes(TEXT)
    for kind, compress in COMPRESSORS.items():
        path = tmp_path / f"run.{kind}"
        path.write_bytes(compress(TEXT))
        assert read_bytes(path) == TEXT
        assert read_run(path).docs.tolist() == read_run(plain).docs.tolist()


def test_files_that_cannot_be_opened_are_one_line(tmp_path: Path) -> None:
    missing, directory = tmp_path / "missing", tmp_path
    for path, message in ((missing, "no such file"), (directory, "is a directory, not a file")):
        for read in (check_readable, read_bytes, read_run):
            with pytest.raises(FormatError) as info:
                read(path)
            assert str(info.value) == f"{path}: {message}"
    (tmp_path / "run").write_text("")
    with pytest.raises(FormatError, match="a part of its path is not a directory"):
        read_bytes(tmp_path / "run" / "x")
    assert check_readable(tmp_path / "run") is True
    reader, writer = os.pipe()
    try:
        assert check_readable(f"/dev/fd/{reader}") is False  # read once: callers copy it first
    finally:
        os.close(reader)
        os.close(writer)


def test_first_line_skips_blank_and_comment_lines_and_reads_compressed_files(tmp_path: Path) -> None:
    path = tmp_path / "qrels"
    path.write_bytes(b"\xef\xbb\xbf\n  \n# a comment\n  1 0 d1 1  \n2 0 d2 0\n")
    assert first_line(path) == b"1 0 d1 1"
    path.write_bytes(bz2.compress(b"\n" + TEXT))
    assert first_line(path) == TEXT.split(b"\n", 1)[0]
    path.write_bytes(b"# only a comment\n\n")
    assert first_line(path) == b""
    path.write_bytes(b"x" * 100_000)
    assert first_line(path, limit=1000) == b"x" * 1000

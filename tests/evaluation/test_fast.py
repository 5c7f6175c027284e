"""The speed layer (app.evaluation.fast) against plain Python: dicts, set membership, int() and float()."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.fast.columns import parse_floats, parse_ints, split_columns
from app.evaluation.fast.hashing import KeyTable, group_hashes, hash_strings, mix


@pytest.mark.parametrize("seed", range(20))
def test_key_table_finds_what_a_dict_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    keys = np.unique(mix(rng.integers(0, 5000, int(rng.integers(1, 3000))).astype(np.uint64)))
    keys = keys[rng.permutation(len(keys))]
    table = KeyTable(keys)
    where = {int(k): i for i, k in enumerate(keys.tolist())}
    parts = [mix(rng.integers(0, 8000, int(rng.integers(0, 70000))).astype(np.uint64)) for _ in range(3)]
    positions, indices = table.hits(parts)
    flat = np.concatenate(parts).tolist()
    expected = [(p, where[k]) for p, k in enumerate(flat) if k in where]
    assert list(zip(positions.tolist(), indices.tolist(), strict=True)) == expected


def test_key_table_refuses_repeated_keys() -> None:
    with pytest.raises(ValueError):
        KeyTable(np.array([1, 1], dtype=np.uint64))


@pytest.mark.parametrize("matrix", [True, False])
def test_grouped_hashes_never_merge_different_strings_after_checking(matrix: bool) -> None:
    values = np.array(["a", "b", "a", "caf\u00e9", "b", "", "x" * 40, "a"])
    group, members = group_hashes(hash_strings(values, matrix=matrix))
    assert values[members][group].tolist() == values.tolist()  # each value's group member is that value
    assert len(members) == len(set(values.tolist()))


def test_code_point_hash_ignores_padding_width() -> None:
    narrow, wide = np.array(["ab", "c"]), np.array(["ab", "c", "x" * 30])
    assert hash_strings(narrow, matrix=True).tolist() == hash_strings(wide, matrix=True)[:2].tolist()


NUMBERS = ["0", "-0.0", "+2.5", "1e-3", "3.", ".25", "0.1234567890123456789", "12345678901234", "-7", "inf"]


def test_float_parser_is_float_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    tokens = NUMBERS + [f"{v:.{int(d)}f}" for v, d in zip(rng.random(500) * 1e4, rng.integers(0, 16, 500), strict=True)]
    columns = split_columns(" ".join(f"{t}\n" for t in tokens), 1, source="x")
    assert columns is not None
    parsed = parse_floats(columns.matrix(0))
    assert parsed is not None
    assert parsed.view(np.int64).tolist() == np.array([float(t) for t in tokens]).view(np.int64).tolist()


def test_float_parser_declines_digit_separators() -> None:
    """float() reads 1_0 as 10.0 where C's atof (trec_eval) reads 1.0: the parser declines, the caller refuses it."""
    columns = split_columns("2.5\n1_0\n", 1, source="x")
    assert columns is not None and parse_floats(columns.matrix(0)) is None


def test_int_parser_is_int_or_declines() -> None:
    columns = split_columns("12\n-3\n+4\n", 1, source="x")
    assert columns is not None and parse_ints(columns.matrix(0)).tolist() == [12, -3, 4]
    columns = split_columns("12\n1.5\n", 1, source="x")
    assert columns is not None and parse_ints(columns.matrix(0)) is None


def test_tokenizer_is_str_split_or_declines() -> None:
    text = "a b\u00a0c\n\n d\te  f \n"
    columns = split_columns(text, 3, source="x")
    assert columns is not None
    rows = [[str(columns.strings(j)[i]) for j in range(3)] for i in range(len(columns))]
    assert rows == [line.split() for line in text.split("\n") if line.split()]
    assert columns.lines.tolist() == [1, 3]
    assert split_columns("a b\nc\n", 2, source="x") is None

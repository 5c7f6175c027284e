"""The speed layer (app.evaluation.fast) against plain Python: dicts, set membership, int() and float()."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.fast.columns import parse_floats, parse_ints, split_columns
from app.evaluation.fast.distinct import distinct
from app.evaluation.fast.hashing import KeyTable, group_hashes, hash_strings, mix
from app.evaluation.fast.string_order import string_order


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


@pytest.mark.parametrize("seed", range(10))
def test_key_table_refuses_a_repeat_wherever_it_lands(seed: int) -> None:
    """A repeated key is refused whether it meets its twin at home or among the overflow, at any level: crowded keys
    (equal top bits: all but one overflow, level after level) and spread ones, the repeat anywhere among them."""
    rng = np.random.default_rng(seed)
    crowded = np.arange(1, 60, dtype=np.uint64)
    spread = np.unique(mix(rng.integers(0, 2**62, 2000).astype(np.uint64)))
    for keys in (crowded, spread):
        KeyTable(keys)  # distinct: accepted
        repeated = np.insert(keys, int(rng.integers(0, len(keys) + 1)), keys[int(rng.integers(0, len(keys)))])
        with pytest.raises(ValueError, match="distinct"):
            KeyTable(repeated)
        with pytest.raises(ValueError, match="distinct"):
            KeyTable(repeated[::-1].copy())


@pytest.mark.parametrize("seed", range(10))
def test_distinct_is_np_unique(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 5000))
    arrays = [
        rng.integers(0, int(rng.integers(1, 10**6)), n),
        rng.integers(-50, 50, n).astype(np.int8),
        mix(rng.integers(0, 2**40, n).astype(np.uint64)),
        rng.integers(0, 2, n).astype(bool),
        np.array([f"d{v}" for v in rng.integers(0, 300, n)], dtype=str),
        np.array([f"d{v}".encode() for v in rng.integers(0, 300, n)], dtype=bytes),
        rng.integers(0, 30, (3, n // 3 + 1)),  # flattened, as np.unique flattens
    ]
    for values in arrays:
        expected = np.unique(values)
        got = distinct(values)
        assert got.dtype == expected.dtype
        assert got.tolist() == expected.tolist()


def test_distinct_refuses_floats() -> None:
    """np.unique folds NaNs together and a sort does not: floats are not `distinct`'s."""
    with pytest.raises(TypeError, match="integer or string"):
        distinct(np.array([1.0, np.nan, np.nan]))


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


def test_float_parser_is_float_on_both_sides_of_the_double_path_limit() -> None:
    """Mantissas below 2**53 are divided in doubles, the longer ones in extended precision: one column mixing both
    (and a column with none of the longer ones) reads as float() does, bit for bit."""
    limit = 2**53
    tokens = [f"{m}" for m in range(limit - 3, limit + 4)] + [f"0.{m}" for m in range(limit - 3, limit + 4)]
    tokens += ["-0.9007199254740993", "0.3333333333333333", "0.9982917904853821", "12.5", "-0.0", "0.1"]
    for column in (tokens, tokens[-3:]):
        columns = split_columns("".join(f"{t} x\n" for t in column), 2, source="x")
        assert columns is not None
        parsed = parse_floats(columns.matrix(0))
        assert parsed is not None
        assert parsed.view(np.int64).tolist() == np.array([float(t) for t in column]).view(np.int64).tolist()


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


def test_float_parser_rounds_decimals_next_to_halfway_points_as_float_does() -> None:
    """Decimals of 17-19 digits rounded from the exact midpoints between neighbouring doubles: an extended-precision
    quotient lands exactly on the midpoint for many, and rounding it again would be wrong for about half of those."""
    import math
    from decimal import Decimal, localcontext

    rng = np.random.default_rng(7)
    tokens = []
    with localcontext() as context:
        context.prec = 80
        for x in (rng.random(3000) * 9 + 1).tolist():
            middle = (Decimal(x) + Decimal(math.nextafter(x, 20))) / 2
            tokens += [format(middle.quantize(Decimal(1).scaleb(1 - digits)), "f") for digits in (17, 18, 19)]
    tokens += [f"-{t}" for t in tokens[:300]]
    columns = split_columns("".join(f"{t}\tx\n" for t in tokens), 2, source="x")
    assert columns is not None
    parsed = parse_floats(columns.matrix(0))
    assert parsed is not None
    expected = np.array([float(t) for t in tokens])
    assert parsed.view(np.int64).tolist() == expected.view(np.int64).tolist()
    once = np.array([np.longdouble(int(t.replace(".", ""))) / np.longdouble(10 ** (len(t) - 2)) for t in tokens[:900]])
    assert np.count_nonzero(once.astype(np.float64) != expected[:900]) > 0  # the case the check exists for


def test_float_parser_reads_long_mantissas_and_signs() -> None:
    rng = np.random.default_rng(3)
    tokens = [repr(v) for v in (rng.normal(size=2000) * 10.0 ** rng.integers(-6, 6, 2000)).tolist()]
    tokens += ["9999999999999999999", "0.9999999999999999999", "-1234567890.123456789", "+.5", "5.", "-0", "00000.1"]
    tokens += ["12345678901234567890", "1.2.3", "-", "+", ".", "1-2", "1e400", "nan", "-inf"]
    good = tokens[:-9]
    columns = split_columns("".join(f"{t} x\n" for t in good), 2, source="x")
    assert columns is not None
    parsed = parse_floats(columns.matrix(0))
    assert parsed is not None
    assert parsed.view(np.int64).tolist() == np.array([float(t) for t in good]).view(np.int64).tolist()
    for token in tokens[-9:]:
        columns = split_columns(f"{token} x\n", 2, source="x")
        assert columns is not None
        parsed = parse_floats(columns.matrix(0))
        try:
            expected = float(token)
        except ValueError:
            assert parsed is None, token
        else:
            assert parsed is not None and parsed.view(np.int64)[0] == np.float64(expected).view(np.int64), token


@pytest.mark.parametrize(
    "text",
    [
        "1\tQ0\td1\t1\t2.5\tt\n1\tQ0\td2\t2\t-0.125\tt\n",  # tabs: the separator path
        "1 Q0 d1 1 2.5 t\n1 Q0 d2 2 1 t",  # spaces, the last line without its newline
        "1 Q0 d1 1 2.5 t\n\n1 Q0 d2 2 1 t\n",  # a blank line: the general split
        "1 Q0 d1 1 2.5 t\r\n1 Q0 d2 2 1 t\r\n",  # CRLF
        "1  Q0 d1 1 2.5 t\n 1 Q0 d2 2 1 t \n",  # wider gaps, leading and trailing blanks
        "1 Q0 d1 1 2.5\x0bt\n1 Q0 d2 2 1\x1ft\n",  # other white space of str.split()
        "1 Q0 d1 1 2.5 t\n1 Q0 d2 2 1\n",  # a short line: declined
        "1 Q0 d1 1 2.5 t x\n1 Q0 d2\n",  # six tokens on the wrong lines: declined
        "1 Q0 d1 1 2.5 t\x00\n",  # a NUL: declined
    ],
)
def test_both_splits_agree_with_str_split(text: str) -> None:
    columns = split_columns(text.encode(), 6, source="x")
    lines = [(n, line.split()) for n, line in enumerate(text.split("\n"), 1) if line.split()]
    if "\x00" in text or any(len(parts) != 6 for _, parts in lines):
        assert columns is None
        return
    assert columns is not None
    assert [[str(columns.strings(j)[i]) for j in range(6)] for i in range(len(columns))] == [p for _, p in lines]
    assert columns.lines.tolist() == [n for n, _ in lines]


def test_byte_matrix_is_each_token_zero_padded_up_to_the_last_byte_of_the_file() -> None:
    """Tokens of 1 to 20 bytes (read 8 bytes at a time), the widest at the end of a file without a final newline."""
    tokens = [["x" * (1 + (row + col) % 20) for col in range(2)] for row in range(40)]
    text = "\n".join(" ".join(pair) for pair in tokens)
    columns = split_columns(text.encode(), 2, source="x")
    assert columns is not None
    for col in range(2):
        matrix = columns.matrix(col)
        assert matrix is not None and matrix.dtype == np.uint8 and matrix.flags["C_CONTIGUOUS"]
        assert matrix.shape == (40, 20)
        assert [bytes(row).rstrip(b"\0").decode() for row in matrix] == [pair[col] for pair in tokens]
        assert all(not row[len(pair[col]) :].any() for row, pair in zip(matrix, tokens, strict=True))


@pytest.mark.parametrize("seed", range(12))
def test_string_order_is_a_stable_argsort(seed: int) -> None:
    """Packed ASCII words sort as numpy sorts the strings: prefixes first, repeats in their order, every width
    around the 8-character words, and non-ASCII, object and too-wide arrays through np.argsort itself."""
    rng = np.random.default_rng(seed)
    alphabet = np.array(list("ab_0Z~ \t"))
    n = int(rng.integers(0, 400))
    width = int(rng.integers(1, 30))
    words = ["".join(rng.choice(alphabet, int(rng.integers(0, width + 1)))) for _ in range(n)]
    words += [w[: int(rng.integers(0, len(w) + 1))] for w in words[:20]]  # prefixes of others
    words += words[:10]  # repeats: the stable order keeps them as they stand
    arrays = [np.array(words, dtype=str), np.array([w + "\u00e9" for w in words]), np.array(words, dtype=object)]
    arrays += [np.array(["x" * k for k in (0, 7, 8, 9, 16, 17, 24, 25)] * 3)[rng.permutation(24)]]
    for values in arrays:
        if len(values) == 0:
            continue
        expected = np.argsort(values, kind="stable")
        got = string_order(values)
        assert got.dtype == np.int64
        assert got.tolist() == expected.tolist()

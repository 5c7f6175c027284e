"""The hand-written speed layer of the evaluation core: numpy replacements for Python dicts and per-token loops.

Everything here is an optimisation of something plain: `hashing` (vectorised string hashes, grouping by one sort,
`KeyTable`, a numpy hash table) stands in for dicts of strings; `columns` (a whitespace tokenizer, integer and float
parsers over code-point buffers) stands in for `str.split` and `float()`. The grader's fast path, built on `hashing`,
lives beside the grader it stands in for (app.evaluation.grading.fast_path) under the same contract. The contract of
the whole layer: a fast function either gives exactly what its plain reference gives (tests/evaluation/reference.py,
test_fast.py, test_speed_paths.py and test_grading.py compare them on random and odd inputs) or declines (returns
None) and the caller takes the plain path. Hashes only ever propose: every match is checked against the strings, so
a collision costs time, never a wrong grade.
"""

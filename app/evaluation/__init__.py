"""Pure numeric core (numpy/scipy only), in layers importing downwards only (import-linter contracts in pyproject).

At the top level, the data model everything works on: `records` (RunTable, Qrels), `results` (Results), `errors`
(FormatError, MeasureError, decode_utf8) and `ordering` (the ranking rule). Below them nothing; above them `fast`
(the speed layer), then `formats` (parsers), `grading` (grade matrices), `moments`, then `measures` (and `evaluate`),
`pools`, `output` (printers), then `statistics` and the `trec_eval` drop-in, and `analyses` on top.
"""

"""Printers of results: trec_eval-style text, JSON and CSV (`writers`) and sample_eval.pl's report (`sample_eval`).

trec_eval's own report, line for line, is printed by the drop-in in app.evaluation.trec_eval.report.
"""

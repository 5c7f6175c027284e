"""Measures: trec_eval's (`trec`) and sample_eval's inferred ones (`inferred`) as reductions over a GradeMatrix, the
registry naming them with parameters, descriptions and references (`registry`), and `evaluate`: many runs x topics x
measures at once, the core's entry point for scores (moment runs have theirs in app.evaluation.moments.evaluate).
"""

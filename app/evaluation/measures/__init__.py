"""Measures: trec_eval's (`trec`) and sample_eval's inferred ones (`inferred`) as reductions over a GradeMatrix, and
the registry naming them with parameters, descriptions and references (`registry`).
"""

"""From ranked runs to grade matrices, the arrays every measure reduces over.

`run_order` (a run's rows in trec_eval's ranking order, worked out once per table), `prepared_runs` (runs sorted and
cut once as integer (topic, doc) pair ids, for grading against many qrels), `grade_matrix` (`GradeMatrix` and the
one grader, `grade_matrix(prepare_runs(runs), qrels)`) and `fast_path` (`grade_runs`: the same matrix from parsed
tables by a hashed look-up of the qrels' keys, or None to take the grader).
"""

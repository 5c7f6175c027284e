"""`trecpool trec_eval`: a drop-in for NIST trec_eval 10.0 on qrels and TREC run files, its output byte for byte.

`options` reads trec_eval's command line (getopt_long's rules: clustered and glued short options, long options and
their unique prefixes, operands anywhere); `table` is trec_eval's measure table (names, parameters, nicknames such as
all_trec and official, how each measure prints); `engine` evaluates every requested measure per topic with the
measure functions of `app.evaluation.measures.trec` (trec_eval's arithmetic, all topics at once); `report` prints
trec_eval's lines. `main` ties them together for the command.
"""

from app.evaluation.trec_eval.main import main

__all__ = ["main"]

"""trecpool: pooled-judgement evaluation campaigns, TREC/TRECVID style."""

__version__ = "0.1.0"

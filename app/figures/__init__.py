"""Figures (matplotlib, Agg backend) drawn from the plain data results are stored and served as."""

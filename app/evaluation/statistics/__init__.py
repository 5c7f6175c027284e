"""Statistics over scores and judgements: significance tests between runs (`significance`), assessor agreement
(`agreement`: Cohen's kappa, judgement quality rules) and the campaign report's summaries (`campaign_summary`).
"""

"""Pools: depth-k and stratified (TRECVID) pools over many runs, reproducible from a seed (`builders`), and joint
(topic, doc) string keys for set operations (`keys`).
"""

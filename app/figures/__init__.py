"""Every figure the product draws (report and leaderboard SVGs, analysis figures), from plain data.

Figures are `matplotlib.figure.Figure` objects drawn with the object-oriented API, never `matplotlib.pyplot`: no
global figure registry, so handlers in the thread pool can draw at once. Callers import these modules only when a
figure is drawn, which keeps matplotlib out of the command line's start-up.
"""

"""Automatic judges as assessor clients: the batch client, the built-in judges (simulated, OpenAI-compatible chat).

A judge is a plain function `judge(items, **options) -> verdicts` over the batch API's items (what a person sees:
topic, title, description, media and keyframe URLs, the shot's span; never runs, ranks or other verdicts); it talks
to the server only through `client.py`, over HTTP, so it imports nothing of the server side.
"""

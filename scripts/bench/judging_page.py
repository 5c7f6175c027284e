"""Judging page benchmark: a real browser judges shots with the keyboard; time from key press to the next shot.

Starts the service in its own process on a free loopback port (DATABASE_URL, else an embedded PostgreSQL) and a
media server on another loopback port (byte ranges, as a real media host answers), sets up through the API a closed
campaign whose collection points at that media host, a depth pool and one assessor, then opens the assessor's
judging link in Debian's chromium (Playwright, /usr/bin/chromium) and judges --verdicts shots by key presses, waiting
--think-ms after each shot starts playing (an assessor watches before judging).

For every key press it prints, from the keydown event (measured in the page):
  shown     the next shot's topic and id are on the page
  playable  the shown shot's <video> is playing with data ahead (readyState >= HAVE_FUTURE_DATA, not paused, not
            seeking): the target is p95 < 100 ms
  playing   the media element's `playing` event (frames or samples are moving)
and the API requests the page made per verdict.

--media wav serves silent WAV files (played by <video> like a video without pictures); --media webm serves VP8 WebM
videos encoded in the browser itself (WebCodecs), with pictures, as the keyframe strip needs.

    .venv/bin/python scripts/bench/judging_page.py [--verdicts 40] [--think-ms 1500] [--media wav|webm]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
from judging import organiser_token, serve, wait_until_up
from serving import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.web.judging_media import KEY_TO_PLAYABLE, MediaServer, encode_webm, silence_wav  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
VIDEO_SECONDS, SHOT_SECONDS, N_VIDEOS = 60, 3, 12


def make_media(kind: str, browser: object) -> tuple[MediaServer, str]:
    """A loopback media host with a file for every video of the collection; (the host, the file extension)."""
    media = MediaServer()
    if kind == "wav":
        wav = silence_wav(VIDEO_SECONDS)
        media.files.update({f"v{v}.wav": (wav, "audio/wav") for v in range(N_VIDEOS)})
        return media, "wav"
    media.files["blank"] = (b"<!doctype html><title>encoder</title>", "text/html")
    for v in range(N_VIDEOS):
        media.files[f"v{v}.webm"] = (encode_webm(browser, f"{media.base}/blank", VIDEO_SECONDS, seed=v), "video/webm")
    return media, "webm"


def set_up(http: httpx.Client, media_base: str, ext: str, verdicts: int) -> tuple[str, int]:
    """Campaign, collection, runs, pool, assessor and a judging link through the API; (link path, items)."""
    name = f"bench-judging-page-{time.time_ns()}"
    campaign = http.post("/api/campaigns", json={"name": name, "task_kind": "shots", "max_results": 1000})
    campaign.raise_for_status()
    cid = campaign.json()["id"]
    http.post(f"/api/campaigns/{cid}/topics", json=[{"number": "1", "title": "a person opening a door"}])
    per_video = VIDEO_SECONDS // SHOT_SECONDS
    msr = "".join(
        f"v{v}_{s}\tv{v}\t{s * SHOT_SECONDS}\t{(s + 1) * SHOT_SECONDS}\n"
        for v in range(N_VIDEOS)
        for s in range(per_video)
    )
    http.put(
        f"/api/campaigns/{cid}/collection",
        files={"file": ("msr.tsv", msr.encode())},
        data={"media_url_template": f"{media_base}/{{video_id}}.{ext}"},
    ).raise_for_status()
    http.post(f"/api/campaigns/{cid}/open").raise_for_status()
    team = http.post(f"/api/campaigns/{cid}/teams", json={"name": "bench"}).json()["id"]
    rng = np.random.default_rng(3)
    shots = [f"v{v}_{s}" for v in range(N_VIDEOS) for s in range(1, per_video - 1)]  # not the first or last shot
    depth = verdicts + 5
    for r in range(2):
        ranked = rng.permutation(shots)[:depth]
        lines = "".join(f"1 Q0 {s} {k + 1} {depth - k} run{r}\n" for k, s in enumerate(ranked))
        http.post(
            f"/api/campaigns/{cid}/runs", data={"name": f"run{r}", "team_id": str(team)}, files={"file": ("r", lines)}
        ).raise_for_status()
    http.post(f"/api/campaigns/{cid}/close").raise_for_status()
    pool = http.post(f"/api/campaigns/{cid}/pools", json={"kind": "depth", "depth": depth, "seed": 1})
    pool.raise_for_status()
    assessor = http.post(f"/api/campaigns/{cid}/assessors", json={"name": "bench"}).json()["id"]
    http.post(
        f"/api/pools/{pool.json()['id']}/assignments", json={"assignments": [{"topic": "1", "assessor_id": assessor}]}
    ).raise_for_status()
    url = http.post(f"/api/assessors/{assessor}/judge-link").json()["judge_url"]
    return url[url.index("/judge") :], int(pool.json()["topics"][0]["sampled"])


def describe(name: str, values: list[float]) -> str:
    """One line of percentiles in milliseconds."""
    if not values:
        return f"{name:<9} no samples"
    ms = np.asarray(values)
    p50, p95 = np.percentile(ms, [50, 95])
    return f"{name:<9} n={len(ms):>4}  p50={p50:7.1f} ms  p95={p95:7.1f} ms  max={ms.max():7.1f} ms"


def judge_in_browser(browser: object, base: str, link: str, args: argparse.Namespace) -> None:
    """Open the judging link and judge by key presses; print the timings."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    page.add_init_script(KEY_TO_PLAYABLE)
    api_calls: list[str] = []
    page.on("request", lambda r: api_calls.append(r.method + " " + r.url) if "/api/judging/" in r.url else None)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base}{link}")
    page.wait_for_function("() => { const i = document.getElementById('item'); return i && !i.hidden; }")
    keys = ["n", "n", "r", "n", "u"]
    per_verdict: list[int] = []
    for k in range(args.verdicts):
        if not page.is_hidden("#message") and "All done" in (page.text_content("#message") or ""):
            break
        time.sleep(args.think_ms / 1000)
        before = len(api_calls)
        page.keyboard.press(keys[k % len(keys)])
        page.wait_for_function(
            "() => { const m = window.__judgingMarks; const r = m[m.length - 1];"
            " return !document.getElementById('message').hidden || (r.playable !== null && r.playing !== null); }",
            timeout=20_000,
        )
        time.sleep(0.3)  # let the verdict's requests finish before counting them
        per_verdict.append(len(api_calls) - before)
    marks = page.evaluate("window.__judgingMarks")
    page.close()
    marks = [m for m in marks if m["shown"] is not None][args.skip :]
    print(f"{len(marks)} key presses measured (the first {args.skip} left out), think time {args.think_ms:g} ms")
    print(describe("shown", [m["shown"] for m in marks]))
    print(describe("playable", [m["playable"] for m in marks if m["playable"] is not None]))
    print(describe("playing", [m["playing"] for m in marks if m["playing"] is not None]))
    print(f"API requests per verdict: {sorted(set(per_verdict))} (mean {np.mean(per_verdict):.2f})")
    p95 = float(np.percentile([m["playable"] for m in marks if m["playable"] is not None] or [np.inf], 95))
    print(f"key to playable p95 target < 100 ms: {'met' if p95 < 100 else 'NOT met'} ({p95:.1f} ms)")
    if errors:
        print(f"page errors: {errors[:3]}")


def main() -> None:
    """Set up, judge in the browser, print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=int, default=40)
    parser.add_argument("--think-ms", type=float, default=1500, help="pause after a shot plays before the next key")
    parser.add_argument("--skip", type=int, default=2, help="first key presses left out (warm-up)")
    parser.add_argument("--media", choices=["wav", "webm"], default="wav")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from app.storage import migrations
    from app.storage.database import start_embedded

    url = os.environ.get("DATABASE_URL") or start_embedded(Path(tempfile.mkdtemp(prefix="trecpool-bench-")))
    migrations.upgrade(url)
    token = organiser_token(url)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = multiprocessing.get_context("spawn").Process(target=serve, args=(url, port))
    server.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            began = time.perf_counter()
            media, ext = make_media(args.media, browser)
            print(f"media: {N_VIDEOS} {ext} files of {VIDEO_SECONDS} s in {time.perf_counter() - began:.1f} s")
            wait_until_up(base, server)
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
                link, n_items = set_up(http, media.base, ext, args.verdicts)
            print(f"{n_items} shots to judge; media from {media.base} ({os.cpu_count()} cores)")
            judge_in_browser(browser, base, link, args)
            browser.close()
            media.close()
    finally:
        server.terminate()
        server.join(timeout=10)


if __name__ == "__main__":
    main()

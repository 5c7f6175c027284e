"""Media for the judging page's browser tests and benchmark: a loopback media host answering byte ranges, silent WAV
files, and real VP8 WebM videos (frames encoded by the browser's WebCodecs, put in a WebM container here)."""

from __future__ import annotations

import base64
import http.server
import io
import struct
import threading
import wave
from typing import Any


def silence_wav(seconds: int, rate: int = 8000) -> bytes:
    """A silent mono WAV: a <video> element plays it like a video without pictures."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        out.writeframes(b"\x80" * (seconds * rate))
    return buffer.getvalue()


# A script installed before the judging page's own (Playwright's add_init_script): per verdict key press, the
# milliseconds from the keydown event until the next shot is shown (#item's data-task changed), playable (the visible
# <video> has data ahead, is not paused and not seeking) and playing (its `playing` event); in window.__judgingMarks.
KEY_TO_PLAYABLE = """
(() => {
  const marks = [];
  window.__judgingMarks = marks;
  const visibleVideo = () => [...document.querySelectorAll('video')].find((v) => v.getClientRects().length > 0);
  let pending = null;
  const check = () => {
    const rec = pending;
    if (!rec) return;
    const now = performance.now();
    const item = document.getElementById('item');
    const task = item && !item.hidden ? item.dataset.task : undefined;
    if (rec.shown === null && task !== undefined && task !== rec.before) { rec.shown = now - rec.t0; rec.task = task; }
    if (rec.shown !== null && rec.playable === null) {
      const v = visibleVideo();
      if (v && v.readyState >= 3 && !v.paused && !v.seeking) rec.playable = now - rec.t0;
    }
    if (rec.playable !== null && rec.playing !== null) pending = null;
    else if (now - rec.t0 > 15000) pending = null;
  };
  document.addEventListener('keydown', (event) => {
    if (!'rnu01'.includes(event.key)) return;
    const item = document.getElementById('item');
    pending = { key: event.key, t0: event.timeStamp, before: item ? item.dataset.task : undefined,
                shown: null, playable: null, playing: null, task: null };
    marks.push(pending);
  }, true);
  for (const type of ['playing', 'canplay', 'seeked', 'play', 'loadeddata', 'timeupdate']) {
    document.addEventListener(type, (event) => {
      const rec = pending;
      if (rec && type === 'playing' && rec.shown !== null && rec.playing === null && event.target === visibleVideo()) {
        rec.playing = performance.now() - rec.t0;
      }
      check();
    }, true);
  }
  new MutationObserver(check).observe(document, { subtree: true, attributes: true, childList: true });
  setInterval(check, 2);
})();
"""


class _MediaHandler(http.server.BaseHTTPRequestHandler):
    """GET /<name>: one of the server's files, whole or a byte range (206), as media hosts answer."""

    server: MediaServer

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        """Serve a whole file or one byte range of it."""
        name = self.path.lstrip("/").split("?")[0]
        self.server.requests.append(name)
        found = self.server.files.get(name)
        if found is None:
            self.send_error(404)
            return
        body, content_type = found
        wanted = self.headers.get("Range", "")
        begin, stop, status = 0, len(body) - 1, 200
        if wanted.startswith("bytes="):
            first, _, last = wanted.removeprefix("bytes=").split(",")[0].partition("-")
            begin, stop, status = int(first or 0), min(int(last) if last else len(body) - 1, len(body) - 1), 206
        self.send_response(status)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(stop - begin + 1))
        self.send_header("Cache-Control", "public, max-age=3600")
        if status == 206:
            self.send_header("Content-Range", f"bytes {begin}-{stop}/{len(body)}")
        self.end_headers()
        try:
            self.wfile.write(body[begin : stop + 1])
        except (BrokenPipeError, ConnectionResetError):  # the player drops reads it no longer needs
            pass

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the standard library's name)
        """Quiet."""


class MediaServer(http.server.ThreadingHTTPServer):
    """A media host on a free loopback port serving in-memory files (name -> (bytes, content type))."""

    daemon_threads = True

    def __init__(self, files: dict[str, tuple[bytes, str]] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _MediaHandler)
        self.files: dict[str, tuple[bytes, str]] = dict(files or {})
        self.requests: list[str] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def base(self) -> str:
        """The host's base URL."""
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        """Stop serving."""
        self.shutdown()
        self.server_close()


# ---- WebM (Matroska) writing: just what a player needs to play and seek one VP8 track ------------------------------


def serve_with_ranges(route, body: bytes) -> None:  # type: ignore[no-untyped-def]
    """Answer a Playwright-routed media request with byte ranges, as media hosts do (so that the player can seek)."""
    wanted = route.request.headers.get("range", "")
    headers = {"Accept-Ranges": "bytes", "Content-Type": "audio/wav"}
    if not wanted.startswith("bytes="):
        route.fulfill(status=200, body=body, headers=headers)
        return
    first, _, last = wanted.removeprefix("bytes=").split(",")[0].partition("-")
    begin, stop = int(first or 0), min(int(last) if last else len(body) - 1, len(body) - 1)
    headers["Content-Range"] = f"bytes {begin}-{stop}/{len(body)}"
    route.fulfill(status=206, body=body[begin : stop + 1], headers=headers)


def _size(n: int) -> bytes:
    """An EBML element size, always in 8 bytes (so that sizes never change the layout)."""
    return bytes([0x01]) + n.to_bytes(7, "big")


def _element(element_id: int, payload: bytes) -> bytes:
    """An EBML element: its id, its size, its payload."""
    return element_id.to_bytes((element_id.bit_length() + 7) // 8, "big") + _size(len(payload)) + payload


def _uint(element_id: int, value: int, width: int | None = None) -> bytes:
    """An unsigned integer element (minimal width unless given)."""
    width = width or max(1, (value.bit_length() + 7) // 8)
    return _element(element_id, value.to_bytes(width, "big"))


def mux_webm(frames: list[tuple[int, bool, bytes]], width: int, height: int, duration_ms: float) -> bytes:
    """A WebM file of one VP8 track from (timestamp in ms, keyframe?, frame bytes), with a cluster per keyframe and
    cues to every cluster (so that a player seeks without reading the whole file)."""
    info = _element(
        0x1549A966,
        _uint(0x2AD7B1, 1_000_000)  # timecodes in milliseconds
        + _element(0x4489, struct.pack(">d", duration_ms))
        + _element(0x4D80, b"trecpool tests")
        + _element(0x5741, b"trecpool tests"),
    )
    video = _element(0xE0, _uint(0xB0, width) + _uint(0xBA, height))
    track = _element(0xAE, _uint(0xD7, 1) + _uint(0x73C5, 1) + _uint(0x83, 1) + _element(0x86, b"V_VP8") + video)
    tracks = _element(0x1654AE6B, track)
    clusters: list[tuple[int, bytes]] = []
    for time, key, data in frames:
        if key or not clusters:
            clusters.append((time, b""))
        start, blocks = clusters[-1]
        block = b"\x81" + struct.pack(">h", time - start) + (b"\x80" if key else b"\x00") + data
        clusters[-1] = (start, blocks + _element(0xA3, block))
    cluster_bytes = [_element(0x1F43B675, _uint(0xE7, start) + blocks) for start, blocks in clusters]

    def seek_head(positions: list[tuple[int, int]]) -> bytes:
        """Where Info, Tracks and Cues are (positions in 8 bytes, so its size never depends on them)."""
        entries = b"".join(
            _element(0x4DBB, _element(0x53AB, element_id.to_bytes(4, "big")) + _uint(0x53AC, pos, 8))
            for element_id, pos in positions
        )
        return _element(0x114D9B74, entries)

    head_size = len(seek_head([(0, 0)] * 3))
    info_at = head_size
    tracks_at = info_at + len(info)
    cluster_at = tracks_at + len(tracks)
    cues, position = b"", cluster_at
    for (start, _), data in zip(clusters, cluster_bytes, strict=True):
        where = _element(0xB7, _uint(0xF7, 1) + _uint(0xF1, position))
        cues += _element(0xBB, _uint(0xB3, start) + where)
        position += len(data)
    cues = _element(0x1C53BB6B, cues)
    head = seek_head([(0x1549A966, info_at), (0x1654AE6B, tracks_at), (0x1C53BB6B, position)])
    segment = _element(0x18538067, head + info + tracks + b"".join(cluster_bytes) + cues)
    ebml = _element(
        0x1A45DFA3,
        _uint(0x4286, 1)
        + _uint(0x42F7, 1)
        + _uint(0x42F2, 4)
        + _uint(0x42F3, 8)
        + _element(0x4282, b"webm")
        + _uint(0x4287, 2)
        + _uint(0x4285, 2),
    )
    return ebml + segment


# The frames: a colour per 3-second shot (so that keyframes of different shots differ), the time written on each
# frame and a moving bar; VP8 in the browser's WebCodecs (a secure context: a loopback page), a keyframe a second.
_ENCODE = """
async ({ seconds, fps, width, height, seed }) => {
  const chunks = [];
  let failure = null;
  const encoder = new VideoEncoder({
    output: (chunk) => {
      const bytes = new Uint8Array(chunk.byteLength);
      chunk.copyTo(bytes);
      let text = "";
      for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192));
      chunks.push([Math.round(chunk.timestamp / 1000), chunk.type === "key", btoa(text)]);
    },
    error: (error) => { failure = String(error); },
  });
  encoder.configure({ codec: "vp8", width, height, bitrate: 400000, framerate: fps });
  const canvas = new OffscreenCanvas(width, height);
  const ctx = canvas.getContext("2d");
  for (let f = 0; f < seconds * fps; f += 1) {
    const t = f / fps;
    ctx.fillStyle = `hsl(${(seed * 47 + Math.floor(t / 3) * 67) % 360} 65% 45%)`;
    ctx.fillRect(0, 0, width, height);
    ctx.fillStyle = "#fff";
    ctx.font = `${Math.round(height / 6)}px sans-serif`;
    ctx.fillText(`v${seed}  ${t.toFixed(1)} s`, width / 20, height / 4);
    ctx.fillRect(((f * 9) % (width - 40)), height - height / 6, 40, height / 12);
    const frame = new VideoFrame(canvas, { timestamp: Math.round(t * 1e6), duration: Math.round(1e6 / fps) });
    encoder.encode(frame, { keyFrame: f % fps === 0 });
    frame.close();
    if (encoder.encodeQueueSize > 30) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  await encoder.flush();
  encoder.close();
  if (failure) throw new Error(failure);
  return chunks;
}
"""


def encode_webm(
    browser: Any, secure_url: str, seconds: int, *, seed: int = 0, fps: int = 10, size: tuple[int, int] = (320, 180)
) -> bytes:
    """A VP8 WebM video of `seconds`, its frames encoded by `browser` on a page at `secure_url` (a loopback URL)."""
    page = browser.new_page()
    try:
        page.goto(secure_url)
        width, height = size
        chunks = page.evaluate(
            _ENCODE, {"seconds": seconds, "fps": fps, "width": width, "height": height, "seed": seed}
        )
    finally:
        page.close()
    frames = [(int(t), bool(key), base64.b64decode(data)) for t, key, data in chunks]
    return mux_webm(frames, width, height, seconds * 1000.0)

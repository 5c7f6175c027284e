/* The moment marking page: a shell over /api/moment-judging. Keyboard first, mouse too; it never sees runs or ranks. */
(() => {
  "use strict";

  const TOKEN_KEY = "trecpool.markToken";
  const $ = (id) => document.getElementById(id);
  const state = {
    token: null,
    item: null, // the item on screen
    segments: [], // [[start, end], ...] marked on it
    selected: -1, // index into segments, -1 when none is selected
    pendingStart: null, // a start set with [ waiting for its end
    playhead: 0,
    view: [0, 1], // the seconds the timeline shows
    duration: null, // the media's length once known
    history: [], // items marked in this session, oldest first
    back: -1, // -1 on the queue's item, k >= 0 on history[k]
    shownAt: 0,
    inflight: 0,
    drag: null,
  };

  const { ApiError, takeToken: takeLinkToken, request } = window.trecpoolAssessor;
  const takeToken = () => takeLinkToken(TOKEN_KEY);

  async function api(method, path, body) {
    state.inflight += 1;
    setBusy();
    try {
      return await request(state.token, method, path, body);
    } finally {
      state.inflight -= 1;
      setBusy();
    }
  }

  function setBusy() {
    $("main").setAttribute("aria-busy", state.inflight > 0 ? "true" : "false");
  }

  function say(text) {
    $("status").textContent = text;
  }

  function fatal(text) {
    $("item").hidden = true;
    $("message").textContent = text;
    $("message").hidden = false;
  }

  const round = (t) => Math.round(t * 10) / 10;
  const fmt = (t) => t.toFixed(1);

  function maxTime() {
    return state.duration !== null ? state.duration : state.view[1];
  }

  function setView() {
    const item = state.item;
    const context = Math.max(15, 2 * (item.end - item.start));
    const lo = Math.max(0, item.start - context);
    let hi = item.end + context;
    for (const [, e] of state.segments) hi = Math.max(hi, e);
    if (state.duration !== null) hi = Math.min(Math.max(hi, item.end), state.duration);
    state.view = [lo, Math.max(hi, lo + 1)];
  }

  function pct(t) {
    const [lo, hi] = state.view;
    return `${((Math.min(Math.max(t, lo), hi) - lo) / (hi - lo)) * 100}%`;
  }

  function place(el, s, e) {
    el.style.left = pct(s);
    el.style.width = `calc(${pct(e)} - ${pct(s)})`;
  }

  function render() {
    const item = state.item;
    if (!item) return;
    place($("proposal-bar"), item.start, item.end);
    const box = $("segments");
    box.replaceChildren();
    const list = $("segment-list");
    list.replaceChildren();
    state.segments.forEach(([s, e], i) => {
      const bar = document.createElement("div");
      bar.className = "segment" + (i === state.selected ? " selected" : "");
      bar.dataset.index = String(i);
      const left = document.createElement("span");
      left.className = "edge left";
      left.dataset.edge = "0";
      const right = document.createElement("span");
      right.className = "edge right";
      right.dataset.edge = "1";
      bar.append(left, right);
      place(bar, s, e);
      box.append(bar);
      const li = document.createElement("li");
      li.textContent = `${fmt(s)} – ${fmt(e)} s`;
      if (i === state.selected) li.className = "selected";
      list.append(li);
    });
    const draft = $("draft");
    if (state.drag && state.drag.kind === "new") {
      draft.hidden = false;
      place(draft, Math.min(state.drag.t0, state.drag.t1), Math.max(state.drag.t0, state.drag.t1));
    } else if (state.pendingStart !== null) {
      draft.hidden = false;
      place(draft, Math.min(state.pendingStart, state.playhead), Math.max(state.pendingStart, state.playhead));
    } else {
      draft.hidden = true;
    }
    $("playhead").style.left = pct(state.playhead);
    $("playhead-text").textContent = fmt(state.playhead);
    $("timeline").setAttribute("aria-valuenow", fmt(state.playhead));
    $("tick-start").textContent = `${fmt(state.view[0])} s`;
    $("tick-end").textContent = `${fmt(state.view[1])} s`;
  }

  function seek(t) {
    state.playhead = round(Math.min(Math.max(t, 0), maxTime()));
    const video = $("video");
    if (video.readyState > 0 && !$("video").hidden) video.currentTime = state.playhead;
    render();
  }

  function show(item, going_back) {
    state.item = item;
    state.segments = (item.segments || []).map(([s, e]) => [s, e]);
    state.selected = -1;
    state.pendingStart = null;
    state.duration = null;
    state.shownAt = performance.now();
    $("item").dataset.item = String(item.item_id);
    $("topic-number").textContent = item.topic;
    $("topic-text").textContent = item.topic_title;
    $("topic-description").textContent = item.topic_description || "";
    $("video-id").textContent = item.video_id;
    $("proposal").textContent = `${fmt(item.start)} – ${fmt(item.end)} s`;
    $("going-back").hidden = !going_back;
    $("placeholder-video").textContent = item.video_id;
    $("placeholder-text").textContent = "No video";
    const video = showVideo(item.media_url);
    if (video.getAttribute("src") && video.readyState > 0 && Number.isFinite(video.duration)) {
      state.duration = video.duration; // loaded already (preloaded, or the same video as the item before)
    }
    setView();
    state.playhead = round(item.start);
    if (video.getAttribute("src") && video.readyState > 0) video.currentTime = state.playhead;
    $("message").hidden = true;
    $("item").hidden = false;
    render();
    $("timeline").focus();
  }

  /** The <video> that shows `url`: the shown one when it holds it already, the preloaded one swapped in when that
   * holds it (the ids move with the roles: #video is shown, #video-next preloads), else the shown one loading it. */
  function showVideo(url) {
    let video = $("video");
    const spare = $("video-next");
    video.pause();
    if (url && video.getAttribute("src") !== url && spare.getAttribute("src") === url && !spare.error) {
      video.hidden = true;
      video.id = "video-swap";
      spare.id = "video";
      video.id = "video-next";
      video = spare;
    }
    if (!url) {
      video.removeAttribute("src");
      video.hidden = true;
      $("placeholder").hidden = false;
      return video;
    }
    video.hidden = false;
    $("placeholder").hidden = true;
    if (video.getAttribute("src") !== url || video.error) video.src = url;
    return video;
  }

  /** Load the next item's video in the hidden player while this one is marked (the answer's next_media_url). */
  function preload(url) {
    const spare = $("video-next");
    if (!url || url === $("video").getAttribute("src") || (spare.getAttribute("src") === url && !spare.error)) return;
    spare.src = url;
  }

  async function refreshProgress() {
    const p = await api("GET", "/api/moment-judging/progress");
    $("progress").max = Math.max(p.total, 1);
    $("progress").value = p.marked;
    $("progress-text").textContent = `${p.marked} of ${p.total} marked`;
  }

  async function loadNext() {
    state.back = -1;
    const item = await api("POST", "/api/moment-judging/next");
    await refreshProgress();
    if (item === null) {
      state.item = null;
      delete $("item").dataset.item;
      fatal("All done: every proposed segment of your topics is marked. Thank you!");
      return;
    }
    show(item, false);
    preload(item.next_media_url);
  }

  async function submit(segments) {
    const item = state.item;
    if (!item || state.inflight > 0) return;
    const back = state.back >= 0;
    const body = {
      segments: segments.map(([start, end]) => ({ start, end })),
      seconds_spent: Math.round((performance.now() - state.shownAt) / 100) / 10,
      change: back, // marks are changed only by going back to them: two tabs never overwrite each other
    };
    try {
      await api("POST", `/api/moment-judging/items/${item.item_id}`, body);
    } catch (error) {
      if (error instanceof ApiError && error.status === 409 && !back) return markedElsewhere(item);
      say(`Not saved: ${error.message}`);
      return;
    }
    if (state.back < 0 && !state.history.includes(item.item_id)) state.history.push(item.item_id);
    const what = segments.length ? `${segments.length} moment${segments.length > 1 ? "s" : ""}` : "none relevant";
    await loadNext();
    say(`Saved: ${what} (video ${item.video_id})`);
  }

  /** The item was marked already, in another tab or window: say so with the stored marks, and go on (B reaches it). */
  async function markedElsewhere(item) {
    const stored = await api("GET", `/api/moment-judging/items/${item.item_id}`).catch(() => null);
    const marks = stored && stored.segments ? stored.segments : null;
    const what = marks === null ? "" : marks.length ? ` (${marks.map(([s, e]) => `${fmt(s)} – ${fmt(e)} s`).join(", ")})`
      : " (none relevant)";
    if (!state.history.includes(item.item_id)) state.history.push(item.item_id);
    await loadNext();
    say(`Not saved: video ${item.video_id} was already marked in another tab or window${what}. `
      + "Press B to go back to it and change the marks.");
  }

  async function goBack() {
    if (!state.history.length) return say("Nothing to go back to yet.");
    state.back = state.back < 0 ? state.history.length - 1 : Math.max(0, state.back - 1);
    const back = state.back;
    const item = await api("GET", `/api/moment-judging/items/${state.history[back]}`);
    show(item, true);
    state.back = back;
    say("Going back: change your marks and submit again.");
  }

  function addSegment(s, e) {
    state.segments.push([round(s), round(e)]);
    state.segments.sort((a, b) => a[0] - b[0]);
    state.selected = state.segments.findIndex(([a, b]) => a === round(s) && b === round(e));
    state.pendingStart = null;
    setView();
    render();
  }

  function setStart() {
    const t = state.playhead;
    if (state.selected >= 0) {
      const seg = state.segments[state.selected];
      if (t >= seg[1]) return say("A start must come before its end.");
      seg[0] = t;
      say(`Start moved to ${fmt(t)} s`);
    } else {
      state.pendingStart = t;
      say(`Start at ${fmt(t)} s: move the playhead and press ] for the end`);
    }
    render();
  }

  function setEnd() {
    const t = state.playhead;
    if (state.selected >= 0) {
      const seg = state.segments[state.selected];
      if (t <= seg[0]) return say("An end must come after its start.");
      seg[1] = t;
      say(`End moved to ${fmt(t)} s`);
      return render();
    }
    if (state.pendingStart === null) return say("Set a start first with [");
    if (t <= state.pendingStart) return say("An end must come after its start.");
    const s = state.pendingStart;
    addSegment(s, t);
    say(`Marked ${fmt(s)} – ${fmt(t)} s`);
  }

  /** What a media load error says: the host that did not answer (the page cannot tell a missing file from it). */
  function unreachable(src) {
    let host = src;
    try {
      host = new URL(src, location.href).host;
    } catch (error) {
      // an unparsable address is named as it is
    }
    return `The media host ${host} is unreachable`;
  }

  function toggleHelp() {
    const help = $("help");
    if (help.open) help.close();
    else help.showModal();
  }

  function togglePlay() {
    const video = $("video");
    if (video.hidden || video.readyState === 0) return say("No video to play");
    if (video.paused) video.play().catch(() => say("The video cannot play here"));
    else video.pause();
  }

  function replay() {
    if (!state.item) return;
    seek(state.item.start);
    const video = $("video");
    if (!video.hidden && video.readyState > 0) video.play().catch(() => say("The video cannot play here"));
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key;
    if (key === "?") {
      toggleHelp();
      event.preventDefault();
      return;
    }
    if ($("help").open) return; // the dialog's own keys (Esc, Tab, Enter on Close)
    if (!state.item) {
      if ((key === "b" || key === "B") && state.inflight === 0) goBack(); // back from "all done"
      return;
    }
    const step = event.shiftKey ? 0.1 : 1;
    if (key === "ArrowLeft") seek(state.playhead - step);
    else if (key === "ArrowRight") seek(state.playhead + step);
    else if (key === "[") setStart();
    else if (key === "]") setEnd();
    else if (key === "a" || key === "A") {
      addSegment(state.item.start, state.item.end);
      say("Proposal accepted: adjust it with [ and ] or submit");
    } else if (key === "Tab" && state.segments.length) {
      state.selected = (state.selected + 1) % state.segments.length;
      render();
    } else if (key === "Escape") {
      state.selected = -1;
      state.pendingStart = null;
      render();
    } else if (key === "Delete" || key === "Backspace") {
      if (state.selected >= 0) state.segments.splice(state.selected, 1);
      state.selected = -1;
      render();
    } else if (key === "Enter") {
      if (!state.segments.length) say("No moment marked: press N if none is relevant");
      else submit(state.segments);
    } else if (key === "n" || key === "N") submit([]);
    else if (key === "b" || key === "B") goBack();
    else if (key === "r" || key === "R") replay();
    else if (key === " ") togglePlay();
    else return;
    event.preventDefault();
  }

  function timeAt(event) {
    const box = $("timeline").getBoundingClientRect();
    const [lo, hi] = state.view;
    return round(lo + ((event.clientX - box.left) / box.width) * (hi - lo));
  }

  function onDown(event) {
    if (!state.item || event.button !== 0) return;
    const t = timeAt(event);
    const target = event.target;
    if (target.dataset && target.dataset.edge !== undefined) {
      const index = Number(target.parentElement.dataset.index);
      state.selected = index;
      state.drag = { kind: "edge", index, edge: Number(target.dataset.edge) };
    } else if (target.classList && target.classList.contains("segment")) {
      state.selected = Number(target.dataset.index);
      state.drag = null;
      seek(t);
    } else {
      state.drag = { kind: "new", t0: t, t1: t, x0: event.clientX };
    }
    $("timeline").focus();
    render();
    event.preventDefault();
  }

  function onMove(event) {
    const drag = state.drag;
    if (!drag) return;
    const t = timeAt(event);
    if (drag.kind === "new") drag.t1 = t;
    else {
      const seg = state.segments[drag.index];
      if (drag.edge === 0 && t < seg[1]) seg[0] = Math.max(0, t);
      if (drag.edge === 1 && t > seg[0]) seg[1] = Math.min(t, maxTime());
      seek(seg[drag.edge]); // the video shows the frame at the dragged edge
      return;
    }
    render();
  }

  function onUp(event) {
    const drag = state.drag;
    state.drag = null;
    if (!drag) return;
    if (drag.kind === "new") {
      if (Math.abs(event.clientX - drag.x0) < 4) {
        seek(drag.t0); // a click: move the playhead there
      } else {
        addSegment(Math.min(drag.t0, drag.t1), Math.max(drag.t0, drag.t1));
        say(`Marked ${fmt(Math.min(drag.t0, drag.t1))} – ${fmt(Math.max(drag.t0, drag.t1))} s`);
      }
    }
    render();
  }

  function wireMedia(video) {
    const shown = () => video.id === "video"; // the other player is preloading: its events wait for its turn
    video.addEventListener("loadedmetadata", () => {
      if (!shown()) return;
      if (Number.isFinite(video.duration)) state.duration = video.duration;
      if (state.item) setView();
      video.currentTime = state.playhead;
      render();
    });
    video.addEventListener("timeupdate", () => {
      if (shown() && !video.paused) {
        state.playhead = round(video.currentTime);
        render();
      }
    });
    video.addEventListener("error", () => {
      const src = video.getAttribute("src");
      if (!src || !shown()) return;
      video.hidden = true;
      $("placeholder-text").textContent = unreachable(src);
      $("placeholder").hidden = false;
      say(`${unreachable(src)}: video ${state.item ? state.item.video_id : ""} did not load. You can still mark it.`);
    });
  }

  async function start() {
    const taken = await takeToken();
    if (taken.error) return fatal(`Your marking link was not accepted (${taken.error}). Ask your organiser for a new one.`);
    if (!taken.token) return fatal("Open the link your organiser sent you (it ends in #link=...).");
    state.token = taken.token;
    wireMedia($("video"));
    wireMedia($("video-next"));
    document.addEventListener("keydown", onKey);
    $("timeline").addEventListener("mousedown", onDown);
    document.addEventListener("mousemove", onMove);
    document.addEventListener("mouseup", onUp);
    $("accept").addEventListener("click", () => onKey(new KeyboardEvent("keydown", { key: "a" })));
    $("submit").addEventListener("click", () => onKey(new KeyboardEvent("keydown", { key: "Enter" })));
    $("none").addEventListener("click", () => submit([]));
    $("back").addEventListener("click", () => state.inflight === 0 && goBack());
    $("play").addEventListener("click", togglePlay);
    $("replay").addEventListener("click", replay);
    $("help-button").addEventListener("click", toggleHelp);
    $("help").addEventListener("close", () => (state.item ? $("timeline") : $("main")).focus());
    try {
      await loadNext();
    } catch (error) {
      if (error.status === 401) sessionStorage.removeItem(TOKEN_KEY);
      fatal(`Could not load your items: ${error.message}`);
    }
  }

  start();
})();

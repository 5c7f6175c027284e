// The judging page: a keyboard-driven client of the assessor API (/api/judging/...). It shows the topic and the
// shot only; runs, ranks and other verdicts never reach the browser.
"use strict";

(() => {
  const TOKEN_KEY = "trecpool.assessor-token";
  const LABELS = { relevant: "Relevant", not_relevant: "Not relevant", unsure: "Unsure" };
  const VERDICT_KEYS = new Map([
    ["r", "relevant"],
    ["1", "relevant"],
    ["n", "not_relevant"],
    ["0", "not_relevant"],
    ["u", "unsure"],
  ]);
  const $ = (id) => document.getElementById(id);

  // item: the shown item; back: -1 for the queue's current item, k >= 0 for history[k]
  const state = { token: null, item: null, back: -1, busy: false, shownAt: 0, segment: null };

  class ApiError extends Error {
    constructor(status, detail) {
      super(detail || `HTTP ${status}`);
      this.status = status;
    }
  }

  /**
   * Trade a one-time ?link=... for an assessor session token (by POST, in a header: no token is ever in a URL), keep it in
   * sessionStorage, and drop the spent link from the address bar and history. Without a link: the stored token.
   * Returns { token } or { error } (the link was refused: used, expired or unknown).
   */
  async function takeToken() {
    const url = new URL(window.location.href);
    const link = url.searchParams.get("link");
    if (!link) return { token: sessionStorage.getItem(TOKEN_KEY) };
    url.searchParams.delete("link");
    history.replaceState(history.state, "", url.pathname + url.search + url.hash);
    const response = await fetch("/api/judging/session", {
      method: "POST",
      headers: { Authorization: `Bearer ${link}`, Accept: "application/json" },
      cache: "no-store",
    });
    const data = await response.json().catch(() => null);
    if (!response.ok || !data || !data.token) {
      const stored = sessionStorage.getItem(TOKEN_KEY);
      if (stored) return { token: stored }; // a reload of a tab that already traded its link
      return { error: (data && data.detail) || `HTTP ${response.status}` };
    }
    sessionStorage.setItem(TOKEN_KEY, data.token);
    return { token: data.token };
  }

  async function api(method, path, body) {
    const headers = { Authorization: `Bearer ${state.token}`, Accept: "application/json" };
    const init = { method, headers, cache: "no-store" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    if (response.status === 204) return null;
    const data = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, data && data.detail);
    return data;
  }

  function announce(text) {
    // clear first so that the same message twice is announced twice
    const status = $("status");
    status.textContent = "";
    window.setTimeout(() => { status.textContent = text; }, 30);
  }

  function setBusy(busy) {
    state.busy = busy;
    $("main").setAttribute("aria-busy", String(busy));
  }

  function fatal(text) {
    state.item = null;
    $("item").hidden = true;
    document.querySelector(".tools").hidden = true;
    $("progress-box").hidden = true;
    showMessage(text);
    stopVideo();
  }

  function showMessage(text) {
    const message = $("message");
    message.textContent = text;
    message.hidden = !text;
  }

  function handleError(error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      sessionStorage.removeItem(TOKEN_KEY);
      fatal("Your judging session ended (revoked or expired). Ask your organiser for a new judging link.");
    } else {
      announce(`Not saved: ${error.message}. Try again.`);
    }
  }

  // ---- the shot ---------------------------------------------------------------------------------------------------

  function showPlaceholder() {
    const video = $("video");
    video.pause();
    video.hidden = true;
    $("placeholder").hidden = false;
  }

  function stopVideo() {
    const video = $("video");
    video.pause();
    video.removeAttribute("src");
    video.load();
  }

  function playSegment() {
    const video = $("video");
    if (!state.segment || video.hidden || video.readyState < 1) return false;
    video.currentTime = state.segment.start;
    state.segment.stopAtEnd = true; // once per play of the shot: the controls may still play on past its end
    video.play().catch(() => {});
    return true;
  }

  function showShot(item) {
    const video = $("video");
    $("placeholder-shot").textContent = item.shot_id;
    state.segment = { start: item.start ?? 0, end: item.end };
    if (!item.media_url) {
      stopVideo();
      showPlaceholder();
      return;
    }
    video.hidden = false;
    $("placeholder").hidden = true;
    if (video.getAttribute("src") === item.media_url && video.readyState >= 1) {
      playSegment();
    } else {
      video.src = item.media_url; // loadedmetadata seeks and plays; error shows the placeholder
    }
  }

  function setUpVideo() {
    const video = $("video");
    video.addEventListener("loadedmetadata", playSegment);
    video.addEventListener("error", showPlaceholder);
    video.addEventListener("timeupdate", () => {
      const segment = state.segment;
      if (segment && segment.stopAtEnd && segment.end != null && video.currentTime >= segment.end) {
        segment.stopAtEnd = false;
        video.pause();
      }
    });
  }

  // ---- items ------------------------------------------------------------------------------------------------------

  function render(item, back) {
    state.item = item;
    state.back = back;
    state.shownAt = performance.now();
    showMessage("");
    $("topic-number").textContent = item.topic;
    $("topic-text").textContent = item.topic_title;
    $("shot-id").textContent = item.shot_id;
    $("item").dataset.task = String(item.task_id);
    $("going-back").hidden = back < 0;
    $("previous-verdict").textContent = item.verdict ? LABELS[item.verdict] : "";
    for (const button of document.querySelectorAll("[data-verdict]")) {
      button.setAttribute("aria-pressed", String(back >= 0 && button.dataset.verdict === item.verdict));
    }
    $("item").hidden = false;
    showShot(item);
    $("main").focus();
  }

  function showDone() {
    state.item = null;
    state.back = -1;
    $("item").hidden = true;
    delete $("item").dataset.task;
    stopVideo();
    showMessage("All done: nothing is left for you to judge. Thank you!");
    $("main").focus();
  }

  async function refreshProgress() {
    const p = await api("GET", "/api/judging/progress");
    const bar = $("progress");
    bar.max = Math.max(p.total, 1);
    bar.value = p.done;
    $("progress-text").textContent = `${p.done} / ${p.total} judged`;
  }

  async function loadNext() {
    const item = await api("POST", "/api/judging/next");
    if (item === null) showDone();
    else render(item, -1);
  }

  /** Run one action at a time; keys pressed meanwhile are dropped, never applied to an unseen item. */
  async function exclusive(action) {
    if (state.busy) return;
    setBusy(true);
    try {
      await action();
    } catch (error) {
      handleError(error);
    } finally {
      setBusy(false);
    }
  }

  function judge(verdict) {
    return exclusive(async () => {
      const item = state.item;
      if (!item) return;
      const body = { verdict };
      if (state.back < 0) body.seconds_spent = Math.round(performance.now() - state.shownAt) / 1000;
      try {
        await api("POST", `/api/judging/items/${item.task_id}`, body);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 409) throw error;
        announce("This shot's reservation expired and it went back to the queue. Here is your next shot.");
        await loadNext();
        await refreshProgress();
        return;
      }
      if (state.back < 0) announce(`Saved: ${LABELS[verdict]} (shot ${item.shot_id}).`);
      else if (item.verdict === verdict) announce(`Kept: ${LABELS[verdict]} (shot ${item.shot_id}).`);
      else announce(`Changed to ${LABELS[verdict]} (shot ${item.shot_id}).`);
      await loadNext();
      await refreshProgress();
    });
  }

  function goBack() {
    return exclusive(async () => {
      const judged = await api("GET", "/api/judging/history"); // newest first
      const index = state.back + 1;
      if (index >= judged.length) {
        announce(judged.length ? "Nothing further back." : "Nothing judged yet.");
        return;
      }
      const item = await api("GET", `/api/judging/items/${judged[index]}`);
      render(item, index);
      announce(`Back to shot ${item.shot_id}: your verdict was ${LABELS[item.verdict]}.`);
    });
  }

  function replay() {
    if (!state.item) return;
    announce(playSegment() ? "Replaying the shot." : `No video to replay for shot ${state.item.shot_id}.`);
  }

  // ---- input ------------------------------------------------------------------------------------------------------

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    let action = null;
    if (VERDICT_KEYS.has(key)) action = () => judge(VERDICT_KEYS.get(key));
    else if (key === "b" || key === "Backspace") action = goBack;
    else if (key === " ") action = replay;
    if (!action) return;
    event.preventDefault();
    if (!event.repeat) action();
  }

  function onClick(handler) {
    return (event) => {
      handler();
      event.currentTarget.blur();
      $("main").focus();
    };
  }

  async function start() {
    const taken = await takeToken().catch((error) => ({ error: error.message }));
    state.token = taken.token || null;
    setUpVideo();
    if (taken.error) {
      fatal(`Your judging link was not accepted (${taken.error}). Ask your organiser for a new link.`);
      return;
    }
    if (!state.token) {
      fatal("Open the judging link your organiser sent you (it ends in ?link=...).");
      return;
    }
    document.addEventListener("keydown", onKey);
    for (const button of document.querySelectorAll("[data-verdict]")) {
      button.addEventListener("click", onClick(() => judge(button.dataset.verdict)));
    }
    $("back").addEventListener("click", onClick(goBack));
    $("replay").addEventListener("click", onClick(replay));
    await exclusive(async () => {
      await refreshProgress();
      await loadNext();
    });
  }

  start();
})();

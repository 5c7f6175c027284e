// The judging page: a keyboard-driven client of the assessor API (/api/judging/...). It shows the topic and the
// shot only; runs, ranks and other verdicts never reach the browser.
//
// Speed: the page holds the item on screen and the next one, both leased (POST /api/judging/step leases one ahead).
// The next item's media is loaded, seeked and paused in a hidden second <video>; a key press swaps the two players at
// once and sends the verdict in the background (one request, which returns the next items and the counts). A third,
// hidden <video> draws the keyframe strip of the shown and the next item into canvases.
//
// Grades: a campaign's scale is 0..max_grade (the step's answer says it). Binary (1), the page offers relevant, not
// relevant and unsure; graded, one button per grade (keys 0..9: 0 is not relevant, g >= 1 relevant with grade g; R
// is grade 1, N grade 0) and unsure, and the verdict is sent with its grade.
"use strict";

(() => {
  const TOKEN_KEY = "trecpool.assessor-token";
  const PREFS_KEY = "trecpool.judging-prefs";
  const LABELS = { relevant: "Relevant", not_relevant: "Not relevant", unsure: "Unsure" };
  // Keys the assessor can rebind (the help's "Change keys"), stored in localStorage; the digits, Backspace (back) and
  // Pause (a break) stay as they are. On a graded scale the relevant key is grade 1 and the not-relevant key grade 0.
  const KEYS_KEY = "trecpool.judging-keys";
  const DEFAULT_KEYS = { relevant: "r", not_relevant: "n", unsure: "u", later: "s", back: "b", replay: " ", pause: "z" };
  const ACTION_NAMES = {
    relevant: "Relevant",
    not_relevant: "Not relevant",
    unsure: "Unsure",
    later: "Later",
    back: "Back",
    replay: "Replay",
    pause: "A break",
  };
  // the page's keys that cannot be rebound, with what they do (a key is refused when bound already)
  const FIXED_KEYS = new Map([
    ["?", "This help"],
    ["p", "Pause or play"],
    ["m", "Sound on or off"],
    ["[", "Slower"],
    ["]", "Faster"],
    ["c", "Context"],
    ["ArrowLeft", "One second back"],
    ["ArrowRight", "One second forward"],
    ["Backspace", "Back"],
    ["Pause", "A break"],
    ["Escape", "Closing a dialog"],
    ["Tab", "Moving between buttons"],
    ["Enter", "Pressing a button"],
    ...[..."0123456789"].map((d) => [d, "Grades"]),
  ]);
  const keys = readKeys();
  const SPEEDS = [0.5, 0.75, 1, 1.25, 1.5, 2];
  const CONTEXTS = [0, 1, 2, 5];
  const KEYFRAMES = 5;
  const $ = (id) => document.getElementById(id);

  const stored = readPrefs();
  // sound: the assessor's own choice (M) once made, else the campaign's setting (the step's audio_on), off until read
  const IDLE_CHOICES = [60, 180, 300, 600, 0]; // seconds without a key or pointer event before a break (0: never)
  const prefs = Object.assign({ context: 2, speed: 1, sound: false, idle: 180 }, stored);
  let soundChosen = "sound" in stored;
  const state = {
    token: null,
    queue: [], // leased items from the server: queue[0] is the item to judge now, queue[1] the one preloaded
    shown: null, // the item on screen (queue[0], or an item judged earlier when going back)
    back: -1, // -1 on the queue's item, k >= 0 on history[k]
    shownAt: 0,
    inflight: 0, // requests under way
    pending: null, // a key pressed while a request was under way, run when it ends
    progress: null,
    maxGrade: 1, // the campaign's grade scale 0..maxGrade (1: binary)
    topicShown: null, // the topic whose description is on screen (a change is cued)
    paused: false, // on a break: the leases were given back, a key resumes
    lastActive: performance.now(), // the last key or pointer event (the idle timeout counts from it)
  };

  function readPrefs() {
    try {
      const stored = JSON.parse(localStorage.getItem(PREFS_KEY) || "{}");
      const valid = {};
      if (CONTEXTS.includes(stored.context)) valid.context = stored.context;
      if (SPEEDS.includes(stored.speed)) valid.speed = stored.speed;
      if (typeof stored.sound === "boolean") valid.sound = stored.sound;
      if (Number.isInteger(stored.idle) && stored.idle >= 0 && stored.idle <= 86400) valid.idle = stored.idle;
      return valid;
    } catch {
      return {};
    }
  }

  /** The assessor's key bindings: the stored ones when every one is a single key, none fixed, no two alike. */
  function readKeys() {
    try {
      const stored = JSON.parse(localStorage.getItem(KEYS_KEY) || "{}");
      const merged = { ...DEFAULT_KEYS };
      for (const action of Object.keys(DEFAULT_KEYS)) {
        if (typeof stored[action] === "string" && stored[action].length === 1) merged[action] = stored[action];
      }
      const values = Object.values(merged);
      if (new Set(values).size !== values.length || values.some((k) => FIXED_KEYS.has(k))) return { ...DEFAULT_KEYS };
      return merged;
    } catch {
      return { ...DEFAULT_KEYS };
    }
  }

  function saveKeys() {
    try {
      const changed = Object.keys(keys).some((action) => keys[action] !== DEFAULT_KEYS[action]);
      if (changed) localStorage.setItem(KEYS_KEY, JSON.stringify(keys));
      else localStorage.removeItem(KEYS_KEY);
    } catch {
      // private mode: the bindings last for this page only
    }
  }

  /** A key as the page shows it: Space, a capital letter, or the key's name. */
  const keyLabel = (key) => (key === " " ? "Space" : key.length === 1 ? key.toUpperCase() : key);
  /** A key as aria-keyshortcuts names it. */
  const keyShortcut = (key) => (key === " " ? "Space" : key);

  function savePrefs() {
    try {
      const { sound, ...rest } = prefs; // sound is kept only once the assessor chose it
      localStorage.setItem(PREFS_KEY, JSON.stringify(soundChosen ? { ...rest, sound } : rest));
    } catch {
      // private mode: the settings last for this page only
    }
  }

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

  function announce(text) {
    // clear first so that the same message twice is announced twice
    const status = $("status");
    status.textContent = "";
    window.setTimeout(() => { status.textContent = text; }, 30);
  }

  function setBusy() {
    $("main").setAttribute("aria-busy", String(state.inflight > 0 || state.pending !== null));
  }

  function fatal(text) {
    state.shown = null;
    state.queue = [];
    $("item").hidden = true;
    document.querySelector(".tools").hidden = true;
    $("progress-box").hidden = true;
    showMessage(text);
    for (const player of players) player.clear();
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

  // ---- grades ---------------------------------------------------------------------------------------------------

  const graded = () => state.maxGrade > 1;

  /** The words of a grade on the campaign's scale: its ends are named, the grades between are numbers only. */
  function gradeWords(grade) {
    if (grade === 0) return "not relevant";
    if (grade === state.maxGrade) return "highly relevant";
    return "";
  }

  /** A verdict as the assessor reads it: "Relevant" on a binary scale, "Grade 2" or "Grade 0, not relevant" on a
   * graded one (a relevant verdict without a grade is grade 1, a not relevant one grade 0). */
  function verdictText(verdict, grade) {
    if (!graded() || verdict === "unsure") return LABELS[verdict];
    const g = grade ?? (verdict === "relevant" ? 1 : 0);
    const words = gradeWords(g);
    return words ? `Grade ${g}, ${words}` : `Grade ${g}`;
  }

  /** The verdict and grade a key gives ({ verdict, grade } or null); a digit above the scale gives { off: digit }. */
  function keyVerdict(key) {
    if (key === keys.unsure) return { verdict: "unsure" };
    if (!graded()) {
      if (key === keys.relevant || key === "1") return { verdict: "relevant" };
      if (key === keys.not_relevant || key === "0") return { verdict: "not_relevant" };
      return null;
    }
    let grade = key === keys.relevant ? 1 : key === keys.not_relevant ? 0 : undefined;
    if (grade === undefined && /^[0-9]$/.test(key)) grade = Number(key);
    if (grade === undefined) return null;
    if (grade > state.maxGrade) return { off: grade };
    return { verdict: grade === 0 ? "not_relevant" : "relevant", grade };
  }

  function kbd(text) {
    const element = document.createElement("kbd");
    element.textContent = text;
    return element;
  }

  /** A <kbd> showing the key bound to `action`, kept current by showKeys. */
  function boundKbd(action) {
    const element = kbd(keyLabel(keys[action]));
    element.dataset.bind = action;
    return element;
  }

  /** Show the current bindings: every <kbd data-bind>, the buttons' aria-keyshortcuts, the change-keys dialog. */
  function showKeys() {
    for (const element of document.querySelectorAll("kbd[data-bind]")) {
      element.textContent = keyLabel(keys[element.dataset.bind]);
    }
    for (const button of document.querySelectorAll("[data-bind-action]")) {
      const extra = button.dataset.bindExtra ? ` ${button.dataset.bindExtra}` : "";
      button.setAttribute("aria-keyshortcuts", `${keyShortcut(keys[button.dataset.bindAction])}${extra}`);
    }
    for (const button of document.querySelectorAll(".verdicts.graded [data-grade]")) {
      const g = Number(button.dataset.grade);
      const named = g === 0 ? "not_relevant" : g === 1 ? "relevant" : null;
      if (named) button.setAttribute("aria-keyshortcuts", `${g} ${keyShortcut(keys[named])}`);
    }
  }

  /** The change-keys dialog: one row per action with its key and a Change button; Reset; refusals said in place. */
  function setUpKeysDialog() {
    const dialog = $("keys");
    const list = $("keys-list");
    let capturing = null; // the action waiting for its new key
    const say = (text) => {
      $("keys-status").textContent = text;
    };
    const render = () => {
      list.replaceChildren();
      for (const action of Object.keys(DEFAULT_KEYS)) {
        const dt = document.createElement("dt");
        dt.textContent = ACTION_NAMES[action];
        const dd = document.createElement("dd");
        const button = document.createElement("button");
        button.type = "button";
        button.dataset.change = action;
        button.setAttribute("aria-label", `Change the key of ${ACTION_NAMES[action]}`);
        button.textContent = capturing === action ? "Press a key…" : "Change";
        dd.append(boundKbd(action), " ", button);
        list.append(dt, dd);
      }
    };
    list.addEventListener("click", (event) => {
      const action = event.target.closest("[data-change]")?.dataset.change;
      if (!action) return;
      capturing = action;
      render();
      list.querySelector(`[data-change="${action}"]`).focus();
      say(`Press the new key for ${ACTION_NAMES[action]} (Esc keeps ${keyLabel(keys[action])}).`);
    });
    dialog.addEventListener("keydown", (event) => {
      if (!capturing) return;
      if (["Shift", "Control", "Alt", "Meta", "CapsLock"].includes(event.key)) return;
      event.preventDefault();
      event.stopPropagation();
      const action = capturing;
      const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
      capturing = null;
      if (key === "Escape") say(`Kept ${keyLabel(keys[action])} for ${ACTION_NAMES[action]}.`);
      else if (event.ctrlKey || event.metaKey || event.altKey || key.length !== 1 && !FIXED_KEYS.has(key)) {
        say(`Refused: ${ACTION_NAMES[action]} takes a single key without Ctrl, Alt or Meta.`);
      } else {
        const other = Object.keys(keys).find((a) => a !== action && keys[a] === key);
        const fixed = FIXED_KEYS.get(key);
        if (other || fixed) {
          say(`Refused: ${keyLabel(key)} is already bound to ${other ? ACTION_NAMES[other] : fixed}.`);
        } else {
          keys[action] = key;
          saveKeys();
          say(`${ACTION_NAMES[action]} is now ${keyLabel(key)}.`);
        }
      }
      render();
      showKeys();
      list.querySelector(`[data-change="${action}"]`).focus();
    }, true);
    dialog.addEventListener("cancel", (event) => {
      if (capturing) event.preventDefault();
    });
    $("keys-reset").addEventListener("click", () => {
      Object.assign(keys, DEFAULT_KEYS);
      saveKeys();
      capturing = null;
      render();
      showKeys();
      say("Every key is back to its default.");
    });
    $("keys-button").addEventListener("click", () => {
      capturing = null;
      say("");
      render();
      dialog.showModal();
    });
    dialog.addEventListener("close", () => {
      capturing = null;
      if ($("help").open) $("keys-button").focus();
    });
  }

  /** A graded scale: one button per grade, then unsure; the help lists its keys. Binary pages keep their markup. */
  function showScale(maxGrade) {
    state.maxGrade = maxGrade;
    if (!graded()) return;
    const group = document.querySelector(".verdicts");
    const unsure = group.querySelector("[data-verdict=unsure]");
    const buttons = [];
    for (let g = 0; g <= maxGrade; g += 1) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = g === 0 ? "grade not-relevant" : "grade relevant";
      button.dataset.verdict = g === 0 ? "not_relevant" : "relevant";
      button.dataset.grade = String(g);
      button.style.setProperty("--strength", String(g / maxGrade));
      const named = g === 0 ? "not_relevant" : g === 1 ? "relevant" : null;
      const shortcuts = [...(g <= 9 ? [String(g)] : []), ...(named ? [keyShortcut(keys[named])] : [])];
      if (shortcuts.length) button.setAttribute("aria-keyshortcuts", shortcuts.join(" "));
      const noKey = shortcuts.length ? "" : " (no key)";
      button.setAttribute("aria-label", `${verdictText(button.dataset.verdict, g)}${noKey}`);
      const number = document.createElement("span");
      number.className = "grade-number";
      number.textContent = String(g);
      const words = document.createElement("span");
      words.className = "grade-words";
      words.textContent = gradeWords(g);
      if (named) words.append(" ", boundKbd(named));
      button.append(number, words);
      buttons.push(button);
    }
    group.classList.add("graded");
    group.setAttribute("aria-label", `Grade, from 0 (not relevant) to ${maxGrade} (highly relevant)`);
    group.replaceChildren(...buttons, unsure);
    unsure.setAttribute("aria-keyshortcuts", "u");

    const rows = [];
    const row = (labels, text) => {
      const dt = document.createElement("dt");
      for (const [i, key] of labels.entries()) {
        const shown = key === "…" ? "…" : key in DEFAULT_KEYS ? boundKbd(key) : kbd(key);
        dt.append(...(i ? [" "] : []), shown);
      }
      if (!labels.length) dt.textContent = "(its button)";
      const dd = document.createElement("dd");
      dd.textContent = text;
      dt.dataset.keys = dd.dataset.keys = "graded";
      rows.push(dt, dd);
    };
    row(["0", "not_relevant"], "Grade 0: not relevant");
    row(["1", "relevant"], "Grade 1: relevant");
    const middle = Math.min(maxGrade - 1, 9); // grades 2..middle between the named ends
    if (middle === 2) row(["2"], "Grade 2: more relevant");
    else if (middle > 2) row(["2", "…", String(middle)], `Grades 2 to ${middle}: more relevant, the higher the more`);
    const top = `Grade ${maxGrade}: highly relevant, the top of the scale`;
    row(maxGrade <= 9 ? [String(maxGrade)] : [], maxGrade <= 9 ? top : `${top} (no key)`);
    const help = $("help");
    for (const old of help.querySelectorAll("[data-keys]")) old.remove(); // the binary keys, or an earlier scale's
    help.querySelector("dl").prepend(...rows);
  }

  // ---- the players --------------------------------------------------------------------------------------------------

  /** The part of the video played for an item: the shot with `prefs.context` seconds before and after. */
  function windowOf(item, duration) {
    const start = item.start ?? 0;
    const end = item.end ?? (Number.isFinite(duration) ? duration : start);
    const last = Number.isFinite(duration) && duration > 0 ? duration : Infinity;
    return { from: Math.max(0, start - prefs.context), to: Math.min(last, end + prefs.context), start, end };
  }

  /** One <video> showing or preloading one item: loaded, seeked to its window's start, paused until shown. */
  class Player {
    constructor(video) {
      this.video = video;
      this.item = null;
      this.ready = false; // seeked to the window's start, data ahead
      this.failed = false; // no media, or it failed to load
      video.defaultPlaybackRate = prefs.speed;
      video.addEventListener("loadedmetadata", () => this.seekToStart());
      video.addEventListener("seeked", () => this.checkReady());
      video.addEventListener("canplay", () => this.checkReady());
      video.addEventListener("error", () => this.fail());
    }

    load(item) {
      this.item = item;
      this.ready = false;
      this.failed = false;
      this.wantPlay = false;
      const video = this.video;
      if (!item.media_url) {
        this.clearSource();
        this.failed = true;
        return;
      }
      if (video.getAttribute("src") === item.media_url && video.readyState >= 1 && !video.error) {
        this.seekToStart();
      } else {
        video.src = item.media_url; // loadedmetadata seeks to the window's start
      }
    }

    clearSource() {
      this.video.pause();
      if (this.video.getAttribute("src") !== null) {
        this.video.removeAttribute("src");
        this.video.load();
      }
    }

    clear() {
      this.item = null;
      this.ready = false;
      this.clearSource();
    }

    window() {
      return windowOf(this.item, this.video.duration);
    }

    seekToStart() {
      if (!this.item || this.failed) return;
      const video = this.video;
      video.playbackRate = prefs.speed;
      const from = this.window().from;
      if (Math.abs(video.currentTime - from) < 0.01 && !video.seeking) this.checkReady();
      else video.currentTime = from;
    }

    checkReady() {
      const video = this.video;
      if (!this.item || this.failed || video.seeking || video.readyState < 3) return;
      this.ready = true;
      if (this.wantPlay) {
        this.wantPlay = false;
        this.play();
      }
      if (this === active()) updateTimeline();
      else scheduleKeyframes();
    }

    fail() {
      if (!this.item || !this.item.media_url || !this.video.getAttribute("src")) return;
      this.failed = true;
      this.ready = false;
      if (this === active()) showPlaceholder();
      else scheduleKeyframes();
    }

    /** Play from the window's start (or from where it stands, `fromHere`), or as soon as the media allows. */
    play(fromHere = false) {
      const video = this.video;
      if (this.failed || !this.item) return false;
      if (video.readyState < 1) {
        this.wantPlay = true;
        return true;
      }
      const { from, to } = this.window();
      if (!fromHere || video.currentTime >= to - 0.05 || video.currentTime < from) {
        if (Math.abs(video.currentTime - from) >= 0.01) video.currentTime = from;
      }
      video.playbackRate = prefs.speed;
      video.muted = !prefs.sound;
      video.play().catch((error) => {
        if (error && error.name === "NotAllowedError" && !video.muted) {
          // the browser refuses sound before the first key press: play muted, and say so
          video.muted = true;
          updateSound();
          video.play().catch(() => {});
        }
      });
      updateSound();
      return true;
    }
  }

  const players = [];
  let activeIndex = 0;
  const active = () => players[activeIndex];
  const spare = () => players[1 - activeIndex];

  /** No media for the shot, or a load that failed: then the media host is named as unreachable. */
  function showPlaceholder() {
    const item = active().item;
    let text = "No video for this shot";
    if (item && item.media_url) {
      let host = item.media_url;
      try {
        host = new URL(item.media_url, location.href).host;
      } catch (error) {
        // an unparsable address is named as it is
      }
      text = `The media host ${host} is unreachable`;
    }
    $("placeholder-text").textContent = text;
    active().video.pause();
    active().video.hidden = true;
    $("placeholder").hidden = false;
    $("timeline-box").hidden = true;
  }

  /** Put `item` on screen: swap to the player that preloaded it, else load it into the shown one, and play. */
  function showMedia(item) {
    const old = active();
    const index = players.findIndex((p) => p.item && p.item.task_id === item.task_id);
    if (index >= 0 && index !== activeIndex) {
      activeIndex = index;
      old.video.pause();
      old.video.hidden = true;
    } else if (index < 0) {
      old.load(item);
    }
    const player = active();
    $("placeholder-shot").textContent = item.shot_id;
    if (player.failed) {
      showPlaceholder();
    } else {
      player.video.hidden = false;
      $("placeholder").hidden = true;
      $("timeline-box").hidden = false;
      player.play();
    }
    updateTimeline();
  }

  /** Preload the queue's next item in the hidden player (unless it holds it already). */
  function preloadNext() {
    const next = state.back < 0 ? state.queue[1] : state.queue[0];
    const player = spare();
    if (!next || (player.item && player.item.task_id === next.task_id)) return;
    if (state.back >= 0 && active().item && active().item.task_id === next.task_id) return;
    player.video.pause();
    player.load(next);
  }

  // ---- the timeline: the window played, the shot marked in it, the play head -------------------------------------

  function updateTimeline() {
    const player = active();
    if (!player || !player.item) return;
    const video = player.video;
    const { from, to, start, end } = player.window();
    const span = Number.isFinite(to) && to > from ? to - from : 0;
    const at = (t) => (span ? Math.min(100, Math.max(0, ((t - from) / span) * 100)) : 0);
    const segment = $("segment");
    segment.style.left = `${at(start)}%`;
    segment.style.width = `${Math.max(0, at(end) - at(start))}%`;
    const now = video.readyState >= 1 ? video.currentTime : from;
    $("playhead").style.left = `${at(now)}%`;
    const timeline = $("timeline");
    const inShot = now - start;
    timeline.setAttribute("aria-valuemin", from.toFixed(1));
    timeline.setAttribute("aria-valuemax", Number.isFinite(to) ? to.toFixed(1) : "0");
    timeline.setAttribute("aria-valuenow", now.toFixed(1));
    const where = now < start ? `${(start - now).toFixed(1)} s before the shot`
      : now > end ? `${(now - end).toFixed(1)} s after the shot` : `${inShot.toFixed(1)} s into the shot`;
    timeline.setAttribute("aria-valuetext", where);
    $("time").textContent = `${where} (shot ${start.toFixed(1)}–${end.toFixed(1)} s)`;
    $("play").textContent = video.paused ? "Play" : "Pause";
  }

  /** While the shown player plays: move the play head, and stop at the end of the window. */
  function tick() {
    const player = active();
    const video = player && player.video;
    if (video && player.item && !video.paused) {
      const { to } = player.window();
      if (video.currentTime >= to) video.pause();
      updateTimeline();
    }
    window.requestAnimationFrame(tick);
  }

  function seekBy(seconds) {
    const player = active();
    if (!player.item || player.failed || player.video.readyState < 1) return;
    const { from, to } = player.window();
    player.video.currentTime = Math.min(Math.max(from, player.video.currentTime + seconds), to);
    updateTimeline();
  }

  function seekToPointer(event) {
    const player = active();
    if (!player.item || player.failed || player.video.readyState < 1) return;
    const box = $("timeline").getBoundingClientRect();
    const { from, to } = player.window();
    if (!Number.isFinite(to)) return;
    const fraction = Math.min(1, Math.max(0, (event.clientX - box.left) / box.width));
    player.video.currentTime = from + fraction * (to - from);
    updateTimeline();
  }

  function togglePlay() {
    const player = active();
    if (!player.item || player.failed) return;
    if (player.video.paused) player.play(true);
    else player.video.pause();
  }

  function replay() {
    if (!state.shown) return;
    const player = active();
    announce(!player.failed && player.play() ? "Replaying the shot." : `No video to replay for shot ${state.shown.shot_id}.`);
  }

  // ---- sound, speed, context ------------------------------------------------------------------------------------

  function updateSound() {
    const video = active() && active().video;
    const on = Boolean(video && !video.muted);
    const button = $("sound");
    button.setAttribute("aria-pressed", String(on));
    // the browser may refuse sound until the assessor presses a key: then the state says how to turn it on
    $("sound-state").textContent = on ? "Sound on" : prefs.sound ? "Sound off (press M)" : "Sound off";
    button.classList.toggle("on", on);
  }

  function toggleSound() {
    prefs.sound = !(active() && !active().video.muted);
    soundChosen = true;
    savePrefs();
    for (const player of players) player.video.muted = !prefs.sound;
    updateSound();
    announce(prefs.sound ? "Sound on." : "Sound off.");
  }

  function setSpeed(speed) {
    prefs.speed = speed;
    savePrefs();
    for (const player of players) {
      player.video.defaultPlaybackRate = speed;
      player.video.playbackRate = speed;
    }
    $("speed-state").textContent = `${speed}×`;
    announce(`Speed ${speed}×.`);
  }

  function changeSpeed(step) {
    const index = SPEEDS.indexOf(prefs.speed);
    setSpeed(SPEEDS[Math.min(SPEEDS.length - 1, Math.max(0, (index < 0 ? 2 : index) + step))]);
  }

  function setContext(seconds) {
    prefs.context = seconds;
    savePrefs();
    $("context").value = String(seconds);
    spare().ready = false;
    spare().seekToStart();
    updateTimeline();
    announce(`Context: ${seconds} s before and after the shot.`);
  }

  // ---- keyframes: frames across the shot, drawn from a hidden third <video> ---------------------------------------

  const strips = new Map(); // task id -> { status: "queued" | "done" | "none", frames: [{ canvas, time }] }
  let stripBusy = false;

  function scheduleKeyframes() {
    if (stripBusy) return;
    const candidates = [state.shown, ...state.queue.slice(0, 2)].filter(Boolean);
    const item = candidates.find((c) => !strips.has(c.task_id));
    if (!item) return;
    // the next item waits until its player is ready: preloading it comes first
    if (item !== state.shown && !(spare().item && spare().item.task_id === item.task_id && (spare().ready || spare().failed))) return;
    stripBusy = true;
    drawKeyframes(item).finally(() => {
      stripBusy = false;
      for (const key of [...strips.keys()]) {
        if (![state.shown, ...state.queue].some((c) => c && c.task_id === key)) strips.delete(key);
      }
      if (state.shown && state.shown.task_id === item.task_id) showStrip(item);
      scheduleKeyframes();
    });
  }

  function once(target, types, ms) {
    return new Promise((resolve) => {
      const done = (event) => {
        for (const type of types) target.removeEventListener(type, done);
        window.clearTimeout(timer);
        resolve(event ? event.type : "timeout");
      };
      const timer = window.setTimeout(() => done(null), ms);
      for (const type of types) target.addEventListener(type, done);
    });
  }

  async function drawKeyframes(item) {
    const strip = { status: "none", frames: [] };
    strips.set(item.task_id, strip);
    if (!item.media_url) return;
    const video = $("keyframes-video");
    if (video.getAttribute("src") !== item.media_url || video.readyState < 1) {
      video.src = item.media_url;
      if ((await once(video, ["loadedmetadata", "error"], 10000)) !== "loadedmetadata") return;
    }
    if (!video.videoWidth) return; // sound only: no pictures to show
    const { start, end } = windowOf(item, video.duration);
    const width = 160;
    const height = Math.round((width * video.videoHeight) / video.videoWidth) || 90;
    for (let k = 0; k < KEYFRAMES; k += 1) {
      const time = start + ((k + 0.5) * Math.max(0, end - start)) / KEYFRAMES;
      video.currentTime = time;
      if ((await once(video, ["seeked", "error"], 5000)) !== "seeked") return;
      const canvas = document.createElement("canvas");
      canvas.width = width;
      canvas.height = height;
      canvas.getContext("2d").drawImage(video, 0, 0, width, height);
      strip.frames.push({ canvas, time });
    }
    strip.status = "done";
  }

  function showStrip(item) {
    const box = $("strip");
    const strip = strips.get(item.task_id);
    box.replaceChildren();
    box.hidden = !strip || strip.status !== "done";
    if (box.hidden) return;
    for (const { canvas, time } of strip.frames) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "keyframe";
      button.title = `Play from ${(time - (item.start ?? 0)).toFixed(1)} s into the shot`;
      button.setAttribute("aria-label", button.title);
      button.append(canvas);
      button.addEventListener("click", (event) => {
        const player = active();
        if (player.item && player.item.task_id === item.task_id && player.video.readyState >= 1) {
          player.video.currentTime = time;
          player.play(true);
        }
        event.currentTarget.blur();
        $("main").focus();
      });
      box.append(button);
    }
  }

  // ---- items ----------------------------------------------------------------------------------------------------

  function render(item, back) {
    state.shown = item;
    state.back = back;
    state.shownAt = performance.now();
    showMessage("");
    const changed = state.topicShown !== null && state.topicShown !== item.topic;
    if (state.topicShown !== item.topic) showTopic(item);
    const cue = $("topic-change");
    cue.hidden = !changed;
    if (changed) {
      cue.textContent = `New topic ${item.topic}: ${item.topic_title}. Read its description before judging.`;
      announce(cue.textContent);
    }
    state.topicShown = item.topic;
    $("shot-id").textContent = item.shot_id;
    $("item").dataset.task = String(item.task_id);
    $("going-back").hidden = back < 0;
    $("previous-verdict").textContent = item.verdict ? verdictText(item.verdict, item.grade) : "";
    const grade = item.verdict === "unsure" ? undefined : (item.grade ?? (item.verdict === "relevant" ? 1 : 0));
    for (const button of document.querySelectorAll("[data-verdict]")) {
      const same = button.dataset.verdict === item.verdict
        && (button.dataset.grade === undefined || Number(button.dataset.grade) === grade);
      button.setAttribute("aria-pressed", String(back >= 0 && same));
    }
    $("item").hidden = false;
    showMedia(item);
    showStrip(item);
    updateCounts();
    preloadNext();
    scheduleKeyframes();
    $("main").focus({ preventScroll: true }); // the page stays where the assessor scrolled it
    if (changed) window.scrollTo({ top: 0 }); // the cue, the new topic and its brief in view
  }

  /** The topic's title, description, guidelines and example images, beside the video (as text: never as HTML). */
  function showTopic(item) {
    $("topic-number").textContent = item.topic;
    $("topic-text").textContent = item.topic_title;
    $("topic-description").textContent = item.topic_description || "";
    $("topic-guidelines").textContent = item.topic_guidelines || "";
    $("topic-guidelines-box").hidden = !item.topic_guidelines;
    const examples = $("topic-examples");
    examples.replaceChildren(...(item.topic_examples || []).map((example) => {
      const figure = document.createElement("figure");
      const image = document.createElement("img");
      image.src = example.url;
      image.alt = example.caption || `An example for topic ${item.topic}`;
      image.loading = "lazy";
      image.referrerPolicy = "no-referrer";
      figure.append(image);
      if (example.caption) {
        const caption = document.createElement("figcaption");
        caption.textContent = example.caption;
        figure.append(caption);
      }
      return figure;
    }));
    examples.hidden = !examples.childElementCount;
  }

  function showDone() {
    state.shown = null;
    state.back = -1;
    $("item").hidden = true;
    delete $("item").dataset.task;
    active().video.pause();
    showMessage("All done: nothing is left for you to judge. Thank you!");
    updateCounts();
    $("main").focus();
  }

  function updateCounts() {
    const p = state.progress;
    if (!p) return;
    $("mine").textContent = `You judged ${p.judged_by_you}`;
    const topic = (state.shown && p.topics.find((t) => t.topic === state.shown.topic)) || p.topics[0];
    const bar = $("progress");
    if (topic) {
      bar.max = Math.max(topic.total, 1);
      bar.value = topic.total - topic.left;
      $("progress-text").textContent = `Topic ${topic.topic}: ${topic.judged_by_you} by you, ${topic.left} left`;
    } else {
      bar.max = 1;
      bar.value = 0;
      $("progress-text").textContent = "No topics assigned to you yet";
    }
    const list = $("topic-counts");
    list.replaceChildren(
      ...p.topics.map((t) => {
        const row = document.createElement("li");
        row.textContent = `Topic ${t.topic}: you judged ${t.judged_by_you}; ${t.left} of ${t.total} left`;
        return row;
      }),
    );
  }

  /** Take a step's answer: the counts, and the leased items (the shown one stays on screen if it is among them). */
  function takeStep(data) {
    if (data.max_grade && data.max_grade !== state.maxGrade) showScale(data.max_grade);
    if (!soundChosen && typeof data.audio_on === "boolean" && data.audio_on !== prefs.sound) {
      prefs.sound = data.audio_on; // the campaign's default, not saved: the assessor's M is
      for (const player of players) player.video.muted = !prefs.sound;
      updateSound();
    }
    state.progress = data.progress;
    const next = data.next;
    if (state.back >= 0) {
      state.queue = next;
    } else if (state.shown && next.some((i) => i.task_id === state.shown.task_id)) {
      state.queue = [state.shown, ...next.filter((i) => i.task_id !== state.shown.task_id)];
    } else {
      state.queue = next;
      if (next.length) render(next[0], -1);
      else showDone();
      return;
    }
    updateCounts();
    preloadNext();
    scheduleKeyframes();
  }

  async function step(body) {
    return api("POST", "/api/judging/step", { ahead: 1, ...body });
  }

  /** Run `action` now, or after the request under way: one key press waits (and runs only if the item it was pressed
   * on is still shown, unless `any`: a break or a resume), later ones are dropped; a key never applies to an item the
   * assessor has not seen. */
  function whenFree(action, any = false) {
    if (state.inflight > 0) {
      if (state.pending === null || (any && !state.pending.any)) {
        state.pending = { action, any, task: state.shown ? state.shown.task_id : null };
        setBusy();
      }
      return;
    }
    action();
  }

  function afterRequest() {
    if (state.inflight > 0) return;
    const pending = state.pending;
    state.pending = null;
    setBusy();
    if (pending && (pending.any || pending.task === (state.shown ? state.shown.task_id : null))) pending.action();
  }

  /** A verdict (or "later") on the shown queue item: the next item shows at once, the request goes behind it. */
  function advance(body, said) {
    const item = state.shown;
    if (!item || state.back >= 0) return;
    if (body.verdict) body.seconds_spent = Math.round(performance.now() - state.shownAt) / 1000;
    state.queue = state.queue.filter((i) => i.task_id !== item.task_id);
    if (state.queue.length) render(state.queue[0], -1);
    step({ task_id: item.task_id, ...body })
      .then((data) => {
        const cue = $("topic-change");
        const newTopic = !cue.hidden && state.shown && state.shown.topic !== item.topic ? ` ${cue.textContent}` : "";
        announce(said(item) + newTopic); // the cue shown with the next shot is said after the verdict's receipt
        takeStep(data);
      })
      .catch(async (error) => {
        if (error instanceof ApiError && error.status === 409) {
          announce(await conflictMessage(item, body));
          takeStep(await step({}));
        } else {
          handleError(error);
          if (state.back < 0 && state.shown && state.shown.task_id !== item.task_id) {
            state.queue = [item, ...state.queue]; // back to the item whose verdict was not saved
            render(item, -1);
          }
        }
      })
      .catch(handleError)
      .finally(afterRequest);
  }

  /** Why a verdict (or "later") on the queue's item was refused (409): the item as the server has it says. Judged
   * already (by this assessor, in another tab or window: never overwritten but by going back), or its lease expired. */
  async function conflictMessage(item, body) {
    const stored = await api("GET", `/api/judging/items/${item.task_id}`).catch(() => null);
    if (stored && stored.verdict) {
      const yours = body.verdict ? `your ${verdictText(body.verdict, body.grade)} was not saved` : "nothing changed";
      const theirs = verdictText(stored.verdict, stored.grade);
      return `Shot ${item.shot_id} was already judged as ${theirs} in another tab or window: `
        + `${yours}. Press B to go back to it and change it.`;
    }
    return `The reservation of shot ${item.shot_id} expired and it went back to the queue: not saved.`;
  }

  /** A verdict, with its grade on a graded scale (undefined on a binary one: the request is as it always was). */
  function judge(verdict, grade) {
    whenFree(() => {
      if (state.back >= 0) changeBack(verdict, grade);
      else advance({ verdict, grade }, (item) => `Saved: ${verdictText(verdict, grade)} (shot ${item.shot_id}).`);
    });
  }

  function later() {
    whenFree(() => {
      if (state.back >= 0) {
        announce("Only the item to judge can be put off; this one is judged already.");
        return;
      }
      advance({ later: true }, (item) => `Shot ${item.shot_id} put off: it comes back at the end.`);
    });
  }

  /** A verdict on an item judged earlier: kept or changed, then back to the queue's item. */
  function changeBack(verdict, grade) {
    const item = state.shown;
    step({ task_id: item.task_id, verdict, grade, change: true })
      .then((data) => {
        const said = verdictText(verdict, grade);
        const kept = item.verdict === verdict && verdictText(item.verdict, item.grade) === said;
        if (kept) announce(`Kept: ${said} (shot ${item.shot_id}).`);
        else announce(`Changed to ${said} (shot ${item.shot_id}).`);
        state.back = -1;
        state.shown = null;
        takeStep(data);
      })
      .catch(handleError)
      .finally(afterRequest);
  }

  function goBack() {
    whenFree(() => {
      (async () => {
        const judged = await api("GET", "/api/judging/history"); // newest first
        const index = state.back + 1;
        if (index >= judged.length) {
          announce(judged.length ? "Nothing further back." : "Nothing judged yet.");
          return;
        }
        const item = await api("GET", `/api/judging/items/${judged[index]}`);
        render(item, index);
        announce(`Back to shot ${item.shot_id}: your verdict was ${verdictText(item.verdict, item.grade)}.`);
      })()
        .catch(handleError)
        .finally(afterRequest);
    });
  }

  // ---- breaks: a key (Z or Pause) or the idle timeout gives the leases back; a key resumes ------------------------

  /** Pause: the shown and preloaded shots go back to the queue (POST /api/judging/release), "Paused" until a key. */
  function pause(why) {
    whenFree(() => {
      if (state.paused || !state.token) return;
      state.paused = true;
      state.back = -1;
      state.shown = null;
      state.queue = [];
      if ($("help").open) $("help").close();
      for (const player of players) player.clear();
      $("item").hidden = true;
      delete $("item").dataset.task;
      document.querySelector(".tools").hidden = true;
      showMessage("");
      $("paused-why").textContent = why;
      $("paused").hidden = false;
      announce(`Paused. ${why} Press any key to resume.`);
      api("POST", "/api/judging/release")
        .catch(handleError)
        .finally(afterRequest);
      $("main").focus();
    }, true); // a break waits for the request under way, whatever it shows next
  }

  /** Resume after a break: ask for the next shots as usual (the leases are taken afresh). */
  function resume() {
    if (!state.paused) return;
    whenFree(() => {
      state.paused = false;
      $("paused").hidden = true;
      document.querySelector(".tools").hidden = false;
      announce("Resumed.");
      step({})
        .then(takeStep)
        .catch(handleError)
        .finally(afterRequest);
    }, true);
  }

  function noteActivity() {
    state.lastActive = performance.now();
  }

  function checkIdle() {
    if (state.paused || !prefs.idle || !state.queue.length) return;
    if (performance.now() - state.lastActive >= prefs.idle * 1000) {
      const minutes = prefs.idle >= 120 ? `${Math.round(prefs.idle / 60)} minutes` : `${prefs.idle} seconds`;
      pause(`Nothing was pressed for ${minutes}: your shots went back to the queue.`);
    }
  }

  function setIdle(seconds) {
    prefs.idle = seconds;
    savePrefs();
    noteActivity();
  }

  // ---- input ------------------------------------------------------------------------------------------------------

  function toggleHelp() {
    const help = $("help");
    if (help.open) help.close();
    else help.showModal();
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if ($("keys").open) return; // the change-keys dialog takes its own keys
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (key === "?" && $("help").open) { // closes the help from its idle setting too
      event.preventDefault();
      toggleHelp();
      return;
    }
    const target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    if (state.paused) {
      if (["Shift", "Control", "Alt", "Meta", "CapsLock", "Tab"].includes(key)) return;
      event.preventDefault();
      if (!event.repeat) resume();
      return;
    }
    if ($("help").open) {
      if (key === "?") {
        event.preventDefault();
        toggleHelp();
      }
      return; // Escape closes the dialog by itself
    }
    let action = null;
    if (key === "?") action = toggleHelp;
    else if (!state.token || ($("item").hidden && key !== keys.back && key !== "Backspace")) action = null;
    else if (keyVerdict(key)) {
      const chosen = keyVerdict(key);
      const off = `No grade ${chosen.off}: the scale runs from 0 to ${state.maxGrade}.`;
      action = chosen.off !== undefined ? () => announce(off) : () => judge(chosen.verdict, chosen.grade);
    }
    else if (key === keys.pause || key === "Pause") action = () => pause("Your shots went back to the queue.");
    else if (key === keys.later) action = later;
    else if (key === keys.back || key === "Backspace") action = goBack;
    else if (key === keys.replay) action = replay;
    else if (key === "p") action = togglePlay;
    else if (key === "m") action = toggleSound;
    else if (key === "[") action = () => changeSpeed(-1);
    else if (key === "]") action = () => changeSpeed(1);
    else if (key === "c") action = () => setContext(CONTEXTS[(CONTEXTS.indexOf(prefs.context) + 1) % CONTEXTS.length]);
    else if (key === "ArrowLeft") action = () => seekBy(-1);
    else if (key === "ArrowRight") action = () => seekBy(1);
    if (!action) return;
    event.preventDefault();
    if (!event.repeat || key === "ArrowLeft" || key === "ArrowRight") action();
  }

  function onClick(handler) {
    return (event) => {
      handler();
      event.currentTarget.blur();
      $("main").focus();
    };
  }

  function setUpControls() {
    players.push(new Player($("video-a")), new Player($("video-b")));
    for (const player of players) {
      const video = player.video;
      for (const type of ["play", "pause", "seeked", "volumechange"]) {
        video.addEventListener(type, () => {
          if (player === active()) {
            updateTimeline();
            updateSound();
          }
        });
      }
      video.addEventListener("click", () => {
        togglePlay();
        $("main").focus();
      });
    }
    const timeline = $("timeline");
    timeline.addEventListener("pointerdown", (event) => {
      timeline.setPointerCapture(event.pointerId);
      seekToPointer(event);
    });
    timeline.addEventListener("pointermove", (event) => {
      if (timeline.hasPointerCapture(event.pointerId)) seekToPointer(event);
    });
    $("play").addEventListener("click", onClick(togglePlay));
    $("sound").addEventListener("click", onClick(toggleSound));
    $("speed").addEventListener("click", onClick(() => setSpeed(SPEEDS[(SPEEDS.indexOf(prefs.speed) + 1) % SPEEDS.length])));
    const context = $("context");
    context.value = String(prefs.context);
    context.addEventListener("change", () => {
      setContext(Number(context.value));
      context.blur();
      $("main").focus();
    });
    $("speed-state").textContent = `${prefs.speed}×`;
    $("help-button").addEventListener("click", onClick(toggleHelp));
    setUpKeysDialog();
    showKeys();
    const idle = $("idle");
    if (!IDLE_CHOICES.includes(prefs.idle)) idle.append(new Option(`after ${prefs.idle} s`, String(prefs.idle)));
    idle.value = String(prefs.idle);
    idle.addEventListener("change", () => setIdle(Number(idle.value)));
    for (const type of ["keydown", "pointerdown", "pointermove", "wheel"]) {
      document.addEventListener(type, noteActivity, { capture: true, passive: true });
    }
    window.setInterval(checkIdle, 500);
    $("help-close").addEventListener("click", () => $("help").close());
    $("help").addEventListener("close", () => $("main").focus());
    updateSound();
    window.requestAnimationFrame(tick);
  }

  async function start() {
    setUpControls();
    const taken = await takeToken().catch((error) => ({ error: error.message }));
    state.token = taken.token || null;
    document.addEventListener("keydown", onKey);
    if (taken.error) {
      fatal(`Your judging link was not accepted (${taken.error}). Ask your organiser for a new link.`);
      return;
    }
    if (!state.token) {
      fatal("Open the judging link your organiser sent you (it ends in #link=...).");
      return;
    }
    // one listener for the verdict buttons, the graded scale's too (made when the first step says the scale)
    document.querySelector(".verdicts").addEventListener("click", (event) => {
      const button = event.target.closest("[data-verdict]");
      if (!button) return;
      judge(button.dataset.verdict, button.dataset.grade === undefined ? undefined : Number(button.dataset.grade));
      button.blur();
      $("main").focus();
    });
    $("back").addEventListener("click", onClick(goBack));
    $("later").addEventListener("click", onClick(later));
    $("replay").addEventListener("click", onClick(replay));
    $("pause").addEventListener("click", onClick(() => pause("Your shots went back to the queue.")));
    $("resume").addEventListener("click", onClick(resume));
    try {
      takeStep(await step({}));
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) handleError(error);
      else fatal(`The shots to judge could not be loaded (${error.message}). Reload the page to try again.`);
    } finally {
      afterRequest();
    }
  }

  start();
})();

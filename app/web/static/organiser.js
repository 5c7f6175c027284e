// The organiser page: shows the campaign's organiser view, rendered on the server, fetched with the browser session
// of an organiser signed in at /login (its HttpOnly cookie), else with an organiser token typed here (sessionStorage,
// Authorization header: never in a URL); refreshed every 10 s while the tab is visible (less often when the view
// takes long to make: never more than a tenth of the server's time). Cancel buttons post the console's cancel form
// (with the session's CSRF value) or call the API's cancel endpoint with the token.
"use strict";

(() => {
  const TOKEN_KEY = "trecpool.organiser-token";
  const REFRESH_MS = 10000;
  const SHARE = 10; // wait at least SHARE times as long as the last view took to load
  const $ = (id) => document.getElementById(id);
  const main = $("main");
  // noSession: no session cookie came with the page (the server says so: the cookie is HttpOnly), or it was refused
  const state = {
    token: sessionStorage.getItem(TOKEN_KEY), busy: false, timer: null, lastMs: 0,
    noSession: main.dataset.session !== "true",
  };

  function announce(text) {
    // cleared first so that the same message twice is announced twice
    const status = $("status");
    status.textContent = "";
    window.setTimeout(() => { status.textContent = text; }, 30);
  }

  function showMessage(text) {
    $("message").textContent = text;
    $("message").hidden = !text;
  }

  function askForToken(text) {
    state.token = null;
    sessionStorage.removeItem(TOKEN_KEY);
    $("panel").replaceChildren();
    $("forget").hidden = true;
    $("token-form").hidden = false;
    showMessage(text || "");
    $("token").focus();
  }

  async function detailOf(response) {
    const data = await response.json().catch(() => null);
    return (data && data.detail) || `HTTP ${response.status}`;
  }

  async function call(method, url, accept, body) {
    const headers = { Accept: accept };
    if (state.token) headers.Authorization = `Bearer ${state.token}`;
    return fetch(url, { method, headers, body, cache: "no-store", credentials: "same-origin" });
  }

  // the key of the focused element of the panel, to focus its new copy after a refresh
  function focusKey() {
    const active = document.activeElement;
    if (!active || !$("panel").contains(active)) return null;
    if (active.dataset.cancelUrl) return `[data-cancel-url="${active.dataset.cancelUrl}"]`;
    if (active.dataset.action) return `[data-action="${active.dataset.action}"]`;
    return null;
  }

  async function load() {
    if (state.busy || (!state.token && state.noSession)) return; // nothing to ask with until a token is typed
    state.busy = true;
    main.setAttribute("aria-busy", "true");
    const started = performance.now();
    try {
      const response = await call("GET", main.dataset.panelUrl, "text/html");
      if (response.status === 401) {
        if (!state.token) state.noSession = true; // no (live) session cookie either
        askForToken(state.token ? `The token was refused: ${await detailOf(response)}.` : "");
      } else if (response.status === 403 || response.status === 404) {
        if (!state.token) state.noSession = true; // the session is not this campaign's organiser's
        askForToken(`This token does not organise this campaign: ${await detailOf(response)}.`);
      } else if (!response.ok) {
        showMessage(`Could not load the view: ${await detailOf(response)}. Retrying.`);
      } else {
        const key = focusKey();
        $("panel").innerHTML = await response.text(); // rendered by the server, escaped there
        $("token-form").hidden = true;
        $("forget").hidden = !state.token;
        showMessage("");
        const again = key && $("panel").querySelector(key);
        if (again) again.focus();
        else if (key) main.focus();
      }
    } catch (error) {
      showMessage(`Could not reach the server (${error.message}). Retrying.`);
    } finally {
      state.lastMs = performance.now() - started;
      state.busy = false;
      main.setAttribute("aria-busy", "false");
    }
  }

  function schedule() {
    window.clearTimeout(state.timer);
    state.timer = window.setTimeout(async () => {
      if (document.visibilityState === "visible") await load();
      schedule();
    }, Math.max(REFRESH_MS, SHARE * state.lastMs));
  }

  async function cancel(button) {
    const name = button.dataset.jobName;
    button.disabled = true;
    try {
      let body;
      if (button.dataset.csrf) {
        body = new FormData();
        body.append("csrf_token", button.dataset.csrf);
      }
      const response = await call("POST", button.dataset.cancelUrl, "application/json", body);
      if (response.ok) {
        const job = await response.json();
        announce(job.status === "cancelled"
          ? `Cancelled ${name}.`
          : `Cancel requested: ${name} stops at its next progress report.`);
      } else {
        announce(`${name} was not cancelled: ${await detailOf(response)}.`);
      }
    } catch (error) {
      announce(`${name} was not cancelled: ${error.message}.`);
    }
    await load();
  }

  function start() {
    $("token-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const token = $("token").value.trim();
      if (!token) return;
      $("token").value = "";
      state.token = token;
      sessionStorage.setItem(TOKEN_KEY, token);
      load();
    });
    $("forget").addEventListener("click", () => askForToken("Token forgotten: this tab no longer holds it."));
    $("panel").addEventListener("click", (event) => {
      const target = event.target.closest("button");
      if (!target) return;
      if (target.dataset.cancelUrl) cancel(target);
      else if (target.dataset.action === "refresh") load().then(() => announce("Refreshed."));
    });
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") load(); // back to the tab: show what changed meanwhile
    });
    if (state.token || !state.noSession) load(); // by the session cookie when there is no token
    else askForToken("");
    schedule();
  }

  start();
})();

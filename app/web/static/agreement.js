// The agreement page: shows the report of a model qrels version against a human one, rendered on the server and
// fetched once with the browser session of an organiser signed in at /login (its HttpOnly cookie), else with the
// organiser's token typed here (sessionStorage, shared with the organiser page; Authorization header: never in a URL). The versions are chosen by the panel's form, a plain GET of this page.
"use strict";

(() => {
  const TOKEN_KEY = "trecpool.organiser-token";
  const $ = (id) => document.getElementById(id);
  const main = $("main");
  const state = { token: sessionStorage.getItem(TOKEN_KEY) };

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
    if (data && Array.isArray(data.errors) && data.errors.length) {
      return data.errors.map((e) => `${e.field || e.line}: ${e.message}`).join("; ");
    }
    return (data && data.detail) || `HTTP ${response.status}`;
  }

  async function load() {
    main.setAttribute("aria-busy", "true");
    $("status").textContent = "Comparing the versions…";
    try {
      const response = await fetch(main.dataset.panelUrl, {
        headers: state.token ? { Authorization: `Bearer ${state.token}`, Accept: "text/html" } : { Accept: "text/html" },
        cache: "no-store",
        credentials: "same-origin",
      });
      if (response.status === 401) {
        askForToken(state.token ? `The token was refused: ${await detailOf(response)}.` : "");
      } else if (response.status === 403 || response.status === 404) {
        askForToken(`This token does not organise this campaign: ${await detailOf(response)}.`);
      } else if (!response.ok) {
        $("token-form").hidden = true;
        $("forget").hidden = false;
        showMessage(`No report: ${await detailOf(response)}.`);
      } else {
        $("panel").innerHTML = await response.text(); // rendered by the server, escaped there
        $("token-form").hidden = true;
        $("forget").hidden = !state.token;
        showMessage("");
      }
    } catch (error) {
      showMessage(`Could not reach the server (${error.message}).`);
    } finally {
      $("status").textContent = "";
      main.setAttribute("aria-busy", "false");
    }
  }

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
  if (state.token || main.dataset.session === "true") load(); // by the session cookie when there is no token
  else askForToken("");
})();

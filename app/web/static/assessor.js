// What the assessor pages (judge.js, mark.js) share: trading a one-time link for a session token, and calling the API
// with it. Loaded before them; it defines window.trecpoolAssessor and touches nothing else.
"use strict";

(() => {
  class ApiError extends Error {
    constructor(status, detail) {
      super(detail || `HTTP ${status}`);
      this.status = status;
    }
  }

  /**
   * Trade the one-time link of the page's fragment (#link=...: browsers never send a fragment, so no server or log
   * sees it) for an assessor session token (by POST, in a header: no token is ever in a URL), keep it in sessionStorage
   * under `tokenKey`, and drop the spent link from the address bar and history. Without a link: the stored token.
   * Returns { token } or { error } (the link was refused: used, expired or unknown). A link in the query string
   * (?link=..., the old form, which the server saw) is refused and sent nowhere: the server withdrew it already.
   */
  async function takeToken(tokenKey) {
    const url = new URL(window.location.href);
    const fragment = new URLSearchParams(url.hash.slice(1));
    const link = fragment.get("link");
    const exposed = url.searchParams.has("link");
    if (exposed || link !== null) {
      url.searchParams.delete("link");
      fragment.delete("link");
      const rest = fragment.toString();
      history.replaceState(history.state, "", url.pathname + url.search + (rest ? `#${rest}` : ""));
    }
    if (exposed) {
      return {
        error: "it came in an old form, ?link=..., which sends it to the server, so it was withdrawn; "
          + "new links end in #link=...",
      };
    }
    if (!link) return { token: sessionStorage.getItem(tokenKey) };
    const response = await fetch("/api/judging/session", {
      method: "POST",
      headers: { Authorization: `Bearer ${link}`, Accept: "application/json" },
      cache: "no-store",
    });
    const data = await response.json().catch(() => null);
    if (!response.ok || !data || !data.token) {
      const stored = sessionStorage.getItem(tokenKey);
      if (stored) return { token: stored }; // a reload of a tab that already traded its link
      return { error: (data && data.detail) || `HTTP ${response.status}` };
    }
    sessionStorage.setItem(tokenKey, data.token);
    return { token: data.token };
  }

  /** One API call with the session token: the JSON answer, null for 204, an ApiError naming the fields otherwise. */
  async function request(token, method, path, body) {
    const headers = { Authorization: `Bearer ${token}`, Accept: "application/json" };
    const init = { method, headers, cache: "no-store" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    if (response.status === 204) return null;
    const data = await response.json().catch(() => null);
    if (!response.ok) {
      const fields = data && data.errors ? data.errors.map((e) => `${e.field}: ${e.message}`).join("; ") : "";
      throw new ApiError(response.status, [data && data.detail, fields].filter(Boolean).join(" — "));
    }
    return data;
  }

  window.trecpoolAssessor = Object.freeze({ ApiError, takeToken, request });
})();

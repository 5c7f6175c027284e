// /docs (Swagger UI) and /redoc: names for the controls they draw without one (WCAG 2.1: every control has a name),
// given as they appear: Swagger UI's dialog close button and request body editor, ReDoc's drop-downs (a media type,
// or one of a schema's variants).
"use strict";
(() => {
  const NAMES = [
    [".swagger-ui .close-modal", "Close"],
    [".swagger-ui textarea.body-param__text", "Request body"],
    ["select.dropdown-select", (select) => (select.value.includes("/") ? "Media type" : "Schema variant")],
  ];
  const name = () => {
    for (const [selector, label] of NAMES) {
      for (const element of document.querySelectorAll(selector)) {
        if (!element.hasAttribute("aria-label")) {
          element.setAttribute("aria-label", typeof label === "function" ? label(element) : label);
        }
      }
    }
  };
  new MutationObserver(name).observe(document.body, { childList: true, subtree: true });
  name();
})();

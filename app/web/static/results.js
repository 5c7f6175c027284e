// Sortable result tables (progressive enhancement: without script the header links rank by a measure on the server).
// Each header cell with data-sort gets a button; a press sorts that table's rows by the column (numbers from the
// cells' data-value, text otherwise), a second press reverses, and aria-sort says the order.
"use strict";

(function () {
  function key(cell, kind) {
    if (kind === "number") {
      const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent;
      const value = parseFloat(raw);
      return Number.isFinite(value) ? value : null;
    }
    return cell.textContent.trim().toLowerCase();
  }

  function sortBy(table, index, header) {
    const kind = header.dataset.sort;
    const current = header.getAttribute("aria-sort");
    // measures start best first, ranks and text start from the top
    const first = kind === "number" && index > 0 && header.classList.contains("num") && !/tier/i.test(header.textContent)
      ? "descending" : "ascending";
    const order = current === first ? (first === "ascending" ? "descending" : "ascending") : first;
    const body = table.tBodies[0];
    const rows = Array.from(body.rows).map((row, at) => ({row, at, k: key(row.cells[index], kind)}));
    const sign = order === "ascending" ? 1 : -1;
    rows.sort((a, b) => {
      if (a.k === null && b.k === null) return a.at - b.at;
      if (a.k === null) return 1;  // missing values last, either way
      if (b.k === null) return -1;
      if (a.k < b.k) return -sign;
      if (a.k > b.k) return sign;
      return a.at - b.at;
    });
    rows.forEach(item => body.appendChild(item.row));
    table.querySelectorAll("th[aria-sort]").forEach(th => th.removeAttribute("aria-sort"));
    header.setAttribute("aria-sort", order);
    // the tier lines belong to the ranked order only
    table.classList.toggle("resorted", !(index === 0 && order === "ascending"));
  }

  function enhance(table) {
    const headers = Array.from(table.tHead.rows[0].cells);
    headers.forEach((header, index) => {
      if (!header.dataset.sort) return;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      const link = header.querySelector("a");
      if (link) {
        if (link.title) button.title = link.title;
        button.textContent = link.textContent;
        link.replaceWith(button);
      } else {
        button.textContent = header.firstChild.textContent.trim();
        header.firstChild.replaceWith(button);
      }
      button.addEventListener("click", () => sortBy(table, index, header));
    });
  }

  document.querySelectorAll("table.sortable").forEach(enhance);
})();

// The organiser console's evaluations page: while a job is queued or running, poll the page's JSON twin every 2 s,
// move the progress bars, and reload the page once a job's status changes (a new status, a figure, a new job).
(() => {
  "use strict";
  const box = document.getElementById("jobs");
  if (!box || box.dataset.active !== "true") return;
  const url = box.dataset.poll;
  const shown = box.dataset.state;
  const EVERY = 2000;

  const tick = async () => {
    try {
      const answer = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin", cache: "no-store" });
      if (answer.ok) {
        const data = await answer.json();
        if (data.state !== shown) {
          window.location.reload();
          return;
        }
        for (const job of [...data.evaluations, ...data.analyses]) {
          const bar = document.getElementById(`progress-${job.key}`);
          if (bar) {
            bar.value = job.progress;
            bar.textContent = `${Math.round(100 * job.progress)} %`;
          }
        }
      } else if (answer.status === 401) {
        return; // signed out: the next reload asks to sign in
      }
    } catch (error) {
      // the server is restarting or the network is down: try again at the next tick
    }
    window.setTimeout(tick, EVERY);
  };
  window.setTimeout(tick, EVERY);
})();

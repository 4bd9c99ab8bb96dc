// semif ui: live updates of the runs page (server-sent events) and the progress of a training.
"use strict";

function liveRuns() {
  const box = document.getElementById("runs");
  if (!box || !window.EventSource) return;
  const events = new EventSource("/events");
  events.addEventListener("log", async (event) => {
    const shown = box.querySelector("[data-version]");
    if (shown && shown.dataset.version === event.data) return;
    const response = await fetch(box.dataset.live, { headers: { Accept: "text/html" } });
    if (response.ok) box.innerHTML = await response.text();
  });
  window.addEventListener("beforeunload", () => events.close());
}

function trainingProgress() {
  const box = document.getElementById("training");
  if (!box || box.dataset.state !== "running") return;
  const bar = box.querySelector("progress");
  const stage = box.querySelector(".stage");
  const timer = setInterval(async () => {
    const response = await fetch("/api/train");
    if (!response.ok) return;
    const status = await response.json();
    bar.max = status.total || 1;
    bar.value = status.done;
    stage.textContent = status.stage;
    if (status.state !== "running") {
      clearInterval(timer);
      window.location.reload();
    }
  }, 500);
}

document.addEventListener("DOMContentLoaded", () => {
  liveRuns();
  trainingProgress();
});

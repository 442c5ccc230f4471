// kafkito console: live updates by polling, and the write actions (with --http-write).
// A page whose <main> has data-poll="MS" fetches its own URL with ?fragment=1 every MS milliseconds
// (while the tab is visible, and not while a field of a form in it is being edited) and swaps the
// content in. A form with data-api="PATH" is sent by script to the JSON API as a JSON body with its
// data-method: the console refuses writes of any other content type, so no page of another site
// can make them (docs/console.md).
"use strict";
(function () {
  const main = document.getElementById("main");
  const live = document.getElementById("live");
  const status = document.getElementById("action-status");

  function editing() {
    const active = document.activeElement;
    return !!active && main.contains(active) && ["INPUT", "SELECT", "TEXTAREA"].includes(active.tagName);
  }

  async function send(form) {
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
    const body = {};
    new FormData(form).forEach((value, key) => { body[key] = value; });
    if (status) status.textContent = "";
    try {
      const response = await fetch(form.dataset.api, {
        method: form.dataset.method || "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify(body),
        cache: "no-store",
      });
      if (response.ok) {
        if (form.dataset.then) window.location.assign(form.dataset.then);
        else window.location.reload();
        return;
      }
      const answer = await response.json().catch(() => ({}));
      if (status) status.textContent = answer.error || "refused: HTTP " + response.status;
    } catch (err) {
      if (status) status.textContent = "broker unreachable";
    }
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.api) return;
    event.preventDefault();
    send(form);
  });

  if (!main || !main.dataset.poll) return;
  const every = Math.max(250, parseInt(main.dataset.poll, 10) || 2000);
  let last = main.innerHTML;
  let busy = false;

  function fragmentUrl() {
    const url = new URL(window.location.href);
    url.searchParams.set("fragment", "1");
    return url.toString();
  }

  async function refresh() {
    if (busy || document.hidden || editing()) return;
    busy = true;
    try {
      const response = await fetch(fragmentUrl(), { headers: { Accept: "text/html" }, cache: "no-store" });
      if (response.ok) {
        const html = await response.text();
        if (html !== last && !editing()) {
          const scroll = [...main.querySelectorAll(".timeline-box")].map((box) => box.scrollLeft);
          main.innerHTML = html;
          main.querySelectorAll(".timeline-box").forEach((box, i) => {
            box.scrollLeft = scroll[i] !== undefined ? scroll[i] : box.scrollWidth;
          });
          last = html;
        }
        if (live) { live.className = "live on"; live.title = "live: updated " + new Date().toLocaleTimeString(); }
      } else if (live) {
        live.className = "live off"; live.title = "live updates paused: HTTP " + response.status;
      }
    } catch (err) {
      if (live) { live.className = "live off"; live.title = "broker unreachable"; }
    } finally {
      busy = false;
    }
  }

  document.querySelectorAll(".timeline-box").forEach((box) => { box.scrollLeft = box.scrollWidth; });
  window.setInterval(refresh, every);
  document.addEventListener("visibilitychange", refresh);
})();

// kafkito console: live updates by polling. A page whose <main> has data-poll="MS" fetches its own
// URL with ?fragment=1 every MS milliseconds (while the tab is visible) and swaps the content in.
"use strict";
(function () {
  const main = document.getElementById("main");
  const live = document.getElementById("live");
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
    if (busy || document.hidden) return;
    busy = true;
    try {
      const response = await fetch(fragmentUrl(), { headers: { Accept: "text/html" }, cache: "no-store" });
      if (response.ok) {
        const html = await response.text();
        if (html !== last) {
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

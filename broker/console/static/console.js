// kafkito console: live updates by polling, and the write actions (with --http-write).
// A page whose <main> has data-poll="MS" fetches its own URL with ?fragment=1 every MS milliseconds
// (while the tab is visible, and not while a form in it is being edited or shows a preview) and
// swaps the content in. A form with data-api="PATH" is sent by script to the JSON API as a JSON body
// with its data-method: the console refuses writes of any other content type, so no page of another
// site can make them (docs/console.md). A field's data-type says how it goes into the body: int,
// nullable (empty: null), list and list-int (comma-separated), pairs ({name: value} from name=value
// lines), headers ([{key, value}] from name=value lines); an empty int or list is left out.
// A form with data-preview sends {preview: true} first and shows the answer; its button with
// data-apply sends the same body without it.
"use strict";
(function () {
  const main = document.getElementById("main");
  const live = document.getElementById("live");
  const status = document.getElementById("action-status");
  const DONE_KEY = "kafkito-console-done";

  function say(text, ok) {
    if (!status) return;
    status.textContent = text;
    status.className = "action-status" + (ok ? " ok" : "");
  }

  const done = window.sessionStorage.getItem(DONE_KEY);
  if (done) { window.sessionStorage.removeItem(DONE_KEY); say(done, true); }

  function lines(text) {
    return text.split("\n").map((line) => line.trim()).filter((line) => line.length > 0).map((line) => {
      const at = line.indexOf("=");
      return at < 0 ? [line, ""] : [line.slice(0, at).trim(), line.slice(at + 1)];
    });
  }

  function fieldValue(field) {
    const text = field.value;
    switch (field.dataset.type) {
      case "int": return text.trim() === "" ? undefined : Number(text.trim());
      case "nullable": return text === "" ? null : text;
      case "list": return text.split(",").map((s) => s.trim()).filter((s) => s);
      case "list-int": {
        const items = text.split(",").map((s) => s.trim()).filter((s) => s).map(Number);
        return items.length ? items : undefined;
      }
      case "pairs": return Object.fromEntries(lines(text));
      case "headers": return lines(text).map(([key, value]) => ({ key, value }));
      default: return text;
    }
  }

  function bodyOf(form) {
    const body = {};
    for (const field of form.elements) {
      if (!field.name || field.disabled || field.tagName === "BUTTON") continue;
      const value = fieldValue(field);
      if (value === undefined) continue;
      if (Array.isArray(value) && Array.isArray(body[field.name])) body[field.name].push(...value);
      else body[field.name] = value;
    }
    return body;
  }

  function summary(answer) {
    if (typeof answer.deleted === "string") return "deleted topic " + answer.deleted;
    if (answer.partition !== undefined && answer.offset !== undefined) {
      return "produced to partition " + answer.partition + " at offset " + answer.offset;
    }
    if (answer.topic_id) return "created topic " + answer.name;
    if (answer.set) return "configs of " + answer.topic + " changed";
    if (answer.group_id) return "offsets of " + answer.group_id + " reset";
    return "done";
  }

  function showPreview(form, answer) {
    const box = form.querySelector(".preview");
    if (!box) return;
    const table = document.createElement("table");
    table.id = "reset-preview-table";
    const head = table.createTHead().insertRow();
    for (const name of ["Partition", "Current", "New offset", "Lag after"]) {
      const th = document.createElement("th");
      th.textContent = name;
      head.appendChild(th);
    }
    const body = table.createTBody();
    for (const [partition, row] of Object.entries(answer.partitions || {})) {
      const tr = body.insertRow();
      for (const value of [partition, row.current === null ? "-" : row.current, row.offset, row.lag_after]) {
        tr.insertCell().textContent = String(value);
      }
    }
    box.replaceChildren(table);
    form.dataset.held = "1";
    const apply = form.querySelector("[data-apply]");
    if (apply) apply.hidden = false;
  }

  async function send(form, submitter) {
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
    const previewing = !!form.dataset.preview && !(submitter && submitter.dataset.apply);
    const body = bodyOf(form);
    if (form.dataset.preview) body.preview = previewing;
    say("", false);
    try {
      const response = await fetch(form.dataset.api, {
        method: form.dataset.method || "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify(body),
        cache: "no-store",
      });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) {
        say(answer.error || "refused: HTTP " + response.status, false);
        return;
      }
      if (previewing) { showPreview(form, answer); return; }
      window.sessionStorage.setItem(DONE_KEY, summary(answer));
      if (form.dataset.then) window.location.assign(form.dataset.then);
      else window.location.reload();
    } catch (err) {
      say("broker unreachable", false);
    }
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.api) return;
    event.preventDefault();
    send(form, event.submitter);
  });

  if (!main || !main.dataset.poll) return;
  const every = Math.max(250, parseInt(main.dataset.poll, 10) || 2000);
  let last = main.innerHTML;
  let busy = false;

  function editing() {
    const active = document.activeElement;
    if (active && main.contains(active) && ["INPUT", "SELECT", "TEXTAREA"].includes(active.tagName)) return true;
    for (const form of main.querySelectorAll("form[data-api]")) {
      if (form.dataset.held) return true;
      for (const field of form.elements) {
        if ((field.tagName === "INPUT" && field.type !== "hidden") || field.tagName === "TEXTAREA") {
          if (field.value !== field.defaultValue) return true;
        }
      }
    }
    return false;
  }

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

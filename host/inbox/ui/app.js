// toolgate approvals: live updates over server-sent events, and waiting
// times that tick. The page works without it: every answer is a plain
// form post.
"use strict";
(function () {
  const list = document.getElementById("list");
  if (!list) return;

  function ago(t) {
    const s = Math.max(0, Math.round((Date.now() - Date.parse(t)) / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m " + (s % 60) + "s";
    return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
  }
  function tick() {
    for (const el of document.querySelectorAll("time.since")) {
      el.textContent = "waiting " + ago(el.getAttribute("datetime"));
    }
  }

  // typing: a reason being written (or about to be) is not thrown away
  // by a refresh; the refresh waits until the field loses focus.
  function typing() {
    const a = document.activeElement;
    return a && a.tagName === "INPUT" && list.contains(a);
  }
  function signature(root) {
    return Array.from(root.querySelectorAll("article[data-id]"), (a) => a.id + ":" + a.className).join(" ") +
      "|" + root.querySelectorAll("article").length + "|" + (root.querySelector("p.empty") ? "empty" : "");
  }
  let stale = false;
  async function refresh() {
    if (typing()) { stale = true; return; }
    stale = false;
    const res = await fetch(location.pathname, { headers: { Accept: "text/html" } });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    const fresh = doc.getElementById("list");
    // Only a change of the approvals or their status rewrites the list,
    // so the page the approver reads does not churn under them.
    if (fresh && signature(fresh) !== signature(list)) { list.innerHTML = fresh.innerHTML; tick(); }
  }
  document.addEventListener("focusout", () => { if (stale) refresh(); });

  const events = new EventSource("/approvals/events");
  events.addEventListener("change", refresh);
  tick();
  setInterval(tick, 1000);
})();

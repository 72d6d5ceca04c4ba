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

  // typing: a reason being written is not thrown away by a refresh.
  function typing() {
    const a = document.activeElement;
    return a && a.tagName === "INPUT" && a.value !== "" && list.contains(a);
  }
  let stale = false;
  async function refresh() {
    if (typing()) { stale = true; return; }
    stale = false;
    const res = await fetch(location.pathname, { headers: { Accept: "text/html" } });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    const fresh = doc.getElementById("list");
    if (fresh) { list.innerHTML = fresh.innerHTML; tick(); }
  }
  document.addEventListener("focusout", () => { if (stale) refresh(); });

  const events = new EventSource("/approvals/events");
  events.addEventListener("change", refresh);
  tick();
  setInterval(tick, 1000);
})();

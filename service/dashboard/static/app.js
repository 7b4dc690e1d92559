// crawlkit dashboard: plain JavaScript, no dependencies. It loads the
// current snapshot and the chart history, then follows the server's
// Server-Sent Events stream.
"use strict";
(function () {
  const HOUR = 3600 * 1000;
  // window is how much history the chart shows: the server's
  // Config.Window, an hour until it says.
  const state = { points: [], snapshot: null, events: 0, window: HOUR };
  window.crawlDashboard = state; // for tests and the curious

  const $ = (id) => document.getElementById(id);
  const fmt = (n) => (n === undefined || n === null) ? "–" : Number(n).toLocaleString("en-US");
  const fmtRate = (n) => (n === undefined || n === null) ? "–" : Number(n).toFixed(n >= 100 ? 0 : 1);
  // fixed formats a number with d decimals, and a missing one as "–".
  const fixed = (n, d) => Number.isFinite(n) ? n.toFixed(d) : "–";
  const fmtSpan = (ms) => ms === HOUR ? "hour" : ms % HOUR === 0 ? `${ms / HOUR} hours` :
    ms % 60000 === 0 ? `${ms / 60000} minutes` : `${Math.round(ms / 1000)} seconds`;
  const fmtTime = (t) => {
    if (typeof t !== "string" || !t || t.startsWith("0001-")) return "–";
    const d = new Date(t);
    const time = d.toLocaleTimeString("en-GB");
    // The date in the same (local) time zone as the time.
    const day = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
    return d.toDateString() === new Date().toDateString() ? time : day + " " + time;
  };
  const esc = (s) => (s === undefined || s === null) ? "–" : String(s).replace(/[&<>"']/g, (c) => ({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;","'":"&#39;"}[c]));

  // fmtDur formats a duration given in milliseconds.
  const fmtDur = (ms) => !Number.isFinite(ms) ? "–" : ms < 1000 ? `${Math.round(ms)} ms` :
    ms < 60000 ? `${+(ms / 1000).toFixed(1)} s` : ms < 2 * HOUR ? `${+(ms / 60000).toFixed(1)} min` : `${+(ms / HOUR).toFixed(1)} h`;
  const plural = (n, one, many) => `${fmt(n)} ${Number(n) === 1 ? one : many}`;
  // count reads a count that may be missing or of the wrong type as 0.
  const count = (n) => Number.isFinite(n) && n > 0 ? n : 0;

  function setText(id, v) { const el = $(id); if (el) el.textContent = v; }

  function rows(tbodySel, list, render, empty) {
    const tb = document.querySelector(tbodySel);
    if (!list || list.length === 0) { tb.innerHTML = `<tr><td class="muted" colspan="4">${empty}</td></tr>`; return; }
    tb.innerHTML = list.map(render).join("");
  }

  function render(s) {
    state.snapshot = s;
    // Missing parts show as dashes.
    const tp = s.throughput || {}, u = s.urls || {}, hosts = s.hosts || {}, workers = s.workers || {};
    setText("tp-current", fmtRate(tp.current));
    setText("tp-average", fmtRate(tp.average));
    setText("tp-peak", fmtRate(tp.peak));
    setText("urls-fetched", fmt(u.fetched));
    setText("urls-successful", fmt(u.successful));
    setText("urls-failed", fmt(u.failed));
    setText("urls-retried", fmt(u.retried));
    setText("urls-queued", fmt(u.queued));
    setText("urls-discovered", fmt(u.discovered));
    setText("urls-duplicates", fmt(u.duplicate_content));
    setText("hosts-discovered", fmt(hosts.discovered));
    setText("hosts-active", fmt(hosts.active));
    setText("hosts-blocked", fmt(hosts.blocked));
    setText("workers-active", fmt(workers.active));
    setText("workers-idle", fmt(workers.idle));
    setText("workers-parked", fmt(workers.parked));
    setText("clock", "updated " + fmtTime(s.time));

    const bands = s.queue_by_band || [];
    const maxBand = Math.max(1, ...bands);
    rows("#bands tbody", bands, (n, i) =>
      `<tr><td>band ${i}</td><td class="num" id="band-${i}">${fmt(n)}</td><td style="width:55%"><div class="bar" style="width:${(100 * n / maxBand).toFixed(1)}%"></div></td></tr>`,
      "no bands reported");
    const e = s.errors || {};
    const cats = [["network", "network"], ["timeout", "timeout"], ["http_4xx", "HTTP 4xx"], ["http_5xx", "HTTP 5xx"], ["robots", "robots.txt"], ["trap", "spider trap"]];
    const maxErr = Math.max(1, ...cats.map(([k]) => e[k] || 0));
    rows("#errors tbody", cats, ([k, label]) =>
      `<tr><td>${label}</td><td class="num" id="err-${k}">${fmt(e[k] || 0)}</td><td style="width:55%"><div class="bar" style="background:#ff6b6b;width:${(100 * (e[k] || 0) / maxErr).toFixed(1)}%"></div></td></tr>`, "");
    rows("#top-hosts tbody", s.top_hosts, (h) =>
      `<tr><td><a href="#" data-host="${esc(h.host)}">${esc(h.host)}</a></td><td class="num">${fmt(h.recent)}</td><td class="num">${fmt(h.fetched)}</td><td class="num">${fmt(h.errors)}</td></tr>`,
      "no fetches yet");
    rows("#blocked-hosts tbody", s.blocked_hosts, (h) =>
      `<tr><td><a href="#" data-host="${esc(h.host)}">${esc(h.host)}</a></td><td>${esc(h.reason)}</td><td>${fmtTime(h.until)}</td></tr>`,
      "none");
    reasons("#not-fetched tbody", s.not_fetched);
    reasons("#deferred tbody", s.deferred);
    reasons("#links-rejected tbody", s.links_rejected);
    setText("waiting", waitingText(s.waiting));
    cluster(s.cluster);
    rows("#workers tbody", s.worker_list, (w) =>
      `<tr><td>${esc(w.id)}${w.active ? "" : ' <span class="muted">(idle)</span>'}</td><td class="num">${fmt(w.leased)}</td><td class="num">${fmt(w.fetched)}</td><td>${fmtTime(w.last_seen)}</td></tr>`,
      "no workers seen");
  }

  // cluster shows the nodes and partitions of a distributed crawl, and
  // hides the panel for a crawl on one machine.
  function cluster(c) {
    const panel = $("cluster");
    if (!c || typeof c !== "object") { panel.hidden = true; return; }
    panel.hidden = false;
    const nodes = Array.isArray(c.nodes) ? c.nodes : [], parts = Array.isArray(c.partitions) ? c.partitions : [];
    const owned = parts.filter((p) => p && p.owner).length;
    setText("cluster-summary", `${plural(nodes.length, "node", "nodes")}, ${fmt(owned)} of ${plural(parts.length, "partition", "partitions")} owned, lag ${fmt(count(c.lag))}`);
    rows("#cluster-nodes tbody", nodes, (n) => n.error ?
      `<tr><td>${esc(n.id)}</td><td class="error" colspan="5">${esc(n.error)}</td></tr>` :
      `<tr><td title="${esc(n.address)}">${esc(n.id)}</td><td class="num">${fmt(n.partitions)}</td><td class="num">${fmt(n.held)}</td><td class="num">${fmt(n.fetched)}</td><td class="num">${fmtRate(n.rate)}</td><td class="num">${fmtRate(n.average)}</td></tr>`,
      "no nodes");
    rows("#cluster-partitions tbody", parts, (p) => p.error ?
      `<tr><td>${fmt(p.id)}</td><td class="error" colspan="5">${esc(p.error)}</td></tr>` :
      `<tr><td>${fmt(p.id)}</td><td>${p.owner ? esc(p.owner) : '<span class="muted">moving</span>'}</td><td class="num">${fmt(p.pending)}</td><td class="num">${fmt(p.ack_pending)}</td><td class="num">${fmt(p.lag)}</td><td class="num">${fmt(p.ack_floor)} / ${fmt(p.last_seq)}</td></tr>`,
      "no partitions");
  }

  // reasons fills a table of reason counts (an object of reason name to
  // count), the most frequent first.
  function reasons(sel, m) {
    const list = m && typeof m === "object" && !Array.isArray(m) ?
      Object.entries(m).filter(([, n]) => count(n) > 0).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) : [];
    const top = Math.max(1, ...list.map(([, n]) => n));
    rows(sel, list, ([k, n]) =>
      `<tr data-reason="${esc(k)}"><td>${esc(k)}</td><td class="num">${fmt(n)}</td><td style="width:40%"><div class="bar" style="background:#e0a040;width:${(100 * n / top).toFixed(1)}%"></div></td></tr>`,
      "none reported");
  }

  // waitingText says what the crawl waits for, or "–" when the source
  // does not say.
  function waitingText(w) {
    if (!w || typeof w !== "object") return "–";
    const parts = [];
    if (count(w.in_flight)) parts.push(plural(w.in_flight, "fetch", "fetches") + " in flight");
    if (count(w.crawl_delay_hosts)) {
      parts.push(`politeness delay of ${plural(w.crawl_delay_hosts, "host", "hosts")}` +
        (count(w.longest_crawl_delay_ns) ? ` (longest ${fmtDur(w.longest_crawl_delay_ns / 1e6)})` : ""));
    }
    if (count(w.robots_retry_hosts)) {
      const next = fmtTime(w.next_robots_retry);
      parts.push(`robots.txt of ${plural(w.robots_retry_hosts, "host", "hosts")}` + (next !== "–" ? `, next try ${next}` : ""));
    }
    if (count(w.retry_after_hosts)) {
      const until = fmtTime(w.retry_after_until);
      parts.push(`Retry-After of ${plural(w.retry_after_hosts, "host", "hosts")}` + (until !== "–" ? `, until ${until}` : ""));
    }
    if (count(w.login_hosts)) parts.push(`login of ${plural(w.login_hosts, "host", "hosts")}`);
    return parts.length ? parts.join(" · ") : "nothing";
  }

  function addPoint(p) {
    state.points.push(p);
    const cut = new Date(p.time).getTime() - state.window;
    while (state.points.length && new Date(state.points[0].time).getTime() < cut) state.points.shift();
  }

  function drawChart() {
    const c = $("chart");
    const dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth || 960, h = c.clientHeight || 220;
    c.width = w * dpr; c.height = h * dpr;
    const g = c.getContext("2d");
    g.scale(dpr, dpr);
    g.clearRect(0, 0, w, h);
    const pts = state.points;
    const left = 44, bottom = 20, top = 8, right = 8;
    const pw = w - left - right, ph = h - top - bottom;
    const end = pts.length ? new Date(pts[pts.length - 1].time).getTime() : Date.now();
    // The axis spans the data, from one minute up to the window kept.
    const first = pts.length ? new Date(pts[0].time).getTime() : end;
    const span = Math.min(state.window, Math.max(60 * 1000, end - first));
    const start = end - span;
    let ymax = 1;
    for (const p of pts) ymax = Math.max(ymax, p.throughput || 0);
    ymax = niceCeil(ymax * 1.1);
    g.strokeStyle = "#2a3541"; g.fillStyle = "#8a96a3"; g.font = "11px system-ui, sans-serif"; g.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = top + ph - (ph * i) / 4;
      g.beginPath(); g.moveTo(left, y); g.lineTo(left + pw, y); g.stroke();
      g.fillText(fmtRate((ymax * i) / 4), 4, y + 4);
    }
    for (let i = 0; i <= 4; i++) {
      const x = left + (pw * i) / 4;
      const ago = (span * (4 - i)) / 4 / 1000;
      const label = i === 4 ? "now" : ago >= 7200 ? `-${Math.round(ago / 3600)}h` : ago >= 120 ? `-${Math.round(ago / 60)}m` : `-${Math.round(ago)}s`;
      g.fillText(label, Math.min(x - 10, w - 28), h - 4);
    }
    if (pts.length > 0) {
      g.strokeStyle = "#4fb3ff"; g.lineWidth = 2; g.beginPath();
      pts.forEach((p, i) => {
        const x = left + (pw * (new Date(p.time).getTime() - start)) / span;
        const y = top + ph - (ph * (p.throughput || 0)) / ymax;
        if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
      });
      g.stroke();
      if (pts.length === 1) {
        // One point makes no line: show it as a dot.
        const p = pts[0];
        g.beginPath();
        g.arc(left + (pw * (new Date(p.time).getTime() - start)) / span, top + ph - (ph * (p.throughput || 0)) / ymax, 3, 0, 2 * Math.PI);
        g.fillStyle = "#4fb3ff"; g.fill();
        g.beginPath();
      }
      g.lineTo(left + pw, top + ph); g.lineTo(left + (pw * Math.max(0, new Date(pts[0].time).getTime() - start)) / span, top + ph);
      g.closePath(); g.fillStyle = "rgba(79,179,255,0.12)"; g.fill();
    }
    const info = $("chart-info");
    info.dataset.points = String(pts.length);
    info.textContent = `${pts.length} samples`;
  }

  function niceCeil(v) {
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function dl(pairs) {
    return "<dl>" + pairs.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join("") + "</dl>";
  }

  // getJSON fetches path; analysis requests carry the API token when the
  // operator typed one.
  async function getJSON(path, auth) {
    const headers = { "Accept": "application/json" };
    const tok = auth ? String($("token-input").value || "").trim() : "";
    if (tok) headers["Authorization"] = "Bearer " + tok;
    const r = await fetch(path, { headers });
    const body = await r.json().catch(() => ({}));
    if (r.status === 401 && auth) {
      $("token-row").hidden = false;
      throw new Error(tok ? "the API token was refused" : "enter the API token above to analyze");
    }
    if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
    return body;
  }

  async function analyzeURL(u) {
    const out = $("url-result");
    out.textContent = "…";
    try {
      const r = await getJSON("api/url?url=" + encodeURIComponent(u), true);
      const rb = r.robots;
      const robots = rb ? (rb.error ? `<span class="error">${esc(rb.error)}</span>` :
        `<span class="${rb.allowed ? "allowed" : "disallowed"}">${rb.allowed ? "allowed" : "disallowed"}</span> (${esc(rb.reason)}${rb.rule ? ": " + esc(rb.rule) : ""})`) : "–";
      const fetches = (r.fetches || []).map((f) =>
        `${fmtTime(f.time)} · ${f.status ? fmt(f.status) : esc(f.category || "error")} · ${fmt(f.duration_ms)} ms${f.content_hash ? " · " + esc(f.content_hash) : ""}${f.error ? ' · <span class="error">' + esc(f.error) + "</span>" : ""}`).join("<br>") || "none";
      out.innerHTML = dl([["normalized", esc(r.normalized)], ["host", `<a href="#" data-host="${esc(r.host)}">${esc(r.host)}</a>`], ["state", `<span id="url-state">${esc(r.state)}</span>`],
        ["robots", robots], ["crawl delay", r.crawl_delay_ms ? fmt(r.crawl_delay_ms) + " ms" : "none"],
        ["links", `${fmt(r.in_links)} in · ${fmt(r.out_links)} out`], ["fetches", fetches]].concat(r.trap_reason ? [["trap", esc(r.trap_reason)]] : []));
    } catch (err) { out.innerHTML = `<span class="error">${esc(err.message)}</span>`; }
  }

  async function analyzeHost(h) {
    const out = $("host-result");
    out.textContent = "…";
    try {
      const r = await getJSON("api/host?host=" + encodeURIComponent(h), true);
      const rb = r.robots;
      const robots = rb ? `${esc(rb.source)}${rb.status ? " (HTTP " + fmt(rb.status) + ")" : ""}${rb.error ? ' <span class="error">' + esc(rb.error) + "</span>" : ""}, expires ${fmtTime(rb.expires)}` : "not fetched";
      const paths = rb && rb.blocked_paths && rb.blocked_paths.length ? rb.blocked_paths.map(esc).join("<br>") : "none";
      out.innerHTML = dl([["host", esc(r.host)], ["discovered", fmt(r.discovered)], ["fetched", `<span id="host-fetched">${fmt(r.fetched)}</span>`], ["blocked", fmt(r.blocked)],
        ["avg response", fixed(r.avg_response_ms, 1) + " ms"], ["error rate", fixed(100 * r.error_rate, 1) + " %"],
        ["robots.txt", robots], ["crawl delay", rb && rb.crawl_delay_ms ? fmt(rb.crawl_delay_ms) + " ms" : "none"], ["blocked paths", paths]]
        .concat(r.blocked_until && !r.blocked_until.startsWith("0001-") ? [["blocked until", fmtTime(r.blocked_until)]] : []));
    } catch (err) { out.innerHTML = `<span class="error">${esc(err.message)}</span>`; }
  }

  $("url-form").addEventListener("submit", (ev) => { ev.preventDefault(); const v = $("url-input").value.trim(); if (v) analyzeURL(v); });
  $("host-form").addEventListener("submit", (ev) => { ev.preventDefault(); const v = $("host-input").value.trim(); if (v) analyzeHost(v); });
  document.addEventListener("click", (ev) => {
    const a = ev.target.closest("a[data-host]");
    if (!a) return;
    ev.preventDefault();
    $("host-input").value = a.dataset.host;
    analyzeHost(a.dataset.host);
  });
  window.addEventListener("resize", drawChart);

  async function start() {
    try {
      const r = await getJSON("api/snapshot");
      if (r.window_ms > 0) state.window = r.window_ms;
      if (r.analysis_token) $("token-row").hidden = false;
      setText("chart-window", fmtSpan(state.window));
      state.points = []; // a restart reloads the whole history
      (r.history || []).forEach(addPoint);
      if (r.snapshot) render(r.snapshot);
      drawChart();
    } catch (err) { setText("conn", "error: " + err.message); }
    const es = new EventSource("api/events");
    es.onopen = () => { const c = $("conn"); c.textContent = "live"; c.className = "conn on"; };
    es.onerror = () => {
      const c = $("conn"); c.textContent = "reconnecting…"; c.className = "conn off";
      // The browser retries a dropped stream by itself, but gives up for
      // good on an answer that is not a 200 event stream (a proxy's 502
      // while the server restarts, a closed dashboard's 503): start over.
      if (es.readyState === EventSource.CLOSED) { es.close(); setTimeout(start, 2000); }
    };
    es.addEventListener("sample", (ev) => {
      const m = JSON.parse(ev.data);
      state.events++;
      if (m.point) addPoint(m.point);
      if (m.snapshot) render(m.snapshot);
      drawChart();
    });
  }
  start();
})();

// harness.js runs the dashboard's app.js in Node under a minimal stand-in
// for the browser's DOM, for page_test.go: node harness.js app.js input.json
//
// input.json: {"responses": {"api/snapshot": body, "api/url": body, ...},
// "statuses": {"api/url": 401, ...}, "events": [data...], "url": "...",
// "host": "...", "token": "..."}. The page loads api/snapshot, receives each
// event's data as a "sample" event, then analyzes url and host with its
// forms, with token typed into the token field. The harness prints
// {"errors": [...], "elements": {id: {"text": ..., "html": ..., "data": ...,
// "hidden": ...}}, "points": n, "requests": [{"path": ..., "headers": ...}]}:
// the errors thrown, what the page put in each element, and what it asked
// for.
"use strict";
const fs = require("fs");
const [appPath, inputPath] = process.argv.slice(2);
const input = JSON.parse(fs.readFileSync(inputPath, "utf8"));
const errors = [];
const record = (e) => errors.push(String((e && e.stack) || e));
process.on("uncaughtException", record);
process.on("unhandledRejection", record);

const elements = {};
function element(id) {
  if (!elements[id]) {
    const listeners = {};
    elements[id] = {
      id, textContent: "", innerHTML: "", className: "", value: "", dataset: {}, style: {}, hidden: true,
      clientWidth: 960, clientHeight: 220, width: 0, height: 0, listeners,
      addEventListener(type, f) { listeners[type] = f; },
      // A 2D context that accepts every call and assignment.
      getContext() { return new Proxy({}, { get: (t, k) => (k in t ? t[k] : () => {}), set: (t, k, v) => { t[k] = v; return true; } }); },
    };
  }
  return elements[id];
}
global.document = { getElementById: element, querySelector: element, addEventListener() {} };
global.window = { addEventListener() {}, devicePixelRatio: 1 };
const requests = [];
global.fetch = async (path, opts) => {
  requests.push({ path, headers: (opts && opts.headers) || {} });
  const key = path.split("?")[0];
  const body = input.responses[key];
  const status = (input.statuses || {})[key] || (body !== undefined ? 200 : 404);
  return {
    ok: status >= 200 && status < 300, status,
    json: async () => { if (body === undefined) throw new Error("no body"); return JSON.parse(JSON.stringify(body)); },
  };
};
class EventSource {
  constructor() { EventSource.last = this; this.readyState = 1; this.listeners = {}; }
  addEventListener(type, f) { this.listeners[type] = f; }
  close() { this.readyState = EventSource.CLOSED; }
}
EventSource.CLOSED = 2;
global.EventSource = EventSource;

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
(async () => {
  require(appPath);
  await settle();
  for (const data of input.events || []) {
    try { EventSource.last.listeners.sample({ data: JSON.stringify(data) }); } catch (e) { record(e); }
  }
  const submit = (form, inputID, value) => {
    if (value === undefined) return;
    element(inputID).value = value;
    try { element(form).listeners.submit({ preventDefault() {} }); } catch (e) { record(e); }
  };
  if (input.token !== undefined) element("token-input").value = input.token;
  submit("url-form", "url-input", input.url);
  submit("host-form", "host-input", input.host);
  for (let i = 0; i < 5; i++) await settle();
  const out = {};
  for (const [id, el] of Object.entries(elements)) out[id] = { text: String(el.textContent), html: String(el.innerHTML), data: el.dataset, hidden: el.hidden !== false };
  process.stdout.write(JSON.stringify({ errors, elements: out, points: global.window.crawlDashboard.points.length, requests }));
})().catch(record);

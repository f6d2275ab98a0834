// p4scope's live dashboard: state pushed by the server (server-sent events,
// /events), series reduced there to one value per pixel column. A case
// other than the newest, or a zoomed window, is asked for once
// (/api/series) when the user picks it. Every series comes in bytes (v) and
// packets (p) on the same columns, so the unit toggle and the time x port
// heatmap need nothing more from the server.
"use strict";

const S = {
  status: null, cases: [], byId: {}, series: {}, selected: null, follow: true,
  cursor: null,          // ns within the shown case; null: its end
  zoom: null,            // {id, t0, t1, data} while zoomed in
  inflight: null,        // the case being measured, as far as virtual time got
  ended: false, playing: null,
  unit: "bytes",         // occupancy shown in bytes or packets
};
// what a test (or a curious user) can read: updates applied, their times
const stats = window.p4scopeLive = { updates: 0, times: [], states: {}, statusCount: 0,
                                     casesSeen: 0, seriesSeen: 0, inflightSeen: 0, ended: false };

const $ = (id) => document.getElementById(id);
const nf = new Intl.NumberFormat("en-US");
const fmtInt = (v) => (v === null || v === undefined || !isFinite(v)) ? "–" : nf.format(Math.round(v));
const fmtUs = (ns) => (ns === null || ns === undefined || !isFinite(ns)) ? "–" :
  (ns / 1000).toLocaleString("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 3 });
function fmtBytes(v, unit) {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  return fmtInt(v) + (unit === "frames" ? " frames" : unit === "packets" ? " packets" : " B");
}
function fmtMiB(v, unit) {
  if (v === null || v === undefined || !isFinite(v) || unit === "frames" || unit === "packets") return "";
  return (v / 1048576).toFixed(3) + " MiB";
}
function fmtTime(ns) {
  if (ns === null || ns === undefined || !isFinite(ns)) return "–";
  if (ns < 1e6) return fmtUs(ns) + " µs";
  return (ns / 1e6).toFixed(3) + " ms";
}
function fmtWall(s) {
  if (s === null || s === undefined) return "–";
  const m = Math.floor(s / 60);
  return (m ? m + " min " : "") + (s - 60 * m).toFixed(1) + " s";
}
function setValue(id, value, text) {
  const el = $(id);
  el.dataset.value = (value === null || value === undefined) ? "" : String(value);
  el.textContent = text;
}

function counted() {
  const now = performance.now();
  if (!stats.updates) stats.first = now;
  stats.last = now;
  stats.updates += 1;
  stats.times.push(now);
  while (stats.times.length && now - stats.times[0] > 2000) stats.times.shift();
}
function updateRate() {
  const t = stats.times;
  if (t.length < 2) return 0;
  return (t.length - 1) / ((t[t.length - 1] - t[0]) / 1000 || 1);
}
function showRate() {  // over the last 2 s while updates come; replays push once
  const replay = S.status && S.status.mode === "replay";
  $("update-rate").textContent = replay ? "–" : S.ended ? stats.rateAtEnd : updateRate().toFixed(1);
  $("update-count").textContent = `${stats.updates} updates pushed` + (S.ended && !replay ? " (rate before the end)" : "");
}

// ----- status ------------------------------------------------------------------

function renderStatus() {
  const st = S.status;
  if (!st) return;
  const attach = st.mode === "attach";
  $("mode").textContent = st.mode === "replay" ? "replay" : attach ? "watch" : "live";
  $("run-id").textContent = (st.experiment ? st.experiment + " · " : "") + (st.run_id || "");
  const state = $("state");
  state.textContent = st.state + (st.state === "partial" && st.reason ? ": " + st.reason : "");
  state.className = "state state-" + st.state;
  const p = $("progress");
  const frac = st.current ? st.current.fraction : 0;
  p.value = st.planned ? Math.min(1, (st.done + frac) / st.planned) : (st.state === "complete" ? 1 : 0);
  let text = `${st.done}/${st.planned} cases`;
  if (st.current) {
    const v = st.current.virtual_ns;
    text += ` · measuring ${st.current.label} (${Math.round(100 * st.current.fraction)} %` +
            (v !== null && v !== undefined ? `, virtual clock ${fmtTime(v)})` : ")");
  }
  else if (st.state === "complete") text += " · complete";
  else if (st.state === "partial") text += " · ended partial";
  else if (st.state === "starting") text = "starting (compiling the DUT, starting the switch)";
  if (attach) text = sourcesText(st.sources || {});
  // a watched switch has no cases to pick nor a replay to slide through
  for (const el of [$("progress"), $("case-select").parentElement, $("follow").parentElement,
                    document.querySelector(".slider-box"), $("virtual-total").parentElement,
                    $("cases-table").parentElement])
    el.hidden = attach;
  $("virtual-total").parentElement.hidden = attach || st.clock === "wall";  // no virtual time
  $("progress-text").textContent = text;
  $("wall-clock").textContent = st.mode === "replay" ? "replay" : fmtWall(st.wall_s);
  $("virtual-total").textContent = fmtTime(st.virtual_ns);
  const tot = st.totals, pk = S.unit === "packets";
  const u = pk ? "packets" : tot.peak_unit;
  const truth = pk ? tot.peak_truth_pkts : tot.peak_truth;
  const instr = pk ? tot.peak_instrument_pkts : tot.peak_instrument;
  setValue("peak-truth", truth, fmtBytes(truth, u));
  $("peak-truth-sub").textContent = (pk ? "the stored series' highest level" : fmtMiB(truth, u)) +
    (st.cases_shown ? " · largest of all cases" : "");
  setValue("peak-instrument", instr, fmtBytes(instr, u));
  $("peak-instrument-sub").textContent = attach ? "since the watch began" :
    pk ? "what a reported packet left behind, itself included" : fmtMiB(instr, u);
  if (attach) $("peak-truth-sub").textContent = "no ground truth: a running switch";
  if (st.truth) {  // a Mininet run: the links' queues stand in for the ground truth
    $("peak-truth").previousElementSibling.textContent = "peak occupancy, link queues";
    $("peak-truth-sub").textContent = st.truth;
    $("burst-count-truth").previousElementSibling.textContent = "bursts, link queues";
    $("burst-count-truth").nextElementSibling.textContent = "the same rule, on " + st.truth;
    $("peak-instrument-sub").textContent = "the DUT's own queues, since the run began";
  }
  setValue("burst-count", tot.bursts_instrument, fmtInt(tot.bursts_instrument));
  setValue("burst-count-truth", tot.bursts_truth, fmtInt(tot.bursts_truth));
  setValue("drops", tot.drops, fmtInt(tot.drops));
  $("drops-sub").textContent = tot.sent ? `frames, of ${fmtInt(tot.sent)} sent` : "frames";
  showRate();
  $("update-count").textContent = `${stats.updates} updates pushed`;
  $("footer").textContent = st.path ? `run folder: ${st.path}` +
    (st.mode === "live" && S.ended ? ` · replay: p4scope watch ${st.path}` : "") : "";
}

// what a watch of a running switch reads, and how it goes
function sourcesText(src) {
  const out = [];
  const rt = src.p4runtime, rep = src.reports;
  if (rt) out.push(`P4Runtime ${rt.address} (read-only): ${rt.polls} reads, measured ports ` +
                   `${(rt.ports || []).join(", ") || "none yet"}` + (rt.errors ? `, ${rt.errors} failed` : ""));
  if (rep) out.push(`INT reports on udp ${rep.address}: ${fmtInt(rep.received)} received` +
                    (rep.lost ? `, ${fmtInt(rep.lost)} lost` : "") + (rep.malformed ? `, ${rep.malformed} malformed` : ""));
  return out.join(" · ") || "attaching…";
}

// ----- cases -------------------------------------------------------------------

function addCases(list) {
  for (const c of list) {
    if (!(c.id in S.byId)) S.cases.push(c);
    else S.cases[S.cases.findIndex((x) => x.id === c.id)] = c;
    S.byId[c.id] = c;
  }
  stats.casesSeen = S.cases.length;
  if (S.inflight && S.inflight.id in S.byId) S.inflight = null;  // stored now: its final figures
  const sel = $("case-select");
  sel.innerHTML = "";
  for (const c of S.cases) {
    const o = document.createElement("option");
    o.value = c.id; o.textContent = `${c.index + 1}. ${c.label}`;
    sel.appendChild(o);
  }
  if (S.follow && S.cases.length) select(S.cases[S.cases.length - 1].id, true);
  else if (S.selected) sel.value = S.selected;
  renderCasesTable();
}

function renderCasesTable() {
  const tb = $("cases-table").querySelector("tbody");
  tb.innerHTML = "";
  for (const c of S.cases) {
    const tr = document.createElement("tr");
    if (c.id === S.selected) tr.className = "selected";
    tr.dataset.case = c.id;
    cells(tr, [c.index + 1, [c.label, "text"], [c.status, "text"], fmtInt(c.peak_truth),
               fmtInt(c.peak_instrument), `${c.bursts_instrument} / ${c.bursts_truth}`,
               fmtInt(c.drops)]);
    tr.addEventListener("click", () => { setFollow(false); select(c.id); });
    tb.appendChild(tr);
  }
}

function cells(tr, values) {
  for (const v of values) {
    const td = document.createElement("td");
    if (Array.isArray(v)) { td.textContent = v[0]; td.className = v[1]; } else td.textContent = v;
    tr.appendChild(td);
  }
}

function setFollow(on) { S.follow = on; $("follow").checked = on; }

function select(id, fromFollow) {
  const changed = S.selected !== id;
  S.selected = id;
  $("case-select").value = id;
  if (changed) { S.zoom = null; if (!S.playing) { S.cursor = null; $("slider").value = 1000; } }
  if (!(id in S.series)) fetchSeries(id);
  if (!fromFollow) renderCasesTable();
  else for (const tr of $("cases-table").querySelectorAll("tbody tr"))
    tr.className = tr.dataset.case === id ? "selected" : "";
  renderCase();
}

async function fetchSeries(id, t0, t1) {
  const px = Math.max(200, Math.min(3000, Math.round($("occupancy-plot").clientWidth || 1200)));
  let q = `/api/series?case=${encodeURIComponent(id)}&px=${px}`;
  if (t0 !== undefined) q += `&t0=${Math.floor(t0)}&t1=${Math.ceil(t1)}`;
  try {
    const r = await fetch(q);
    if (!r.ok) return;
    const data = await r.json();
    if (t0 === undefined) S.series[id] = data;
    else if (S.selected === id) S.zoom = { id, t0, t1, data };
    if (S.selected === id) renderCase();
  } catch (e) { /* the server went away: keep what is drawn */ }
}

// ----- the shown case: plots, bursts, clock --------------------------------------

function span(c) { return c ? c.span : [0, 0]; }
function cursorNs() {
  const c = S.byId[S.selected];
  if (!c) return null;
  if (S.cursor === null) return span(c)[1];
  return S.cursor;
}

function clip(t, v, until) {
  if (until === null) return [t, v];
  let n = 0;
  while (n < t.length && t[n] <= until) n++;
  return [t.slice(0, n), v.slice(0, n)];
}

const COLORS = ["#1f6feb", "#d1242f", "#1a7f37", "#8250df", "#bf8700", "#0e8a9c", "#cf5f00", "#6e7781"];

// a window of wall clock (a Mininet run, a watched switch) stays as it ended
function showingInflight() { return S.follow && S.inflight && (!S.ended || S.inflight.clock === "wall"); }

function renderInflight() {
  const d = S.inflight;
  const wall = d.clock === "wall";
  $("cursor-time").textContent = "live";
  $("virtual-clock").textContent = wall ? `last ${fmtWallSpan(d.t1 - d.t0)} (wall clock)`
                                        : `${fmtTime(d.virtual_ns)} (case in flight)`;
  renderBursts(d.bursts ? d : null, null, wall ? d.t0 : 0);
  $("bursts-note").textContent = d.bursts ? "(as the instrument reports them: start, peak, end, who built them)"
                                          : "(measuring: the bursts show when the case is stored)";
  renderDrops(d.drops || null);
  // the shares move slowly: redrawn once a second (drawing is what a page costs a run)
  const now = performance.now();
  const shares = !S.sharesAt || now - S.sharesAt > 1000 || S.sharesOf !== d.id;
  if (shares) { S.sharesAt = now; S.sharesOf = d.id; }
  drawPlots(d, { label: wall ? d.label : `measuring ${d.label}`, peak_unit: "bytes", bursts: d.bursts || [] },
            null, "inflight", !shares);
}

function fmtWallSpan(ns) {
  return (!isFinite(ns) || ns <= 0) ? "–" : fmtWall(ns / 1e9);
}

function renderCase() {
  if (showingInflight()) { renderInflight(); return; }
  $("bursts-note").textContent = "(as detected: start, peak, end, size)";
  const c = S.byId[S.selected];
  const data = S.zoom && S.zoom.id === S.selected ? S.zoom.data : S.series[S.selected];
  const cur = cursorNs();
  $("cursor-time").textContent = c ? (S.cursor === null ? `end · ${fmtTime(cur)}` : fmtTime(cur)) : "–";
  $("virtual-clock").textContent = c ? `${fmtTime(cur)} of ${fmtTime(span(c)[1])}` : "–";
  renderBursts(c, cur, 0);
  renderDrops(c ? c.pairs || [] : null);
  if (!c || !data) { drawEmpty(); return; }
  drawPlots(data, c, S.cursor === null ? null : S.cursor, S.selected + (S.zoom ? ":z" : ""));
}

// the series' values in the unit shown (packets: p, bytes: v)
function vals(s) { return S.unit === "packets" ? (s.p || []) : s.v; }
// the time axis: virtual time in µs, or a switch watched in seconds of wall clock
function axis(data) {
  return data.clock === "wall" ? { scale: 1e9, origin: data.t1, title: "seconds (0: now)" }
                               : { scale: 1e3, origin: 0, title: "virtual time (µs)" };
}

function drawPlots(data, c, until, revision, occupancyOnly) {
  const unit = S.unit;
  const ax = axis(data);
  const X = (ns) => (ns - ax.origin) / ax.scale;
  const occ = [];
  data.reports.forEach((r, i) => {     // under the ground truth, which they should match
    const [t, v] = clip(r.t, vals(r), until);
    occ.push({ x: t.map(X), y: v, type: "scatter", mode: "markers",
               marker: { size: 7, color: ["rgba(227,98,9,0.45)", "rgba(130,80,223,0.45)"][i % 2] },
               name: `instrument reports, ${r.name}` });
  });
  data.queues.forEach((q, i) => {
    const [t, v] = clip(q.t, vals(q), until);
    occ.push({ x: t.map(X), y: v, type: "scatter", mode: data.clock === "wall" ? "lines+markers" : "lines",
               line: { shape: "hv", width: 2, color: COLORS[i % COLORS.length] }, connectgaps: false,
               name: data.clock === "wall" ? q.name : `ground truth, ${q.name}` });
  });
  const xr = [X(data.t0), X(data.t1)];
  let top = 0;  // the whole window's, so the queue grows into a fixed frame
  for (const s of data.queues.concat(data.reports)) for (const v of vals(s)) if (v > top) top = v;
  const shapes = [];
  for (const b of c.bursts) {
    if (b.source !== "instrument" || b.start_ns === null || (until !== null && b.start_ns > until)) continue;
    let end = b.end_ns === null ? data.t1 : b.end_ns;
    if (until !== null) end = Math.min(end, until);
    shapes.push({ type: "rect", xref: "x", yref: "paper", x0: X(b.start_ns), x1: X(end),
                  y0: 0, y1: 1, fillcolor: "rgba(227,98,9,0.10)", line: { width: 0 }, layer: "below" });
  }
  if (until !== null)
    shapes.push({ type: "line", xref: "x", yref: "paper", x0: X(until), x1: X(until), y0: 0, y1: 1,
                  line: { color: "#444", width: 1, dash: "dot" } });
  const base = { margin: { l: 80, r: 20, t: 40, b: 96 }, font: { size: 13 },
                 legend: { orientation: "h", y: -0.3, x: 0, xanchor: "left", yanchor: "top" },
                 paper_bgcolor: "#fff", plot_bgcolor: "#fff" };
  Plotly.react("occupancy-plot", occ, {
    ...base, title: { text: `Occupancy per egress queue (${unit}) — ${c.label}`, x: 0.01, font: { size: 15 } },
    xaxis: { title: { text: ax.title }, range: xr, gridcolor: "#eceff3" },
    yaxis: { title: { text: unit }, range: [0, top > 0 ? top * 1.05 : 1], separatethousands: true,
             gridcolor: "#eceff3" },
    shapes, uirevision: revision,
  }, { displaylogo: false, responsive: true });
  drawHeatmap(data, c, until, revision, base, xr, X);
  if (occupancyOnly) return;
  const ing = data.ingress.map((s, i) => {
    const [t, v] = clip(s.t, s.v, until);
    return { x: t.map(X), y: v, type: "scatter", mode: "lines", stackgroup: "in",
             groupnorm: "percent", line: { shape: "hv", width: 0.5, color: COLORS[i % COLORS.length] },
             name: `ingress port ${s.ingress}` };
  });
  Plotly.react("ingress-plot", ing, {
    ...base,
    title: { text: data.congested === null || data.congested === undefined
      ? "Each ingress port's share of the congested egress queue (no congested queue in this case)"
      : data.shares_title || `Each ingress port's share of egress port ${data.congested}'s queue (%, stacked, of the bytes held)`,
      x: 0.01, font: { size: 15 } },
    xaxis: { title: { text: ax.title }, range: xr, gridcolor: "#eceff3" },
    yaxis: { title: { text: "share of the queue (%)" }, range: [0, 100], gridcolor: "#eceff3" },
    shapes: shapes.filter((s) => s.type === "line"), uirevision: revision,
  }, { displaylogo: false, responsive: true });
}

// time x port: one row per egress queue, one column per pixel column of the
// server's reduction (every queue of a case shares them), the largest value
function drawHeatmap(data, c, until, revision, base, xr, X) {
  const qs = data.queues;
  if (!qs.length) {
    Plotly.react("heatmap-plot", [], { ...base, title: { text: "Occupancy, time x port (no queue traced)",
      x: 0.01, font: { size: 15 } }, xaxis: { visible: false }, yaxis: { visible: false } },
      { displaylogo: false, responsive: true });
    return;
  }
  const t = qs[0].t;
  let n = t.length;
  if (until !== null) { n = 0; while (n < t.length && t[n] <= until) n++; }
  const z = qs.map((q) => {
    const v = vals(q);
    return t.slice(0, n).map((_, k) => (v[k] === null || v[k] === undefined) ? null : v[k]);
  });
  Plotly.react("heatmap-plot", [{
    type: "heatmap", x: t.slice(0, n).map(X), y: qs.map((q) => q.name), z,
    colorscale: "YlOrRd", reversescale: true, zmin: 0, hoverongaps: false,  // full: dark red
    colorbar: { title: { text: S.unit }, thickness: 14 },
  }], {
    ...base, margin: { l: 110, r: 20, t: 40, b: 50 },
    title: { text: `Occupancy, time x port (${S.unit}, the most per column) — ${c.label}`, x: 0.01, font: { size: 15 } },
    xaxis: { title: { text: axis(data).title }, range: xr, gridcolor: "#eceff3" },
    yaxis: { type: "category", automargin: true }, uirevision: revision,
  }, { displaylogo: false, responsive: true });
}

function drawEmpty() {
  for (const id of ["occupancy-plot", "heatmap-plot", "ingress-plot"])
    Plotly.react(id, [], { title: { text: S.status && S.status.mode === "attach" ? "waiting for the switch's telemetry…"
                                                   : "waiting for the first case…", x: 0.01, font: { size: 15 } },
                           margin: { l: 80, r: 20, t: 40, b: 40 }, xaxis: { visible: false },
                           yaxis: { visible: false } }, { displaylogo: false, responsive: true });
}

// the ports that built a burst, the largest share first
function culprits(b) {
  if (!b.ingress || !b.ingress.length) return "–";
  return b.ingress.map((c) => `port ${c.port} ${Math.round(100 * c.share)} %`).join(" · ");
}
function flows(b) {
  const f = b.flows || [];
  return f.length > 4 ? f.slice(0, 4).join(", ") + ` … (${f.length} flows)` : (f.length ? f.join(", ") : "–");
}

// c: a case (or a watched switch's view) with bursts; times shown from `t0`
// (a watched switch: its wall clock, in seconds ago; a case: µs of virtual time)
function renderBursts(c, cur, t0) {
  const tb = $("bursts-table").querySelector("tbody");
  tb.innerHTML = "";
  const wall = c && c.clock === "wall";
  for (const th of document.querySelectorAll("#bursts-table .time-head"))
    th.textContent = `${th.dataset.what} ${wall ? "s" : "µs"}`;
  $("bursts-peak-head").textContent = S.unit === "packets" ? "peak packets"
    : `peak ${c && c.bursts.length && c.bursts[0].unit === "frames" ? "frames" : "bytes"}`;
  if (!c) return;
  const T = wall ? (ns) => (ns === null || ns === undefined) ? "–" : ((ns - c.t1) / 1e9).toFixed(3) : fmtUs;
  const D = wall ? (ns) => (ns / 1e9).toFixed(3) : fmtUs;
  const until = S.cursor === null ? null : cur;
  for (const b of c.bursts) {
    if (until !== null && b.start_ns !== null && b.start_ns > until) continue;
    const ongoing = (until !== null && (b.end_ns === null || b.end_ns > until)) ||
                    (wall && b.end_ns === null);
    const tr = document.createElement("tr");
    if (ongoing) tr.className = "ongoing";
    const shownPeak = !ongoing || wall || (b.peak_ns !== null && b.peak_ns <= until);
    const peak = S.unit === "packets" ? b.peak_pkts : b.peak;
    cells(tr, [[b.source, "text"], b.egress_port, b.burst_id, T(b.start_ns),
               shownPeak ? fmtInt(peak) : "…", shownPeak ? T(b.peak_ns) : "…",
               ongoing ? "ongoing" : T(b.end_ns),
               ongoing || b.end_ns === null || b.start_ns === null ? "–" : D(b.end_ns - b.start_ns),
               ongoing && !wall ? "…" : fmtInt(b.frames), [culprits(b), "text culprits"],
               [flows(b), "text flows"]]);
    tb.appendChild(tr);
  }
}

// frames lost per (ingress, egress): a case's streams, or a watched switch's counters
function renderDrops(pairs) {
  const tb = $("drops-table").querySelector("tbody");
  tb.innerHTML = "";
  if (!pairs) return;
  const shown = pairs.filter((p) => p.lost > 0 || pairs.length <= 16);
  for (const p of shown) {
    const tr = document.createElement("tr");
    if (p.lost > 0) tr.className = "lost";
    cells(tr, [p.ingress, p.egress, fmtInt(p.sent), fmtInt(p.lost), [p.what || "sent by the tester, not received", "text"]]);
    tb.appendChild(tr);
  }
  if (!shown.length) {
    const tr = document.createElement("tr");
    cells(tr, [["no frame lost", "text"], "", "", "", ""]);
    tb.appendChild(tr);
  }
}

// ----- controls ----------------------------------------------------------------

$("case-select").addEventListener("change", (e) => { setFollow(false); select(e.target.value); });
for (const id of ["unit-bytes", "unit-packets"])
  $(id).addEventListener("change", (e) => {
    if (!e.target.checked) return;
    S.unit = e.target.value;
    stats.unit = S.unit;
    renderStatus();
    if (showingInflight()) { S.sharesAt = 0; renderInflight(); } else renderCase();
  });
$("follow").addEventListener("change", (e) => {
  S.follow = e.target.checked;
  if (S.follow && S.cases.length) select(S.cases[S.cases.length - 1].id);
});
$("slider").addEventListener("input", (e) => {
  const c = S.byId[S.selected];
  if (!c) return;
  const f = Number(e.target.value) / 1000;
  S.cursor = f >= 1 ? null : span(c)[0] + f * (span(c)[1] - span(c)[0]);
  renderCase();
});
$("play").addEventListener("click", () => {
  if (S.playing) { clearInterval(S.playing); S.playing = null; $("play").innerHTML = "&#9654;"; return; }
  const sl = $("slider");
  if (Number(sl.value) >= 1000) sl.value = 0;
  $("play").innerHTML = "&#10074;&#10074;";
  S.playing = setInterval(() => {          // the case in about 5 s, 20 frames a second
    const v = Math.min(1000, Number(sl.value) + 10);
    sl.value = v;
    sl.dispatchEvent(new Event("input"));
    if (v >= 1000) { clearInterval(S.playing); S.playing = null; $("play").innerHTML = "&#9654;"; }
  }, 50);
});
function onZoom(ev) {
  if (!S.selected) return;
  if (ev["xaxis.autorange"]) { S.zoom = null; renderCase(); return; }
  let a = ev["xaxis.range[0]"], b = ev["xaxis.range[1]"];
  if (a === undefined && Array.isArray(ev["xaxis.range"])) [a, b] = ev["xaxis.range"];
  if (a === undefined || b === undefined || showingInflight()) return;
  fetchSeries(S.selected, Math.max(0, a * 1000), b * 1000);  // finer columns for the window
}

// ----- the event stream ----------------------------------------------------------

function connect() {
  const es = new EventSource("/events");
  es.addEventListener("cases", (e) => { addCases(JSON.parse(e.data)); counted(); });
  es.addEventListener("series", (e) => {
    const d = JSON.parse(e.data);
    S.series[d.id] = d;
    stats.seriesSeen += 1;
    if (S.selected === d.id) renderCase();
    counted();
  });
  es.addEventListener("inflight", (e) => {
    S.inflight = JSON.parse(e.data);
    stats.inflightSeen += 1;
    counted();
    if (showingInflight()) renderInflight();
  });
  es.addEventListener("status", (e) => {
    S.status = JSON.parse(e.data);
    stats.statusCount += 1;
    stats.states[S.status.state] = (stats.states[S.status.state] || 0) + 1;
    counted();
    renderStatus();
  });
  es.addEventListener("end", (e) => {
    S.status = JSON.parse(e.data);
    stats.rateAtEnd = updateRate().toFixed(1);
    S.ended = true;
    stats.ended = true;
    es.close();
    renderStatus();
    if (S.inflight && S.inflight.clock === "wall") {  // the window as the run left it
      fetch("/api/inflight").then((r) => r.json()).then((d) => {
        if (d.clock === "wall") S.inflight = d;
        renderCase();
      }).catch(renderCase);
      return;
    }
    S.inflight = null;
    renderCase();
  });
  es.onerror = () => {
    if (S.ended) return;
    const st = $("state");
    st.textContent = "disconnected";
    st.className = "state state-disconnected";
  };
}

drawEmpty();
document.getElementById("occupancy-plot").on("plotly_relayout", onZoom);
connect();
setInterval(showRate, 500);

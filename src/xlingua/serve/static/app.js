// The xlingua page: calls the same server's /align, /score and /info (same origin, no CDN).
"use strict";

const $ = (id) => document.getElementById(id);
let lastAlign = null;

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

async function api(path, body) {
  const headers = { "Content-Type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) headers["Authorization"] = "Bearer " + key;
  const res = await fetch(path, { method: body ? "POST" : "GET", headers, body: body ? JSON.stringify(body) : undefined });
  let data = null;
  try { data = await res.json(); } catch (e) { /* not JSON */ }
  if (!res.ok) {
    // OpenAI's {"error": {"message"}} or TEI's {"error": "..."}, by route
    const err = data && data.error;
    const message = typeof err === "string" ? err : (err && err.message) || res.statusText;
    throw new Error(`${res.status}: ${message}`);
  }
  return data;
}

function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  row.appendChild(td);
}

function range(r) {
  if (r[0] === r[1]) return "–";
  return r[1] - r[0] === 1 ? String(r[0] + 1) : `${r[0] + 1}–${r[1]}`;
}

function scriptLabel(s) {
  return s ? `${s.script} script (${Math.round(s.share * 100)}% of letters)` : "";
}

function renderAlign(data) {
  const tbody = $("align-table").querySelector("tbody");
  tbody.innerHTML = "";
  for (const g of data.alignment) {
    const tr = document.createElement("tr");
    cell(tr, range(g.a), "num");
    cell(tr, range(g.b), "num");
    cell(tr, g.a_text);
    cell(tr, g.b_text);
    cell(tr, g.score === null ? "" : g.score.toFixed(3), "num score");
    tr.dataset.score = g.score === null ? "" : String(g.score);
    if (g.score === null) tr.classList.add("gap");
    tbody.appendChild(tr);
  }
  $("align-table").hidden = false;
  $("script-a").textContent = scriptLabel(data.script_a);
  $("script-b").textContent = scriptLabel(data.script_b);
  applyThreshold();
  drawHeatmap(data);
  $("download").disabled = false;
}

function applyThreshold() {
  const t = parseFloat($("threshold").value);
  $("threshold-value").textContent = t.toFixed(2);
  for (const tr of $("align-table").querySelectorAll("tbody tr")) {
    const s = tr.dataset.score;
    tr.classList.toggle("weak", s === "" || parseFloat(s) < t);
  }
}

function drawHeatmap(data) {
  const sim = data.similarity, n = sim.length, m = n ? sim[0].length : 0;
  const canvas = $("heatmap");
  $("heatmap-box").hidden = !(n && m);
  if (!(n && m)) return;
  const size = 360, cw = size / m, ch = size / n;
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, size, size);
  let lo = Infinity, hi = -Infinity;
  for (const row of sim) for (const v of row) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  const span = hi - lo || 1;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      const v = (sim[i][j] - lo) / span;  // white (low) to dark blue (high)
      ctx.fillStyle = `rgb(${Math.round(255 - 216 * v)},${Math.round(255 - 168 * v)},${Math.round(255 - 54 * v)})`;
      ctx.fillRect(j * cw, i * ch, Math.ceil(cw), Math.ceil(ch));
    }
  }
  ctx.strokeStyle = "#e8590c";
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(0, 0);
  for (const g of data.alignment) ctx.lineTo(g.b[1] * cw, g.a[1] * ch);
  ctx.stroke();
  ctx.fillStyle = "rgba(232,89,12,0.35)";
  for (const g of data.alignment) {
    if (g.a[0] < g.a[1] && g.b[0] < g.b[1]) {
      ctx.fillRect(g.b[0] * cw, g.a[0] * ch, (g.b[1] - g.b[0]) * cw, (g.a[1] - g.a[0]) * ch);
    }
  }
}

async function runAlign() {
  showError("");
  $("align-status").textContent = "aligning…";
  $("align").disabled = true;
  try {
    const body = { a: $("doc-a").value.split("\n"), b: $("doc-b").value.split("\n"), split: $("split").checked };
    body.a = body.a.filter((p) => p.trim()); body.b = body.b.filter((p) => p.trim());
    if ($("lang-a").value.trim()) body.src_lang = $("lang-a").value.trim();
    if ($("lang-b").value.trim()) body.tgt_lang = $("lang-b").value.trim();
    if (!body.a.length || !body.b.length) throw new Error("paste a document into both boxes");
    lastAlign = await api("/align", body);
    renderAlign(lastAlign);
    $("align-status").textContent = `${lastAlign.a.length} and ${lastAlign.b.length} sentences, ${lastAlign.alignment.length} groups`;
  } catch (e) {
    showError(e.message);
    $("align-status").textContent = "";
  } finally {
    $("align").disabled = false;
  }
}

function download() {
  if (!lastAlign) return;
  const blob = new Blob([lastAlign.tsv], { type: "text/tab-separated-values" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = "alignment.tsv";
  document.body.appendChild(a);
  a.click();
  a.remove();
}

async function runScore() {
  showError("");
  $("score-status").textContent = "scoring…";
  try {
    const lines = $("pairs").value.split("\n").filter((l) => l.trim());
    const src = [], tgt = [];
    lines.forEach((l, i) => {
      const tab = l.indexOf("\t");
      if (tab < 0) throw new Error(`line ${i + 1}: expected source<Tab>translation`);
      src.push(l.slice(0, tab)); tgt.push(l.slice(tab + 1));
    });
    if (!src.length) throw new Error("paste at least one pair");
    const margin = $("margin").checked;
    const data = await api("/score", { src, tgt, margin });
    const tbody = $("score-table").querySelector("tbody");
    tbody.innerHTML = "";
    src.forEach((s, i) => {
      const tr = document.createElement("tr");
      cell(tr, String(i + 1), "num");
      cell(tr, s);
      cell(tr, tgt[i]);
      cell(tr, data.cosine[i].toFixed(3), "num");
      cell(tr, margin ? data.margin[i].toFixed(3) : "", "num margin-col");
      tbody.appendChild(tr);
    });
    $("score-table").hidden = false;
    $("score-status").textContent = `${src.length} pairs`;
  } catch (e) {
    showError(e.message);
    $("score-status").textContent = "";
  }
}

function switchTab(name) {
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.tab === name);
  $("panel-align").hidden = name !== "align";
  $("panel-score").hidden = name !== "score";
  showError("");
}

document.addEventListener("DOMContentLoaded", async () => {
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => switchTab(b.dataset.tab));
  $("align").addEventListener("click", runAlign);
  $("score").addEventListener("click", runScore);
  $("threshold").addEventListener("input", applyThreshold);
  $("download").addEventListener("click", download);
  try {
    const info = await api("/info");
    $("model").textContent = `model ${info.model_id}, ${info.dimension} dimensions`;
  } catch (e) {
    showError(e.message);
  }
});

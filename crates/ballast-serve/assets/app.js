// ballast serve: the page's script (gallery, playground, animation) and its SVG plots.
// Every text from the server is set with textContent, never parsed as HTML.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'text') e.textContent = v; else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children) if (c) e.append(c);
  return e;
}

function sv(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
  }
  return e;
}

async function api(method, url, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const r = await fetch(url, init);
  let data = null;
  try { data = await r.json(); } catch (_) { data = { error: { message: 'HTTP ' + r.status } }; }
  return { status: r.status, data };
}

// ---------------------------------------------------------------- plots

function niceTicks(lo, hi, count) {
  if (!(hi > lo)) { hi = lo + 1; }
  const raw = (hi - lo) / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= raw) || raw;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(+t.toPrecision(12));
  return ticks;
}

function fmt(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
  return String(+v.toPrecision(6));
}

// A scatter/line plot: series = [{name, color, points: [{x, y, err, info, row}]}].
// opts: {width, height, logX, xLabel, yLabel, lines, onHover}
function plot(container, series, opts) {
  const W = opts.width || 640, H = opts.height || 360, L = 60, R = 150, T = 28, B = 40;
  const all = series.flatMap((s) => s.points);
  const tx = (x) => (opts.logX ? Math.log10(x) : x);
  let xs = all.map((p) => tx(p.x)), ys = all.flatMap((p) => [p.y - (p.err || 0), p.y + (p.err || 0)]);
  if (opts.yRange) ys = opts.yRange;
  if (opts.xRange) xs = opts.xRange.map(tx);
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)], [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  if (x0 === x1) { x0 -= 1; x1 += 1; }
  if (y0 === y1) { y0 -= 1; y1 += 1; }
  const px = (x) => L + ((tx(x) - x0) / (x1 - x0)) * (W - L - R);
  const py = (y) => H - B - ((y - y0) / (y1 - y0)) * (H - T - B);
  const s = sv('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}` });
  for (const t of niceTicks(y0, y1, 6)) {
    s.append(sv('line', { class: 'grid', x1: L, x2: W - R, y1: py(t), y2: py(t) }));
    s.append(sv('text', { x: L - 5, y: py(t) + 4, 'text-anchor': 'end', text: fmt(t) }));
  }
  for (const t of niceTicks(x0, x1, 6)) {
    const x = L + ((t - x0) / (x1 - x0)) * (W - L - R);
    s.append(sv('line', { class: 'grid', x1: x, x2: x, y1: T, y2: H - B }));
    s.append(sv('text', { x, y: H - B + 15, 'text-anchor': 'middle', text: opts.logX ? '1e' + fmt(t) : fmt(t) }));
  }
  s.append(sv('line', { class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }));
  s.append(sv('line', { class: 'axis', x1: L, x2: L, y1: T, y2: H - B }));
  s.append(sv('text', { x: (L + W - R) / 2, y: H - 5, 'text-anchor': 'middle', text: opts.xLabel || 'x' }));
  s.append(sv('text', { x: 8, y: 14, text: opts.yLabel || '' }));
  series.forEach((ser, i) => {
    const color = ser.color || PALETTE[i % PALETTE.length];
    const pts = ser.points.filter((p) => Number.isFinite(tx(p.x)) && Number.isFinite(p.y));
    if (opts.lines && pts.length > 1) {
      s.append(sv('polyline', { fill: 'none', stroke: color, 'stroke-width': 1.5,
        points: pts.map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ') }));
    }
    for (const p of opts.lines ? [] : pts) {
      if (p.err) s.append(sv('line', { stroke: color, x1: px(p.x), x2: px(p.x), y1: py(p.y - p.err), y2: py(p.y + p.err) }));
      const c = sv('circle', { class: 'pt', cx: px(p.x), cy: py(p.y), r: 4, fill: color, 'data-row': p.row });
      c.addEventListener('mouseenter', (ev) => showTip(ev, p.info));
      c.addEventListener('mousemove', moveTip);
      c.addEventListener('mouseleave', hideTip);
      s.append(c);
    }
    s.append(sv('rect', { x: W - R + 10, y: T + 14 * i, width: 10, height: 10, fill: color }));
    s.append(sv('text', { x: W - R + 24, y: T + 9 + 14 * i, text: ser.name.slice(0, 22) }));
  });
  container.replaceChildren(s);
  return { svg: s, px, py };
}

const PALETTE = ['#1f5fa8', '#c0392b', '#2e8b57', '#8e44ad', '#d4810c', '#16a0a0', '#7f6a00', '#555'];

function showTip(ev, info) {
  const tip = document.getElementById('tooltip');
  tip.replaceChildren(...info.map(([k, v]) => el('div', { class: 'tt-' + k }, k + ': ', el('span', { text: v }))));
  tip.hidden = false;
  moveTip(ev);
}
function moveTip(ev) {
  const tip = document.getElementById('tooltip');
  tip.style.left = ev.clientX + 12 + 'px';
  tip.style.top = ev.clientY + 12 + 'px';
}
function hideTip() { document.getElementById('tooltip').hidden = true; }

// ---------------------------------------------------------------- views

const views = ['gallery', 'playground', 'animation'];
function showView() {
  const name = (location.hash.slice(1).split('?')[0]) || 'gallery';
  for (const v of views) {
    document.getElementById('view-' + v).hidden = v !== name;
    document.getElementById('nav-' + v).classList.toggle('active', v === name);
  }
}

// ---------------------------------------------------------------- gallery

let galleryItems = [];

async function loadGallery() {
  const { data } = await api('GET', '/api/gallery');
  galleryItems = data;
  const fill = (id, values) => {
    const sel = document.getElementById(id);
    for (const v of [...new Set(values)].sort()) sel.append(el('option', { value: v, text: v }));
    sel.addEventListener('change', renderGalleryList);
  };
  fill('paper-filter', data.map((i) => i.paper));
  fill('verdict-filter', data.map((i) => i.verdict));
  renderGalleryList();
}

function renderGalleryList() {
  const paper = document.getElementById('paper-filter').value;
  const verdict = document.getElementById('verdict-filter').value;
  const list = document.getElementById('gallery-list');
  const shown = galleryItems.filter((i) => (!paper || i.paper === paper) && (!verdict || i.verdict === verdict));
  list.replaceChildren(...shown.map((item) => {
    const li = el('li', { 'data-id': item.id },
      el('div', { text: item.title }),
      el('span', { class: 'id', text: item.id }),
      el('span', { class: 'verdict ' + item.verdict.replace(/\s+/g, '-'), text: item.verdict }));
    li.addEventListener('click', () => openItem(item.id, li));
    return li;
  }));
  document.getElementById('gallery-count').textContent = `${shown.length} of ${galleryItems.length} items`;
}

async function openItem(id, li) {
  for (const x of document.querySelectorAll('#gallery-list li')) x.classList.remove('selected');
  if (li) li.classList.add('selected');
  const { status, data } = await api('GET', '/api/item?id=' + encodeURIComponent(id));
  const box = document.getElementById('item-detail');
  box.dataset.id = '';
  if (status !== 200) { box.replaceChildren(el('p', { class: 'err', text: data.error.message })); return; }
  const cols = data.columns, col = (n) => cols.indexOf(n);
  const stats = [...new Set(data.rows.map((r) => r[col('statistic')]))];
  const statSel = el('select', { id: 'stat-select' }, ...stats.map((s) => el('option', { value: s, text: s })));
  const plotBox = el('div', { id: 'item-plot', class: 'plot' });
  const heading = el('h2', { text: data.item.title });
  const verdict = el('p', {}, 'verdict: ', el('span', { class: 'verdict ' + data.item.verdict.replace(/\s+/g, '-'), text: data.item.verdict }));
  const links = el('p', { class: 'help' }, el('a', { href: '/files/' + id + '.csv', text: id + '.csv' }), ' · ',
    el('a', { href: '/files/' + id + '.json', text: id + '.json' }), ' · ', el('a', { href: '/files/' + id + '.md', text: id + '.md' }));
  const figure = data.item.has_svg ? el('details', {}, el('summary', { text: 'figure as committed (SVG)' }), el('img', { src: '/files/' + id + '.svg', alt: id })) : null;
  const report = el('details', {}, el('summary', { text: 'report' }), el('div', { class: 'report', text: data.report }));
  box.replaceChildren(heading, verdict, links, el('label', {}, 'statistic ', statSel), plotBox, figure, report);
  const draw = () => drawItem(plotBox, data, statSel.value);
  statSel.addEventListener('change', draw);
  draw();
  box.dataset.id = id;
}

// The rows of one statistic as series; the hover shows the CSV's fields as written.
function drawItem(box, data, stat) {
  const cols = data.columns, col = (n) => cols.indexOf(n);
  const nIdx = col('n');
  const groupCols = cols.slice(1, nIdx > 0 ? nIdx : 1);
  const refCols = cols.filter((c) => c.startsWith('reference') || c === 'z' || c.startsWith('z_') || c === 'theory');
  const bySeries = new Map();
  data.rows.forEach((r, i) => {
    if (r[col('statistic')] !== stat) return;
    const name = [r[col('series')], ...groupCols.map((g) => g + '=' + r[col(g)])].join(' ');
    const x = parseFloat(r[col('x')]), y = parseFloat(r[col('value')]), err = parseFloat(r[col('stderr')]);
    const info = [['series', name], ['x', r[col('x')]], ['value', r[col('value')]], ['stderr', r[col('stderr')]]];
    for (const c of refCols) info.push([c, r[col(c)] === '' ? '—' : r[col(c)]]);
    if (!bySeries.has(name)) bySeries.set(name, []);
    bySeries.get(name).push({ x, y, err: Number.isFinite(err) ? err : 0, info, row: i });
  });
  const series = [...bySeries].map(([name, points]) => ({ name, points }));
  const xs = series.flatMap((s) => s.points.map((p) => p.x));
  const logX = xs.every((x) => x > 0) && Math.max(...xs) / Math.min(...xs) > 100;
  plot(box, series, { logX, xLabel: 'x', yLabel: stat, width: 760, height: 400 });
}

// ---------------------------------------------------------------- forms

let form = null;

// The allocation processes, and (for the playground) the round-based models after them.
function processList(withModels) {
  return [...form.listing.processes, ...(withModels ? form.listing.models || [] : [])];
}

function processByName(name) { return processList(true).find((p) => p.name === name); }

function fillProcessSelect(sel, value, withModels) {
  sel.replaceChildren(...processList(withModels).map((p) => el('option', { value: p.name, text: p.name })));
  sel.value = value;
}

// Inputs for the parameters of `process` in `box`; error slots named `${prefix}param:NAME`.
function renderParams(box, process, prefix, values) {
  const def = processByName(process);
  box.replaceChildren(...(def ? def.params : []).map((p) => el('label', { class: 'field', title: p.doc },
    `${p.name} (${p.type})`,
    el('input', { name: p.name, 'data-param': p.name, placeholder: p.default || '', value: (values || {})[p.name] || '' }),
    el('span', { class: 'help', text: p.doc + (p.default ? ` (${p.default})` : '') }),
    el('span', { class: 'err', 'data-field': prefix + 'param:' + p.name }))));
}

function paramValues(box) {
  const out = {};
  for (const i of box.querySelectorAll('[data-param]')) if (i.value.trim()) out[i.dataset.param] = i.value;
  return out;
}

// An input for one option of `ballast simulate`, from its clap description.
function optionInput(o, value) {
  let input;
  if (o.takes === 'flag') {
    input = el('input', { type: 'checkbox', 'data-opt': o.long });
    input.checked = value === 'true';
  } else if (o.choices.length) {
    const unset = o.default.length ? [] : [el('option', { value: '', text: '(not set)' })];
    input = el('select', { 'data-opt': o.long }, ...unset, ...o.choices.map((c) => el('option', { value: c, text: c })));
    input.value = value || o.default[0] || '';
  } else if (o.takes === 'list') {
    input = el('textarea', { 'data-opt': o.long, rows: 2, placeholder: 'one per line' });
    input.value = value || '';
  } else {
    input = el('input', { 'data-opt': o.long, placeholder: o.default.join(' '), value: value || '' });
  }
  input.id = 'opt-' + o.long;
  return el('label', { class: 'field', title: o.help }, '--' + o.long, input,
    el('span', { class: 'help', text: o.help.split('\n')[0] }),
    el('span', { class: 'err', 'data-field': o.long }));
}

function optionValues(box) {
  const out = {};
  for (const i of box.querySelectorAll('[data-opt]')) {
    const v = i.type === 'checkbox' ? (i.checked ? 'true' : '') : i.value;
    if (v.trim()) out[i.dataset.opt] = v;
  }
  return out;
}

function clearErrors(root) {
  for (const e of root.querySelectorAll('.err')) e.textContent = '';
}

// Shows a command-line message next to the field it names (else under the form).
function showError(root, err, prefix, fallback) {
  let field = err.field || '';
  if (prefix && (field === 'process' || field.startsWith('param:'))) field = prefix + field;
  const slot = field && root.querySelector(`.err[data-field="${CSS.escape(field)}"]`);
  (slot || fallback).textContent = err.message;
}

// ---------------------------------------------------------------- playground

const MAIN_OPTIONS = ['n', 'm', 'runs', 'seed', 'batch', 'engine', 'weights', 'tie-break'];

function renderPlayground(state) {
  const opts = form.options;
  fillProcessSelect(document.getElementById('process'), state.process || 'two_choice', true);
  fillProcessSelect(document.getElementById('cmp-process'), state.compare || 'one_choice', true);
  const main = opts.filter((o) => MAIN_OPTIONS.includes(o.long));
  const more = opts.filter((o) => !MAIN_OPTIONS.includes(o.long));
  const box = document.getElementById('options');
  const defaults = { n: '1000', m: '1000000' };
  box.replaceChildren(...main.map((o) => optionInput(o, (state.options || {})[o.long] || defaults[o.long])),
    el('details', { open: more.some((o) => (state.options || {})[o.long]) ? '' : null }, el('summary', { text: 'more options' }),
      ...more.map((o) => optionInput(o, (state.options || {})[o.long]))));
  const onProcess = () => {
    const p = document.getElementById('process').value;
    document.getElementById('process-doc').textContent = (processByName(p) || {}).doc || '';
    renderParams(document.getElementById('params'), p, '', state.params);
  };
  document.getElementById('process').addEventListener('change', () => { state.params = {}; onProcess(); });
  document.getElementById('cmp-process').addEventListener('change', () =>
    renderParams(document.getElementById('cmp-params'), document.getElementById('cmp-process').value, 'cmp-', {}));
  const cmpOn = document.getElementById('compare-on');
  cmpOn.checked = !!state.compare;
  cmpOn.addEventListener('change', () => { document.getElementById('compare-box').hidden = !cmpOn.checked; });
  document.getElementById('compare-box').hidden = !cmpOn.checked;
  onProcess();
  renderParams(document.getElementById('cmp-params'), document.getElementById('cmp-process').value, 'cmp-', state.cmpParams);
  document.getElementById('run-form').addEventListener('submit', (ev) => { ev.preventDefault(); startRun(); });
  document.getElementById('stop').addEventListener('click', stopRun);
}

let currentJob = null;

function runRequest() {
  const body = {
    process: document.getElementById('process').value,
    params: paramValues(document.getElementById('params')),
    options: optionValues(document.getElementById('options')),
  };
  if (document.getElementById('compare-on').checked) {
    body.compare = { process: document.getElementById('cmp-process').value, params: paramValues(document.getElementById('cmp-params')) };
  }
  return body;
}

// The run's form as a shareable link (the page's address with the form in its hash).
function shareLink(body) {
  const q = new URLSearchParams();
  q.set('process', body.process);
  for (const [k, v] of Object.entries(body.params)) q.set('param.' + k, v);
  for (const [k, v] of Object.entries(body.options)) q.set('opt.' + k, v);
  if (body.compare) {
    q.set('compare', body.compare.process);
    for (const [k, v] of Object.entries(body.compare.params)) q.set('cmp.' + k, v);
  }
  return '#playground?' + q.toString();
}

function stateFromHash() {
  const [, query] = location.hash.split('?');
  const state = { params: {}, options: {}, cmpParams: {} };
  if (!location.hash.startsWith('#playground') || !query) return state;
  for (const [k, v] of new URLSearchParams(query)) {
    if (k === 'process') state.process = v;
    else if (k === 'compare') state.compare = v;
    else if (k.startsWith('param.')) state.params[k.slice(6)] = v;
    else if (k.startsWith('opt.')) state.options[k.slice(4)] = v;
    else if (k.startsWith('cmp.')) state.cmpParams[k.slice(4)] = v;
  }
  return state;
}

async function startRun() {
  const root = document.getElementById('run-form');
  clearErrors(root);
  const body = runRequest();
  const status = document.getElementById('run-status');
  status.dataset.phase = 'submitted';
  status.textContent = 'checking…';
  const { status: code, data } = await api('POST', '/api/run', body);
  if (code !== 202) {
    const err = data.error || { message: 'HTTP ' + code };
    showError(root, err, err.which === 1 ? 'cmp-' : '', document.getElementById('form-error'));
    status.textContent = err.kind === 'busy' ? 'busy' : 'refused';
    status.dataset.phase = err.kind === 'busy' ? 'busy' : 'refused';
    return;
  }
  history.replaceState(null, '', shareLink(body));
  currentJob = data.job;
  document.getElementById('stop').disabled = false;
  document.getElementById('run').disabled = true;
  pollJob(data.job);
}

async function pollJob(id) {
  const status = document.getElementById('run-status');
  const { data } = await api('GET', '/api/jobs/' + id);
  if (currentJob !== id) return;
  const restarts = data.restarts ? `, restarted ${data.restarts}× after another tab's stop` : '';
  status.textContent = `${data.phase}: ${data.step}, ${data.elapsed_s.toFixed(1)} s${restarts}`;
  status.dataset.phase = data.phase;
  if (data.phase === 'running') { setTimeout(() => pollJob(id), 250); return; }
  document.getElementById('stop').disabled = true;
  document.getElementById('run').disabled = false;
  currentJob = null;
  if (data.phase === 'done') showResult(data.result);
  if (data.phase === 'failed') {
    showError(document.getElementById('run-form'), data.error, data.error.which === 1 ? 'cmp-' : '', document.getElementById('form-error'));
  }
  if (data.phase === 'stopped') status.textContent = `stopped after ${data.elapsed_s.toFixed(1)} s (no result: the runs in progress finished, nothing was kept)`;
}

async function stopRun() {
  if (currentJob !== null) await api('POST', `/api/jobs/${currentJob}/stop`, {});
}

// Table rows: [label, function of the simulate JSON → text].
const ROWS = [
  ['gap (mean)', (r) => r.gap && r.gap.mean],
  ['gap (stderr)', (r) => r.gap && r.gap.stderr],
  ['max gap (mean)', (r) => r.max_gap && r.max_gap.mean],
  ['runs', (r) => r.runs],
  ['engine', (r) => r.engine],
  ['ns per ball', (r) => r.ns_per_ball],
];

function showResult(result) {
  const runs = result.runs;
  const table = document.getElementById('result-table');
  const statNames = [...new Set(runs.flatMap((r) => Object.keys(r.result.statistics || {})))];
  const rows = [...ROWS, ...statNames.map((s) => [s + ' (mean)', (r) => r.statistics && r.statistics[s] && r.statistics[s].mean])]
    .filter(([, f]) => runs.some((r) => f(r.result) !== undefined && f(r.result) !== null));
  table.replaceChildren(el('tr', {}, el('th', { text: '' }), ...runs.map((r) => el('th', { text: r.label }))),
    ...rows.map(([label, f]) => el('tr', { 'data-row': label }, el('th', { text: label }),
      ...runs.map((r) => { const v = f(r.result); return el('td', { text: v === undefined || v === null ? '—' : String(v) }); }))));
  // The gap's distribution over runs; for the round-based models, the max load's over rounds.
  const gapDist = runs.some((r) => r.result.gap);
  const what = gapDist ? 'gap' : 'max load';
  const series = runs.map((r, i) => ({
    name: r.label + (i ? ' (compare)' : ''),
    points: (gapDist ? Object.entries((r.result.gap || {}).distribution || {})
      : (r.result.max_load_histogram || []).map((h) => [String(h.value), h.fraction])).map(([g, p]) => ({
      x: +g + (i ? 0.08 : 0), y: p, info: [['process', r.label], [what, g], ['fraction', String(p)]],
    })).sort((a, b) => a.x - b.x),
  }));
  const top = Math.max(0.01, ...series.flatMap((ser) => ser.points.map((p) => p.y)));
  plot(document.getElementById('result-plot'), series,
    { xLabel: what, yLabel: gapDist ? 'fraction of runs' : 'fraction of rounds', width: 560, height: 260, yRange: [0, top * 1.05] });
  const rep = document.getElementById('reproduce');
  rep.replaceChildren(el('h3', { text: 'Reproduce' }),
    el('p', {}, el('a', { href: location.href, id: 'share-link', text: 'link to this run' })),
    ...runs.flatMap((r) => [el('pre', { class: 'command', text: r.command }),
      el('details', {}, el('summary', { text: 'config (ballast run)' }), el('pre', { text: r.config }))]));
}

// ---------------------------------------------------------------- animation

const ANIM_OPTIONS = [['n', '1000'], ['m', '20000'], ['step', '100'], ['batch', ''], ['tie_break', 'random'], ['seed', '1']];
let anim = null;

function renderAnimation() {
  const sel = document.getElementById('anim-process');
  fillProcessSelect(sel, 'two_choice', false);
  const onProcess = () => renderParams(document.getElementById('anim-params'), sel.value, 'anim-', {});
  sel.addEventListener('change', onProcess);
  onProcess();
  const help = { n: 'bins (at most 10000)', m: 'balls', step: 'balls per frame (sequential; 1: ball by ball)', batch: 'batch size (batched setting; a frame per batch)', tie_break: 'tie-breaking rule', seed: 'seed of the run' };
  const errField = { tie_break: 'tie-break' };
  document.getElementById('anim-options').replaceChildren(...ANIM_OPTIONS.map(([k, v]) => el('label', { class: 'field' }, k,
    el('input', { id: 'anim-' + k, value: v }), el('span', { class: 'help', text: help[k] }),
    el('span', { class: 'err', 'data-field': errField[k] || k }))));
  document.getElementById('anim-form').addEventListener('submit', (ev) => { ev.preventDefault(); startAnimation(); });
  document.getElementById('play').addEventListener('click', () => {
    if (!anim) return;
    anim.playing = !anim.playing;
    document.getElementById('play').textContent = anim.playing ? 'Pause' : 'Play';
    if (anim.playing) tick();
  });
  document.getElementById('step-frame').addEventListener('click', () => { if (anim) drawFrame(Math.min(anim.frame + 1, anim.data.frames.length - 1)); });
}

async function startAnimation() {
  const root = document.getElementById('anim-form');
  clearErrors(root);
  const body = { process: document.getElementById('anim-process').value, params: paramValues(document.getElementById('anim-params')) };
  for (const [k] of ANIM_OPTIONS) body[k] = document.getElementById('anim-' + k).value;
  const label = document.getElementById('frame-label');
  label.textContent = 'simulating…';
  const { status, data } = await api('POST', '/api/animate', body);
  if (status !== 200) {
    label.textContent = '';
    showError(root, data.error, 'anim-', document.getElementById('anim-error'));
    return;
  }
  if (anim) clearTimeout(anim.timer);
  const all = data.frames.flatMap((f) => f.loads.map((p) => p[1]));
  const yMax = Math.max(1, ...all.map(Math.abs));
  anim = { data, frame: 0, playing: true, yRange: [-yMax, yMax], timer: null };
  document.getElementById('play').disabled = false;
  document.getElementById('play').textContent = 'Pause';
  document.getElementById('step-frame').disabled = false;
  drawFrame(0);
  tick();
}

function tick() {
  if (!anim || !anim.playing) return;
  const fps = +document.getElementById('speed').value;
  anim.timer = setTimeout(() => {
    if (!anim.playing) return;
    if (anim.frame + 1 < anim.data.frames.length) { drawFrame(anim.frame + 1); tick(); } else {
      anim.playing = false;
      document.getElementById('play').textContent = 'Play';
    }
  }, 1000 / fps);
}

function drawFrame(i) {
  const { data } = anim;
  const f = data.frames[i];
  anim.frame = i;
  const label = document.getElementById('frame-label');
  label.dataset.frame = i;
  label.textContent = `frame ${i} of ${data.frames.length - 1}: ${f.balls} balls, gap ${fmt(f.gap)}`;
  plot(document.getElementById('anim-loads'), [{ name: 'load − average', points: f.loads.map(([r, y]) => ({ x: r, y })) }],
    { lines: true, xLabel: 'rank (most loaded first)', yLabel: 'normalised load', yRange: anim.yRange, width: 760, height: 300 });
  const gaps = data.frames.slice(0, i + 1).map((g) => ({ x: g.balls, y: g.gap }));
  plot(document.getElementById('anim-gap'), [{ name: 'gap', points: gaps }],
    { lines: true, xLabel: 'balls', yLabel: 'gap', width: 760, height: 200,
      xRange: [0, data.frames[data.frames.length - 1].balls],
      yRange: [0, Math.max(1, ...data.frames.map((g) => g.gap))] });
}

// ---------------------------------------------------------------- start

async function main() {
  window.addEventListener('hashchange', showView);
  showView();
  loadGallery();
  const r = await api('GET', '/api/form');
  form = r.data;
  renderPlayground(stateFromHash());
  renderAnimation();
  document.body.dataset.ready = 'true';
}

main();

// pjemu console: a single-page app over the Kubernetes API of the server that serves it
// (list + watch streamed through fetch, so a bearer token can be sent) and the few /ui/api/
// endpoints for what that API lacks (metrics files, resource samples, YAML checks with lines).
// No framework and no chart library: the DOM is built with h(), charts are drawn as SVG.
'use strict';

const JOBS = '/apis/kubeflow.org/v1';
const JOB_LABEL = 'training.kubeflow.org/job-name';
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#be185d', '#4d7c0f'];
const MAX_LOG_CHARS = 2 * 1024 * 1024;

const session = { token: sessionStorage.getItem('pjemu.token') || '' };
let view = null;  // { controller: AbortController, timers: [] } of the page shown

// ---------- DOM helpers ----------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

function table(headers, rows, attrs) {
  return h('table', attrs, h('thead', {}, h('tr', {}, headers.map((x) => h('th', {}, x)))),
    h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: headers.length, class: 'muted' }, 'None'))));
}

function kv(pairs) {
  return h('table', { class: 'kv' }, h('tbody', {},
    pairs.filter((p) => p).map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v)))));
}

function badge(text, extra) {
  return h('span', { class: `badge ${text} ${extra || ''}` }, text);
}

// ---------- time ----------

function age(ts) {
  if (!ts) return '';
  let sec = Math.max(0, Math.floor((Date.now() - Date.parse(ts)) / 1000));
  if (sec < 120) return `${sec}s`;
  const min = Math.floor(sec / 60);
  if (min < 120) return `${min}m${sec % 60 ? (sec % 60) + 's' : ''}`;
  const hr = Math.floor(min / 60);
  if (hr < 48) return `${hr}h${min % 60 ? (min % 60) + 'm' : ''}`;
  return `${Math.floor(hr / 24)}d`;
}

function duration(from, to) {
  if (!from) return '';
  const sec = Math.max(0, Math.round(((to ? Date.parse(to) : Date.now()) - Date.parse(from)) / 1000));
  return sec < 60 ? `${sec}s` : `${Math.floor(sec / 60)}m${sec % 60}s`;
}

function when(ts) {
  return ts ? h('span', { title: ts, 'data-age': ts }, `${age(ts)} ago`) : '';
}

setInterval(() => {
  for (const el of document.querySelectorAll('[data-age]')) el.textContent = `${age(el.dataset.age)} ago`;
  for (const el of document.querySelectorAll('[data-age-plain]')) el.textContent = age(el.dataset.agePlain);
}, 1000);

// ---------- API ----------

class ApiError extends Error {
  constructor(code, message, status) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

function authHeaders(extra) {
  const headers = Object.assign({}, extra || {});
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  return headers;
}

async function api(method, url, body, contentType, signal) {
  const opts = { method, headers: authHeaders(), signal };
  if (body !== undefined) {
    opts.headers['Content-Type'] = contentType || 'application/json';
    opts.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const r = await fetch(url, opts);
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { /* not JSON */ }
  if (r.status === 401) askToken(true);
  if (!r.ok) throw new ApiError(r.status, (json && json.message) || text || r.statusText, json);
  return json;
}

// Reads a streamed response line by line until it ends or the signal aborts.
async function readLines(response, onLine) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let i;
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      onLine(line);
    }
  }
  if (buffer) onLine(buffer);
}

const keyOf = (o) => `${o.metadata.namespace || ''}/${o.metadata.name}`;

// List, then watch from the list's resourceVersion; relists when the watch ends or fails
// (410 Gone included). onChange(Map key -> object) is called at most once per frame.
function watchList(url, signal, onChange) {
  const items = new Map();
  let pending = false;
  const changed = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; if (!signal.aborted) onChange(items); });
  };
  const sep = url.includes('?') ? '&' : '?';
  (async () => {
    while (!signal.aborted) {
      try {
        const list = await api('GET', url, undefined, undefined, signal);
        items.clear();
        for (const o of list.items || []) items.set(keyOf(o), o);
        changed();
        const r = await fetch(`${url}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${list.metadata.resourceVersion}`,
          { headers: authHeaders(), signal });
        if (r.status === 401) { askToken(true); return; }
        if (!r.ok) throw new ApiError(r.status, r.statusText);
        let gone = false;
        await readLines(r, (line) => {
          if (!line.trim() || gone) return;
          const ev = JSON.parse(line);
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED') items.set(keyOf(ev.object), ev.object);
          else if (ev.type === 'DELETED') items.delete(keyOf(ev.object));
          else if (ev.type === 'ERROR') gone = true;
          else return;  // BOOKMARK
          changed();
        });
      } catch (e) {
        if (signal.aborted) return;
        if (e.code === 401) return;
      }
      await sleep(1000, signal);
    }
  })();
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    if (signal) signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

// Discovery: the plural and scope of a kind, for creating any object of a pasted manifest.
const discoveryCache = new Map();
async function resourceFor(apiVersion, kind) {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  if (!discoveryCache.has(base)) discoveryCache.set(base, await api('GET', base));
  const found = (discoveryCache.get(base).resources || []).find((r) => r.kind === kind && !r.name.includes('/'));
  if (!found) throw new ApiError(404, `no matches for kind "${kind}" in version "${apiVersion}"`);
  return { base, plural: found.name, namespaced: found.namespaced };
}

// ---------- token ----------

function askToken(required) {
  const dialog = document.getElementById('token-dialog');
  if (dialog.open) return;
  document.getElementById('token-input').value = session.token;
  dialog.dataset.required = required ? '1' : '';
  dialog.showModal();
}

function setupToken() {
  document.getElementById('token-button').addEventListener('click', () => askToken(false));
  document.getElementById('token-form').addEventListener('submit', () => {
    session.token = document.getElementById('token-input').value.trim();
    sessionStorage.setItem('pjemu.token', session.token);
    route();
  });
  document.getElementById('token-clear').addEventListener('click', () => {
    session.token = '';
    sessionStorage.removeItem('pjemu.token');
    document.getElementById('token-dialog').close();
    route();
  });
}

// ---------- job helpers ----------

function jobState(job) {
  const conds = (job.status && job.status.conditions) || [];
  const trueConds = conds.filter((c) => c.status === 'True');
  return trueConds.length ? trueConds[trueConds.length - 1].type : (conds.length ? conds[conds.length - 1].type : 'Pending');
}

function podReady(pod) {
  return ((pod.status && pod.status.conditions) || []).some((c) => c.type === 'Ready' && c.status === 'True');
}

function restarts(pod) {
  return ((pod.status && pod.status.containerStatuses) || []).reduce((n, c) => n + (c.restartCount || 0), 0);
}

function gpus(pod) {
  let n = 0;
  for (const c of (pod.spec && pod.spec.containers) || []) {
    const lim = (c.resources && (c.resources.limits || c.resources.requests)) || {};
    n += Number(lim['nvidia.com/gpu'] || 0);
  }
  return n;
}

function podPhase(pod) {
  const statuses = (pod.status && pod.status.containerStatuses) || [];
  for (const c of statuses) {
    const w = c.state && c.state.waiting;
    if (w && w.reason && w.reason !== 'ContainerCreating') return w.reason;
  }
  return (pod.status && pod.status.phase) || 'Pending';
}

function sortPods(pods) {
  const rank = (p) => ((p.metadata.labels || {})['training.kubeflow.org/replica-type'] === 'master' ? 0 : 1);
  return [...pods].sort((a, b) => rank(a) - rank(b) || a.metadata.name.localeCompare(b.metadata.name, undefined, { numeric: true }));
}

function jobPath(ns, name) {
  return `${JOBS}/namespaces/${encodeURIComponent(ns)}/pytorchjobs/${encodeURIComponent(name)}`;
}

async function deleteAnyJob(kind, path, ns, name) {
  if (!confirm(`Delete ${kind} ${ns}/${name}? Its pods and services go with it.`)) return false;
  await api('DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
  return true;
}

function deleteJob(ns, name) {
  return deleteAnyJob('PyTorchJob', jobPath(ns, name), ns, name);
}

// ---------- job page ----------

const TABS = [['overview', 'Overview'], ['replicas', 'Replicas'], ['logs', 'Logs'], ['metrics', 'Metrics'],
  ['resources', 'Resources'], ['yaml', 'YAML']];

function showJob(main, signal, ns, name, tab, query) {
  const state = { job: null, pods: new Map(), events: new Map(), gone: false };
  const stateBadge = h('span', { id: 'job-state' });
  const content = h('div', { id: 'tab-content' });
  const tabs = h('div', { class: 'tabs' }, TABS.map(([id, label]) => h('button', {
    type: 'button', 'data-tab': id, class: id === tab ? 'active' : '',
    onclick: () => { location.hash = `#/jobs/${ns}/${name}/${id}`; },
  }, label)));
  replace(main,
    h('div', { class: 'page-head' },
      h('div', { class: 'grow' }, h('h1', {}, name, ' ', stateBadge), h('div', { class: 'muted' }, `PyTorchJob in namespace ${ns}`)),
      h('button', {
        class: 'danger', type: 'button', id: 'delete-job',
        onclick: () => deleteJob(ns, name).then((ok) => { if (ok) location.hash = '#/'; }).catch((e) => alert(e.message)),
      }, 'Delete')),
    tabs, content);

  const tabView = TAB_VIEWS[tab] || TAB_VIEWS.overview;
  const instance = tabView(content, signal, ns, name, state, query);
  const update = () => {
    if (state.job) replace(stateBadge, badge(jobState(state.job)));
    else if (state.gone) replace(stateBadge, badge('Deleted'));
    if (instance && instance.update) instance.update();
  };
  const nsBase = `/api/v1/namespaces/${encodeURIComponent(ns)}`;
  watchList(`${JOBS}/namespaces/${encodeURIComponent(ns)}/pytorchjobs?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`,
    signal, (items) => {
      const job = items.get(`${ns}/${name}`) || null;
      state.gone = !!state.job && !job;
      state.job = job;
      state.loaded = true;
      update();
    });
  watchList(`${nsBase}/pods?labelSelector=${encodeURIComponent(`${JOB_LABEL}=${name}`)}`, signal, (items) => { state.pods = items; update(); });
  watchList(`${nsBase}/events`, signal, (items) => { state.events = items; update(); });
}

function overviewTab(el, signal, ns, name, state) {
  return {
    update() {
      const job = state.job;
      if (!job) { replace(el, h('p', { class: 'muted' }, state.loaded ? 'This PyTorchJob does not exist (any more).' : 'Loading…')); return; }
      const st = job.status || {};
      const specs = job.spec.pytorchReplicaSpecs || {};
      const rp = job.spec.runPolicy || {};
      const replicaSummary = Object.entries(specs).map(([t, r]) => `${t} ×${r.replicas === undefined ? 1 : r.replicas} (${r.restartPolicy || 'default'})`).join(', ');
      const statuses = Object.entries(st.replicaStatuses || {}).map(([t, r]) =>
        `${t}: ${r.active || 0} active, ${r.succeeded || 0} succeeded, ${r.failed || 0} failed`).join('; ');
      const image = Object.values(specs).map((r) => (((r.template || {}).spec || {}).containers || [])[0]).filter((c) => c).map((c) => c.image)[0];
      const conds = (st.conditions || []).map((c) => h('tr', {},
        h('td', {}, c.type), h('td', {}, badge(c.status, c.type === 'Failed' && c.status === 'True' ? 'bad' : '')),
        h('td', {}, c.reason || ''), h('td', {}, c.message || ''), h('td', {}, when(c.lastTransitionTime))));
      const podNames = new Set([...state.pods.values()].map((p) => p.metadata.name));
      const events = [...state.events.values()].filter((e) => {
        const o = e.involvedObject || {};
        return (o.kind === 'PyTorchJob' && o.name === name) || (o.kind === 'Pod' && (podNames.has(o.name) || o.name.startsWith(`${name}-`))) ||
          (o.kind === 'Service' && o.name.startsWith(`${name}-`));
      }).sort((a, b) => String(a.lastTimestamp || a.eventTime || '').localeCompare(String(b.lastTimestamp || b.eventTime || '')));
      const eventRows = events.map(eventRow);
      replace(el,
        h('h2', {}, 'Basic information'),
        kv([
          ['Name', job.metadata.name], ['Namespace', job.metadata.namespace], ['UID', h('span', { class: 'mono' }, job.metadata.uid)],
          ['State', badge(jobState(job))], ['Created', when(job.metadata.creationTimestamp)],
          ['Started', when(st.startTime)], ['Completed', when(st.completionTime)],
          ['Duration', duration(st.startTime, st.completionTime)],
          ['Replicas', replicaSummary], ['Replica status', statuses || '—'], ['Image', image ? h('span', { class: 'mono' }, image) : '—'],
          ['Run policy', `cleanPodPolicy ${rp.cleanPodPolicy || 'None'}` + (rp.backoffLimit !== undefined ? `, backoffLimit ${rp.backoffLimit}` : '') +
            (rp.activeDeadlineSeconds ? `, activeDeadlineSeconds ${rp.activeDeadlineSeconds}` : '') +
            (rp.ttlSecondsAfterFinished !== undefined ? `, ttlSecondsAfterFinished ${rp.ttlSecondsAfterFinished}` : '')],
        ]),
        h('h2', {}, 'Conditions'),
        table(['Type', 'Status', 'Reason', 'Message', 'Last transition'], conds, { id: 'conditions-table' }),
        h('h2', {}, 'Events'),
        table(['Type', 'Reason', 'Object', 'Message', 'Count', 'Last seen'], eventRows, { id: 'events-table' }));
    },
  };
}

function replicasTab(el, signal, ns, name, state) {
  return {
    update() {
      const rows = sortPods(state.pods.values()).map((p) => {
        const labels = p.metadata.labels || {};
        return h('tr', { 'data-pod': p.metadata.name },
          h('td', {}, p.metadata.name),
          h('td', {}, `${labels['training.kubeflow.org/replica-type'] || ''} ${labels['training.kubeflow.org/replica-index'] || ''}`),
          h('td', {}, badge(podPhase(p))), h('td', {}, restarts(p)),
          h('td', {}, p.spec.nodeName || '—'), h('td', { class: 'mono' }, (p.status && p.status.podIP) || '—'),
          h('td', {}, gpus(p)), h('td', {}, when(p.status && p.status.startTime)),
          h('td', {}, h('a', { href: `#/jobs/${ns}/${name}/logs?pod=${encodeURIComponent(p.metadata.name)}` }, 'Log'), ' · ',
            h('a', { href: `#/jobs/${ns}/${name}/metrics?pod=${encodeURIComponent(p.metadata.name)}` }, 'Metrics')));
      });
      replace(el, table(['Pod', 'Replica', 'Phase', 'Restarts', 'Node', 'IP', 'GPUs', 'Started', ''], rows, { id: 'replicas-table' }));
    },
  };
}

// A pod chooser that keeps its choice while the pod list changes. The pod a link names
// (`?pod=`), else the first, is picked once the list has pods.
function podPicker(state, initial, onPick) {
  const select = h('select', { id: 'pod-select' });
  let chosen = initial || '';
  let picked = false;
  select.addEventListener('change', () => { chosen = select.value; onPick(chosen); });
  return {
    select,
    get value() { return chosen; },
    refresh() {
      const names = sortPods(state.pods.values()).map((p) => p.metadata.name);
      if (!chosen && names.length) chosen = names[0];
      if (chosen && !picked && names.length) { picked = true; onPick(chosen); }
      const options = names.includes(chosen) || !chosen ? names : [chosen, ...names];
      if (options.join() !== [...select.options].map((o) => o.value).join()) {
        replace(select, options.map((n) => h('option', { value: n }, n)));
      }
      select.value = chosen;
    },
  };
}

function logsTab(el, signal, ns, name, state, query) {
  const out = h('pre', { class: 'log', id: 'log-output' });
  const follow = h('input', { type: 'checkbox', id: 'log-follow', checked: true });
  const status = h('span', { class: 'muted', id: 'log-status' });
  let stream = null;
  const start = (pod) => {
    if (stream) stream.abort();
    stream = new AbortController();
    const local = stream;
    signal.addEventListener('abort', () => local.abort(), { once: true });
    out.textContent = '';
    streamLog(ns, pod, follow.checked, local.signal, out, status, follow);
  };
  const picker = podPicker(state, query.get('pod'), start);
  follow.addEventListener('change', () => { if (picker.value) start(picker.value); });
  replace(el, h('div', { class: 'toolbar' }, h('label', {}, 'Pod ', picker.select),
    h('label', {}, follow, ' Follow'), status), out);
  return { update: () => picker.refresh() };
}

async function streamLog(ns, pod, follow, signal, out, status, followBox) {
  const url = `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod)}/log${follow ? '?follow=true' : ''}`;
  const decoder = new TextDecoder();
  while (!signal.aborted) {
    try {
      status.textContent = follow ? 'connecting…' : '';
      const r = await fetch(url, { headers: authHeaders(), signal });
      if (r.status === 401) { askToken(true); return; }
      if (!r.ok) {
        const body = await r.json().catch(() => ({}));
        status.textContent = body.message || r.statusText;
        await sleep(1000, signal);
        continue;
      }
      status.textContent = follow ? 'following' : '';
      const reader = r.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        out.textContent += decoder.decode(value, { stream: true });
        if (out.textContent.length > MAX_LOG_CHARS) out.textContent = out.textContent.slice(-MAX_LOG_CHARS / 2);
        if (followBox.checked) out.scrollTop = out.scrollHeight;
      }
      status.textContent = 'end of log';
      return;
    } catch (e) {
      if (signal.aborted) return;
      status.textContent = e.message;
      await sleep(1000, signal);
    }
  }
}

// Polls fn every `ms` until the view goes away.
function poll(signal, ms, fn) {
  (async () => {
    while (!signal.aborted) {
      try { await fn(); } catch (e) { if (e.code === 401) return; }
      await sleep(ms, signal);
    }
  })();
}

function metricsTab(el, signal, ns, name, state, query) {
  const charts = h('div', { class: 'charts' });
  const summary = h('div');
  let pod = '';
  let last = '';
  const load = async () => {
    if (!pod) return;
    const m = await api('GET', `/ui/api/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod)}/metrics`, undefined, undefined, signal);
    const key = JSON.stringify(m);
    if (key === last) return;
    last = key;
    const loss = m.steps.map(([step, l]) => [step, l]);
    const acc = m.epochs.filter((e) => e.accuracy !== undefined).map((e) => [e.epoch, e.accuracy]);
    const testLoss = m.epochs.filter((e) => e.test_loss !== undefined).map((e) => [e.epoch, e.test_loss]);
    replace(charts,
      chartBox('Training loss per step', 'loss-chart', [{ name: 'loss', points: loss }], { xLabel: 'step', integerX: true }),
      chartBox('Test accuracy per epoch', 'accuracy-chart', [{ name: 'accuracy', points: acc }],
        { xLabel: 'epoch', integerX: true, dots: true, yMin: 0, yMax: 1, yFormat: (v) => `${Math.round(v * 100)}%` }),
      chartBox('Test loss per epoch', 'test-loss-chart', [{ name: 'test loss', points: testLoss }], { xLabel: 'epoch', integerX: true, dots: true, yMin: 0 }));
    replace(summary,
      !m.trainer ? h('div', { class: 'notice' }, 'This pod runs no mapped trainer: no metrics file.') : '',
      m.truncated ? h('div', { class: 'notice' }, 'The metrics file is large: only its end is shown.') : '',
      h('h2', {}, 'Epochs'),
      table(['Epoch', 'Accuracy', 'Test loss', 'Steps', 'Train seconds', 'Samples/s'], m.epochs.map((e) => h('tr', {},
        h('td', {}, e.epoch), h('td', {}, fmt(e.accuracy, 4)), h('td', {}, fmt(e.test_loss, 4)), h('td', {}, e.steps ?? ''),
        h('td', {}, fmt(e.train_seconds, 2)), h('td', {}, fmt(e.samples_per_second, 0)))), { id: 'epochs-table' }),
      h('p', { class: 'muted' }, `${m.steps.length} logged steps, read from the trainer's metrics file (metrics-rank<R>.jsonl); the same scalars are in its TensorBoard event files.`));
  };
  const picker = podPicker(state, query.get('pod'), (p) => { pod = p; last = ''; load().catch(() => {}); });
  replace(el, h('div', { class: 'toolbar' }, h('label', {}, 'Pod ', picker.select)), charts, summary);
  poll(signal, 2000, load);
  return { update: () => picker.refresh() };
}

function resourcesTab(el, signal, ns, name, state) {
  const charts = h('div', { class: 'charts' });
  replace(el, h('p', { class: 'muted' }, 'CPU (cores) and resident memory of each pod\'s processes, sampled from /proc every second while they run.'), charts);
  const load = async () => {
    const pods = sortPods(state.pods.values()).map((p) => p.metadata.name);
    const cpu = [];
    const mem = [];
    const gpuUtil = [];
    const gpuMem = [];
    for (const pod of pods) {
      const r = await api('GET', `/ui/api/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod)}/resources`, undefined, undefined, signal);
      for (const c of r.containers) {
        const label = r.containers.length > 1 ? `${pod}/${c.container}` : pod;
        cpu.push({ name: label, points: c.points.map(([t, cores]) => [t, cores]) });
        mem.push({ name: label, points: c.points.map(([t, , rss]) => [t, rss / (1024 * 1024)]) });
        // [t, cores, rss, gpu %, gpu bytes]: the GPU figures come only where NVML is.
        const withGpu = c.points.filter((p) => p.length >= 5);
        if (withGpu.length) {
          gpuUtil.push({ name: label, points: withGpu.map(([t, , , util]) => [t, util]) });
          gpuMem.push({ name: label, points: withGpu.map(([t, , , , bytes]) => [t, bytes / (1024 * 1024)]) });
        }
      }
    }
    replace(charts,
      chartBox('CPU (cores)', 'cpu-chart', cpu, { time: true, yMin: 0 }),
      chartBox('Memory (MiB RSS)', 'memory-chart', mem, { time: true, yMin: 0 }),
      ...(gpuUtil.length ? [
        chartBox('GPU utilisation (%)', 'gpu-util-chart', gpuUtil, { time: true, yMin: 0 }),
        chartBox('GPU memory (MiB)', 'gpu-memory-chart', gpuMem, { time: true, yMin: 0 })] : []));
  };
  poll(signal, 2000, load);
  return { update() {} };
}

function yamlTab(el, signal, ns, name, state) {
  return {
    update() {
      if (!state.job) { replace(el, h('p', { class: 'muted' }, 'No object.')); return; }
      const job = Object.assign({ apiVersion: 'kubeflow.org/v1', kind: 'PyTorchJob' }, state.job);
      replace(el, h('pre', { class: 'yaml', id: 'job-yaml' }, toYaml(job)));
    },
  };
}

const TAB_VIEWS = { overview: overviewTab, replicas: replicasTab, logs: logsTab, metrics: metricsTab, resources: resourcesTab, yaml: yamlTab };

function fmt(v, digits) {
  return typeof v === 'number' ? v.toFixed(digits) : '';
}

// ---------- router ----------

function route() {
  if (view) view.controller.abort();
  view = { controller: new AbortController() };
  const signal = view.controller.signal;
  const main = document.getElementById('main');
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, qs] = hash.split('?');
  const query = new URLSearchParams(qs || '');
  const parts = path.split('/').filter((p) => p).map(decodeURIComponent);
  document.getElementById('nav-jobs').className = parts[0] !== 'create' ? 'active' : '';
  document.getElementById('nav-create').className = parts[0] === 'create' ? 'active' : '';
  if (parts[0] === 'create') { document.title = 'Create job · pjemu'; showCreate(main); return; }
  if (parts[0] === 't9k' && parts.length >= 3) {
    document.title = `${parts[2]} · pjemu`;
    showT9kJob(main, signal, parts[1], parts[2], parts[3] || 'job');
    return;
  }
  if (parts[0] === 'tensorboards' && parts.length >= 3) {
    document.title = `TensorBoard ${parts[2]} · pjemu`;
    showTensorBoard(main, signal, parts[1], parts[2]);
    return;
  }
  if (parts[0] === 'workloads' && parts.length >= 4) {
    document.title = `${parts[3]} · pjemu`;
    showWorkload(main, signal, parts[1], parts[2], parts[3], parts[4] || 'overview', query);
    return;
  }
  if (parts[0] === 'jobs' && parts.length >= 3) {
    document.title = `${parts[2]} · pjemu`;
    showJob(main, signal, parts[1], parts[2], parts[3] || 'overview', query);
    return;
  }
  document.title = 'Jobs · pjemu';
  showJobList(main, signal);
}

setupToken();
window.addEventListener('hashchange', route);
route();

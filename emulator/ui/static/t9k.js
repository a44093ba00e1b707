// pjemu console, T9k's kinds: the PyTorchTrainingJob page (basic information with the TensorBoard's
// status and link, conditions, events; replicas with a log viewer each; monitoring), the
// TensorBoard page (a scalar chart per tag from the event files of its log dirs), and the
// request/limit sums the job list shows for every kind. Loaded before app.js, whose helpers
// (h, api, watchList, chartBox, ...) these functions call when a page is shown.
'use strict';

const T9K = '/apis/batch.tensorstack.dev/v1beta1';
const T9K_LABEL = 'tensorstack.dev/owner-name';
const TENSORBOARDS = '/apis/tensorstack.dev/v1beta1';

// ---------- quantities and request/limit sums ----------

const QUANTITY_SUFFIX = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };

// A Kubernetes quantity ("500m", "8Gi", "1e3", 4) as a number; 0 when absent or unreadable.
function quantity(v) {
  if (typeof v === 'number') return v;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(String(v || '').trim());
  if (!m || !(m[2] in QUANTITY_SUFFIX)) return 0;
  return Number(m[1]) * QUANTITY_SUFFIX[m[2]];
}

// CPU (cores) and memory (bytes) requests and limits summed over a pod spec's containers (a
// request defaults to the limit when only the limit is set, as the API server defaults it).
function podSums(spec) {
  const sum = { cpuReq: 0, cpuLim: 0, memReq: 0, memLim: 0 };
  for (const c of (spec && spec.containers) || []) {
    const lim = (c.resources && c.resources.limits) || {};
    const req = Object.assign({}, lim, (c.resources && c.resources.requests) || {});
    sum.cpuReq += quantity(req.cpu); sum.cpuLim += quantity(lim.cpu);
    sum.memReq += quantity(req.memory); sum.memLim += quantity(lim.memory);
  }
  return sum;
}

// The replica specs of a job of either kind as [{type, replicas, template}].
function replicaSpecsOf(job) {
  const spec = job.spec || {};
  if (Array.isArray(spec.replicaSpecs)) {
    return spec.replicaSpecs.map((r) => ({ type: r.type, replicas: r.replicas === undefined ? 1 : r.replicas, template: r.template || {}, restartPolicy: r.restartPolicy }));
  }
  return Object.entries(spec.pytorchReplicaSpecs || {}).map(([type, r]) =>
    ({ type, replicas: r.replicas === undefined ? 1 : r.replicas, template: r.template || {}, restartPolicy: r.restartPolicy }));
}

function jobSums(job) {
  const sum = { cpuReq: 0, cpuLim: 0, memReq: 0, memLim: 0 };
  for (const r of replicaSpecsOf(job)) {
    const p = podSums(r.template.spec);
    for (const k of Object.keys(sum)) sum[k] += p[k] * r.replicas;
  }
  return sum;
}

const fmtCores = (v) => v.toFixed(2);
function fmtBytes(v) {
  if (v >= 2 ** 30 || v === 0) return `${(v / 2 ** 30).toFixed(2)}Gi`;
  return `${(v / 2 ** 20).toFixed(2)}Mi`;
}
const reqLimit = (req, lim, f) => `${f(req)} / ${f(lim)}`;

// ---------- the PyTorchTrainingJob page ----------

const T9K_TABS = [['job', 'PyTorchTrainingJob'], ['replicas', 'Replicas'], ['monitoring', 'Monitoring'], ['yaml', 'YAML']];

function t9kJobPath(ns, name) {
  return `${T9K}/namespaces/${encodeURIComponent(ns)}/pytorchtrainingjobs/${encodeURIComponent(name)}`;
}

function t9kPhase(job) {
  return (job && job.status && job.status.phase) || 'Pending';
}

function showT9kJob(main, signal, ns, name, tab) {
  const state = { job: null, pods: new Map(), events: new Map(), boards: new Map(), loaded: false };
  const phaseBadge = h('span', { id: 'job-state' });
  const content = h('div', { id: 'tab-content' });
  replace(main,
    h('div', { class: 'page-head' },
      h('div', { class: 'grow' }, h('h1', {}, name, ' ', phaseBadge), h('div', { class: 'muted' }, `PyTorchTrainingJob in namespace ${ns}`)),
      h('button', {
        class: 'danger', type: 'button', id: 'delete-job',
        onclick: () => deleteAnyJob('PyTorchTrainingJob', t9kJobPath(ns, name), ns, name).then((ok) => { if (ok) location.hash = '#/'; }).catch((e) => alert(e.message)),
      }, 'Delete')),
    h('div', { class: 'tabs' }, T9K_TABS.map(([id, label]) => h('button', {
      type: 'button', 'data-tab': id, class: id === tab ? 'active' : '',
      onclick: () => { location.hash = `#/t9k/${ns}/${name}/${id}`; },
    }, label))),
    content);
  const view = (T9K_VIEWS[tab] || T9K_VIEWS.job)(content, signal, ns, name, state);
  const update = () => {
    replace(phaseBadge, state.job ? badge(t9kPhase(state.job)) : '');
    view.update();
  };
  const nsBase = `/api/v1/namespaces/${encodeURIComponent(ns)}`;
  watchList(`${T9K}/namespaces/${encodeURIComponent(ns)}/pytorchtrainingjobs?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`,
    signal, (items) => { state.job = items.get(`${ns}/${name}`) || null; state.loaded = true; update(); });
  watchList(`${nsBase}/pods?labelSelector=${encodeURIComponent(`${T9K_LABEL}=${name}`)}`, signal, (items) => { state.pods = items; update(); });
  watchList(`${nsBase}/events`, signal, (items) => { state.events = items; update(); });
  watchList(`${TENSORBOARDS}/namespaces/${encodeURIComponent(ns)}/tensorboards`, signal, (items) => { state.boards = items; update(); });
}

// The job's TensorBoard: the one its status names, else one it owns.
function boardOf(state) {
  const dep = (((state.job || {}).status || {}).tensorboard || {}).dependent;
  for (const b of state.boards.values()) {
    if (dep && b.metadata.name === dep.name) return b;
    if ((b.metadata.ownerReferences || []).some((o) => o.uid === state.job.metadata.uid)) return b;
  }
  return null;
}

function tensorboardCell(job, board) {
  if (!job.spec.tensorboardSpec) return '—';
  const ready = ((board && board.status && board.status.conditions) || []).find((c) => c.type === 'Ready');
  const phase = (board && board.status && board.status.phase) || 'Pending';
  const tb = job.status && job.status.tensorboard;
  return h('span', { id: 'tensorboard-status' }, badge(phase), ' ',
    board && board.status && board.status.url
      ? h('a', { href: board.status.url, id: 'tensorboard-link' }, `Open TensorBoard ${board.metadata.name}`)
      : h('span', { class: 'muted' }, 'no TensorBoard yet'),
    ready && ready.status !== 'True' ? h('div', { class: 'muted' }, ready.message || '') : '',
    tb && tb.note ? h('div', { class: 'muted' }, tb.note) : '');
}

function t9kJobTab(el, signal, ns, name, state) {
  return {
    update() {
      const job = state.job;
      if (!job) { replace(el, h('p', { class: 'muted' }, state.loaded ? 'This PyTorchTrainingJob does not exist (any more).' : 'Loading…')); return; }
      const st = job.status || {};
      const specs = replicaSpecsOf(job);
      const sums = jobSums(job);
      const claims = new Set();
      for (const r of specs) for (const v of (r.template.spec || {}).volumes || []) if (v.persistentVolumeClaim) claims.add(v.persistentVolumeClaim.claimName);
      const labels = Object.entries(job.metadata.labels || {}).map(([k, v]) => h('span', { class: 'chip' }, `${k}=${v}`));
      const conds = [...(st.conditions || [])].sort((a, b) => String(b.lastTransitionTime || '').localeCompare(String(a.lastTransitionTime || '')))
        .map((c) => h('tr', {}, h('td', {}, c.type), h('td', {}, badge(c.status, c.type === 'Failed' && c.status === 'True' ? 'bad' : '')),
          h('td', {}, when(c.lastTransitionTime)), h('td', {}, c.reason || ''), h('td', {}, c.message || '')));
      const podNames = new Set([...state.pods.values()].map((p) => p.metadata.name));
      const board = boardOf(state);
      const events = [...state.events.values()].filter((e) => {
        const o = e.involvedObject || {};
        return (o.kind === 'PyTorchTrainingJob' && o.name === name) || (o.kind === 'Pod' && podNames.has(o.name)) ||
          (o.kind === 'TensorBoard' && board && o.name === board.metadata.name);
      }).sort((a, b) => String(b.lastTimestamp || b.eventTime || '').localeCompare(String(a.lastTimestamp || a.eventTime || '')))
        .map((e) => h('tr', {}, h('td', {}, when(e.lastTimestamp || e.eventTime)), h('td', {}, badge(e.type || 'Normal')),
          h('td', {}, e.reason || ''), h('td', {}, e.message || ''),
          h('td', {}, `${(e.involvedObject || {}).kind}/${(e.involvedObject || {}).name}`)));
      const agg = st.aggregate || {};
      const overview = specs.map((r) => {
        const task = (st.tasks || []).find((t) => t.type === r.type) || {};
        const phases = (task.replicas || []).map((x) => x.phase);
        const image = ((r.template.spec || {}).containers || []).map((c) => c.image).join(', ');
        return h('tr', {}, h('td', {}, r.type), h('td', {}, r.replicas),
          h('td', {}, phases.length ? phases.join(', ') : '—'), h('td', { class: 'mono' }, image), h('td', {}, r.restartPolicy || 'OnFailure'));
      });
      replace(el,
        h('h2', {}, 'Basic information'),
        kv([
          ['Name', job.metadata.name], ['UID', h('span', { class: 'mono' }, job.metadata.uid)],
          ['Status', badge(t9kPhase(job))],
          ['Replicas', h('span', { id: 'job-replicas' }, specs.map((r) => `${r.type}: ${r.replicas}`).join(', '))],
          ['Volumes', claims.size ? [...claims].join(', ') : '—'], ['Labels', labels.length ? labels : '—'],
          ['Namespace', job.metadata.namespace],
          ['CPU request / limit', h('span', { id: 'job-cpu' }, reqLimit(sums.cpuReq, sums.cpuLim, fmtCores))],
          ['Memory request / limit', h('span', { id: 'job-memory' }, reqLimit(sums.memReq, sums.memLim, fmtBytes))],
          ['Created', when(job.metadata.creationTimestamp)],
          ['Backoff count', String(st.backoffCount || 0)],
          ['Pods', ['creating', 'pending', 'running', 'succeeded', 'failed', 'unknown', 'deleted'].filter((k) => agg[k]).map((k) => `${k} ${agg[k]}`).join(', ') || '—'],
          ['TensorBoard', tensorboardCell(job, board)],
        ]),
        h('h2', {}, 'Overview'),
        table(['Replica type', 'Replicas', 'Status', 'Image', 'Restart policy'], overview, { id: 'overview-table' }),
        h('h2', {}, 'Conditions'),
        table(['Type', 'Status', 'Last transition', 'Reason', 'Message'], conds, { id: 'conditions-table' }),
        h('h2', {}, 'Events'),
        table(['Time', 'Type', 'Reason', 'Message', 'Resource'], events, { id: 'events-table' }));
    },
  };
}

function t9kReplicasTab(el, signal, ns, name, state) {
  const body = h('div');
  const logBox = h('div', { id: 'replica-log' });
  let logStream = null;
  const openLog = (pod) => {
    if (logStream) logStream.abort();
    logStream = new AbortController();
    const local = logStream;
    signal.addEventListener('abort', () => local.abort(), { once: true });
    const out = h('pre', { class: 'log', id: 'log-output' });
    const status = h('span', { class: 'muted', id: 'log-status' });
    const follow = h('input', { type: 'checkbox', id: 'log-follow', checked: true });
    replace(logBox, h('div', { class: 'toolbar' }, h('h2', { class: 'grow' }, `Log: ${pod}`), h('label', {}, follow, ' Follow'), status,
      h('button', { type: 'button', onclick: () => { local.abort(); replace(logBox); } }, 'Close')), out);
    streamLog(ns, pod, true, local.signal, out, status, follow);
  };
  replace(el, body, logBox);
  return {
    update() {
      const rows = [...state.pods.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name, undefined, { numeric: true })).map((p) => {
        const sums = podSums(p.spec);
        const labels = Object.entries(p.metadata.labels || {}).map(([k, v]) => h('span', { class: 'chip' }, `${k}=${v}`));
        return h('tr', { 'data-pod': p.metadata.name },
          h('td', {}, badge(podPhase(p))), h('td', {}, p.metadata.name), h('td', { class: 'chips' }, labels),
          h('td', {}, (p.status && p.status.phase) || 'Pending'),
          h('td', {}, reqLimit(sums.cpuReq, sums.cpuLim, fmtCores)), h('td', {}, reqLimit(sums.memReq, sums.memLim, fmtBytes)),
          h('td', {}, h('button', { type: 'button', class: 'log-button', onclick: () => openLog(p.metadata.name) }, 'Log')));
      });
      replace(body, table(['', 'Name', 'Labels', 'Phase', 'CPU req / limit', 'Memory req / limit', ''], rows, { id: 'replicas-table' }));
    },
  };
}

// Sums per-pod series that share sample times (the samplers read every pod at once, so one
// second's samples carry the same time): [[t, v], ...] summed by t rounded to the second.
function sumSeries(seriesList) {
  const byTime = new Map();
  for (const points of seriesList) {
    for (const [t, v] of points) {
      const k = Math.round(t);
      byTime.set(k, (byTime.get(k) || 0) + v);
    }
  }
  return [...byTime.entries()].sort((a, b) => a[0] - b[0]);
}

function flatLine(name, value, points) {
  if (!points.length) return { name, points: [] };
  return { name, points: [[points[0][0], value], [points[points.length - 1][0], value]] };
}

function t9kMonitoringTab(el, signal, ns, name, state) {
  const charts = h('div', { class: 'charts', id: 'monitoring-charts' });
  const range = h('span', { class: 'muted', id: 'monitoring-range' });
  const load = async () => {
    if (!state.job) return;
    const pods = [...state.pods.values()].map((p) => p.metadata.name).sort();
    const cpu = [], mem = [], rx = [], tx = [], iops = [], tput = [];
    for (const pod of pods) {
      const base = `/ui/api/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod)}`;
      const r = await api('GET', `${base}/resources`, undefined, undefined, signal);
      for (const c of r.containers) {
        cpu.push(c.points.map(([t, cores]) => [t, cores]));
        mem.push(c.points.map(([t, , rss]) => [t, rss / 2 ** 30]));
      }
      const io = await api('GET', `${base}/io`, undefined, undefined, signal);
      for (const c of io.containers) {
        rx.push(c.points.map((p) => [p[0], p[1] / 1024]));
        tx.push(c.points.map((p) => [p[0], p[2] / 1024]));
        tput.push(c.points.map((p) => [p[0], (p[3] + p[4]) / 1024]));
        iops.push(c.points.map((p) => [p[0], p[5] + p[6]]));
      }
    }
    const sums = jobSums(state.job);
    const cpuUse = sumSeries(cpu);
    const memUse = sumSeries(mem);
    const opts = { time: true, yMin: 0 };
    const start = state.job.metadata.creationTimestamp;
    replace(range, `From ${start ? new Date(start).toLocaleTimeString([], { hour12: false }) : 'the start'} to now`);
    replace(charts,
      chartBox('CPU (cores)', 'cpu-chart', [{ name: 'usage', points: cpuUse }, flatLine('request', sums.cpuReq, cpuUse), flatLine('limit', sums.cpuLim, cpuUse)], opts),
      chartBox('Memory (GiB)', 'memory-chart', [{ name: 'usage', points: memUse }, flatLine('request', sums.memReq / 2 ** 30, memUse), flatLine('limit', sums.memLim / 2 ** 30, memUse)], opts),
      chartBox('Network (KiB/s)', 'network-chart', [{ name: 'receive', points: sumSeries(rx) }, { name: 'send', points: sumSeries(tx) }], opts),
      chartBox('Storage IOPS (read + write calls/s)', 'iops-chart', [{ name: 'IOPS', points: sumSeries(iops) }], opts),
      chartBox('Storage throughput (KiB/s, read + write)', 'throughput-chart', [{ name: 'throughput', points: sumSeries(tput) }], opts));
  };
  replace(el, h('div', { class: 'toolbar' }, range, h('button', { type: 'button', id: 'monitoring-refresh', onclick: () => load().catch(() => {}) }, 'Refresh')),
    h('p', { class: 'muted' }, 'Summed over the job\'s pods: CPU and memory from /proc of their processes, with the job\'s requests and limits; network receive/send from /proc/<pid>/net/dev (all interfaces but lo); storage from /proc/<pid>/io.'),
    charts);
  poll(signal, 3000, load);
  let first = true;  // the first poll may have come before the job and its pods
  return { update() { if (first && state.job && state.pods.size) { first = false; load().catch(() => {}); } } };
}

function t9kYamlTab(el, signal, ns, name, state) {
  return {
    update() {
      if (!state.job) { replace(el, h('p', { class: 'muted' }, 'No object.')); return; }
      const job = Object.assign({ apiVersion: 'batch.tensorstack.dev/v1beta1', kind: 'PyTorchTrainingJob' }, state.job);
      replace(el, h('pre', { class: 'yaml', id: 'job-yaml' }, toYaml(job)));
    },
  };
}

const T9K_VIEWS = { job: t9kJobTab, replicas: t9kReplicasTab, monitoring: t9kMonitoringTab, yaml: t9kYamlTab };

// ---------- the TensorBoard page ----------

function showTensorBoard(main, signal, ns, name) {
  const head = h('div', { id: 'tensorboard-head' });
  const notices = h('div');
  const charts = h('div', { class: 'charts', id: 'scalar-charts' });
  replace(main,
    h('div', { class: 'page-head' }, h('div', { class: 'grow' }, h('h1', {}, `TensorBoard ${name}`),
      h('div', { class: 'muted' }, `TensorBoard in namespace ${ns}: the scalars of its log dirs' event files, read again every 3 seconds`))),
    head, notices, charts);
  let board = null;
  let last = '';
  watchList(`${TENSORBOARDS}/namespaces/${encodeURIComponent(ns)}/tensorboards?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`,
    signal, (items) => {
      board = items.get(`${ns}/${name}`) || null;
      const st = (board && board.status) || {};
      const ready = (st.conditions || []).find((c) => c.type === 'Ready') || {};
      replace(head, board ? kv([
        ['Status', h('span', { id: 'tensorboard-phase' }, badge(st.phase || 'Pending'))],
        ['Ready', ready.status ? `${ready.status}: ${ready.message || ''}` : '—'],
        ['Log dirs', (st.logDirs || []).map((d) => h('div', { class: 'mono' }, `${d.source} → ${d.path}`))],
      ]) : h('p', { class: 'muted' }, 'No such TensorBoard.'));
    });
  const load = async () => {
    const r = await api('GET', `/ui/api/namespaces/${encodeURIComponent(ns)}/tensorboards/${encodeURIComponent(name)}/scalars`, undefined, undefined, signal);
    const key = JSON.stringify(r);
    if (key === last) return;
    last = key;
    const byTag = new Map();
    for (const s of r.series) {
      if (!byTag.has(s.tag)) byTag.set(s.tag, []);
      byTag.get(s.tag).push({ name: s.run, points: s.points.map(([step, v]) => [step, v]) });
    }
    replace(notices,
      r.errors.map((e) => h('div', { class: 'notice error' }, e)),
      !r.series.length ? h('div', { class: 'empty', id: 'no-scalars' }, r.files ? 'The event files hold no scalars yet.' : 'No event files in the log dirs yet.') : '',
      h('p', { class: 'muted' }, `${r.files} event file(s)` + (r.partial ? `, ${r.partial} being written` : '')));
    replace(charts, [...byTag.entries()].sort((a, b) => a[0].localeCompare(b[0])).map(([tag, series]) =>
      chartBox(tag, `scalar-${tag.replace(/[^A-Za-z0-9_-]/g, '_')}`, series, { xLabel: 'step', integerX: true, dots: series.every((x) => x.points.length <= 12) })));
  };
  poll(signal, 3000, load);
}

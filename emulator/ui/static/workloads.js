// pjemu console: every job kind, from the one table of kinds the server serves
// (GET /ui/api/workloads: the resource rows with a workload, each job with its kind's own
// state and pod selector). No list of kinds here: a kind is found in that table. The job list;
// the page of any kind without a page of its own (#/workloads/{plural}/{ns}/{name}/{tab}):
// state, conditions, events, the owner tree (GET /ui/api/namespaces/{ns}/{plural}/{name}/tree:
// TrainJob -> JobSet -> Jobs -> pods), logs, monitoring and YAML.
// Loaded before app.js; uses its helpers when called.
'use strict';

// One row of a page's events table: type, reason, object, message, count, last seen (the job
// pages of app.js and workloads.js).
function eventRow(e) {
  const o = e.involvedObject || {};
  return h('tr', {},
    h('td', {}, badge(e.type || 'Normal')), h('td', {}, e.reason || ''),
    h('td', {}, `${o.kind}/${o.name}`),
    h('td', {}, e.message || ''), h('td', {}, e.count || 1), h('td', {}, when(e.lastTimestamp || e.eventTime)));
}

// The kinds whose console page is richer than the generic one (app.js, t9k.js), by kind.
const KIND_PAGES = {
  PyTorchJob: (ns, n) => `#/jobs/${ns}/${n}/overview`,
  PyTorchTrainingJob: (ns, n) => `#/t9k/${ns}/${n}/job`,
};

function workloadPage(kind, plural, ns, name) {
  const page = KIND_PAGES[kind];
  return page ? page(ns, name) : `#/workloads/${plural}/${ns}/${name}/overview`;
}

function objectPath(apiVersion, plural, ns, name) {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return `${base}/namespaces/${encodeURIComponent(ns)}/${plural}/${encodeURIComponent(name)}`;
}

// Whether the pod's labels match a label selector string ("a=b,c=d").
function podMatches(pod, selector) {
  const labels = pod.metadata.labels || {};
  return !!selector && selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return labels[k] === v;
  });
}

// The workload table, fetched once for the pages that need only the kinds.
let workloadKinds = null;
async function kindsTable() {
  if (!workloadKinds) workloadKinds = (await api('GET', '/ui/api/workloads')).kinds;
  return workloadKinds;
}

// ---------- job list ----------

function showJobList(main, signal) {
  const body = h('div');
  replace(main,
    h('div', { class: 'page-head' }, h('h1', { class: 'grow' }, 'Jobs'),
      h('a', { href: '#/create' }, h('button', { class: 'primary', type: 'button' }, 'Create job'))),
    body);
  let items = null;
  let pods = new Map();
  const render = () => {
    if (!items) return;
    if (!items.length) {
      replace(body, h('div', { class: 'empty', id: 'no-jobs' }, 'No jobs yet. ', h('a', { href: '#/create' }, 'Create one from YAML.')));
      return;
    }
    const sorted = [...items].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`) || a.kind.localeCompare(b.kind));
    const rows = sorted.map((w) => {
      const jp = [...pods.values()].filter((p) => p.metadata.namespace === w.namespace && podMatches(p, w.podSelector));
      const ready = jp.filter(podReady).length;
      const done = jp.filter((p) => p.status && p.status.phase === 'Succeeded').length;
      const sums = jobSums(w.object);
      const desired = replicaSpecsOf(w.object).reduce((n, r) => n + r.replicas, 0) || jp.length;
      return h('tr', { 'data-job': `${w.namespace}/${w.name}`, 'data-kind': w.kind },
        h('td', {}, h('a', { href: workloadPage(w.kind, w.plural, w.namespace, w.name), class: 'job-link' }, w.name)),
        h('td', {}, w.namespace),
        h('td', { class: 'job-state', title: w.message || '' }, badge(w.state || 'Pending')),
        h('td', { class: 'job-ready' }, `${ready}/${desired}`, done ? h('span', { class: 'muted' }, ` (${done} succeeded)`) : ''),
        h('td', { class: 'job-kind' }, w.kind),
        h('td', { class: 'job-cpu' }, reqLimit(sums.cpuReq, sums.cpuLim, fmtCores)),
        h('td', { class: 'job-memory' }, reqLimit(sums.memReq, sums.memLim, fmtBytes)),
        h('td', {}, h('span', { 'data-age-plain': w.created }, age(w.created))),
        h('td', {}, h('button', {
          class: 'danger', type: 'button',
          onclick: () => deleteAnyJob(w.kind, objectPath(w.apiVersion, w.plural, w.namespace, w.name), w.namespace, w.name)
            .catch((e) => alert(e.message)),
        }, 'Delete')));
    });
    replace(body, table(['Name', 'Namespace', 'State', 'Replicas ready', 'Kind', 'CPU req / limit', 'Memory req / limit', 'Age', ''], rows, { id: 'job-table' }));
  };
  poll(signal, 1000, async () => {
    const table = await api('GET', '/ui/api/workloads', undefined, undefined, signal);
    workloadKinds = table.kinds;
    items = table.items;
    render();
  });
  watchList('/api/v1/pods', signal, (all) => { pods = all; render(); });
}

// ---------- a job of any kind ----------

const WORKLOAD_TABS = [['overview', 'Overview'], ['tree', 'Owner tree'], ['logs', 'Logs'],
  ['resources', 'Monitoring'], ['yaml', 'YAML']];

function showWorkload(main, signal, plural, ns, name, tab, query) {
  const state = { plural, job: null, tree: null, pods: new Map(), events: new Map(), loaded: false, gone: false };
  const stateBadge = h('span', { id: 'job-state' });
  const kindLine = h('div', { class: 'muted', id: 'job-kind' });
  const content = h('div', { id: 'tab-content' });
  const tabs = h('div', { class: 'tabs' }, WORKLOAD_TABS.map(([id, label]) => h('button', {
    type: 'button', 'data-tab': id, class: id === tab ? 'active' : '',
    onclick: () => { location.hash = `#/workloads/${plural}/${ns}/${name}/${id}`; },
  }, label)));
  replace(main,
    h('div', { class: 'page-head' },
      h('div', { class: 'grow' }, h('h1', {}, name, ' ', stateBadge), kindLine),
      h('button', {
        class: 'danger', type: 'button', id: 'delete-job',
        onclick: () => {
          if (!state.job) return;
          deleteAnyJob(state.job.kind, objectPath(state.job.apiVersion, plural, ns, name), ns, name)
            .then((ok) => { if (ok) location.hash = '#/'; }).catch((e) => alert(e.message));
        },
      }, 'Delete')),
    tabs, content);
  const views = { overview: workloadOverviewTab, tree: ownerTreeTab, logs: logsTab, resources: resourcesTab, yaml: yamlTab };
  const instance = (views[tab] || views.overview)(content, signal, ns, name, state, query);
  const update = () => {
    if (state.tree) {
      replace(stateBadge, badge(state.tree.state || 'Pending'));
      replace(kindLine, `${state.tree.kind} in namespace ${ns}`);
    } else if (state.gone) {
      replace(stateBadge, badge('Deleted'));
    }
    if (instance && instance.update) instance.update();
  };
  poll(signal, 1500, async () => {
    try {
      state.tree = await api('GET', `/ui/api/namespaces/${encodeURIComponent(ns)}/${plural}/${encodeURIComponent(name)}/tree`,
        undefined, undefined, signal);
    } catch (e) {
      if (e.code !== 404) throw e;
      state.gone = !!state.tree;
      state.tree = null;
    }
    state.loaded = true;
    state.job = state.tree && state.tree.object;
    state.pods = new Map(treeNodes(state.tree).filter((n) => n.kind === 'Pod').map((n) => [keyOf(n.object), n.object]));
    update();
  });
  watchList(`/api/v1/namespaces/${encodeURIComponent(ns)}/events`, signal, (items) => { state.events = items; update(); });
}

// Every node of an owner tree, the root first.
function treeNodes(node) {
  return node ? [node, ...node.children.flatMap(treeNodes)] : [];
}

function workloadOverviewTab(el, signal, ns, name, state) {
  return {
    update() {
      const job = state.job;
      if (!job) { replace(el, h('p', { class: 'muted' }, state.loaded ? 'This job does not exist (any more).' : 'Loading…')); return; }
      const st = job.status || {};
      const conds = (st.conditions || []).map((c) => h('tr', {},
        h('td', {}, c.type), h('td', {}, badge(c.status, c.type === 'Failed' && c.status === 'True' ? 'bad' : '')),
        h('td', {}, c.reason || ''), h('td', {}, c.message || ''), h('td', {}, when(c.lastTransitionTime))));
      const uids = new Set(treeNodes(state.tree).map((n) => n.uid));
      const events = [...state.events.values()].filter((e) => uids.has((e.involvedObject || {}).uid))
        .sort((a, b) => String(a.lastTimestamp || a.eventTime || '').localeCompare(String(b.lastTimestamp || b.eventTime || '')));
      const eventRows = events.map(eventRow);
      replace(el,
        h('h2', {}, 'Basic information'),
        kv([
          ['Kind', `${job.kind} (${job.apiVersion})`], ['Name', job.metadata.name], ['Namespace', job.metadata.namespace],
          ['UID', h('span', { class: 'mono' }, job.metadata.uid)], ['State', badge(state.tree.state || 'Pending')],
          ['Created', when(job.metadata.creationTimestamp)], ['Started', when(st.startTime)],
          ['Completed', when(st.completionTime)], ['Pods', String(state.pods.size)],
        ]),
        h('h2', {}, 'Conditions'),
        table(['Type', 'Status', 'Reason', 'Message', 'Last transition'], conds, { id: 'conditions-table' }),
        ...queueSection(state.tree.queue),
        h('h2', {}, 'Events'),
        table(['Type', 'Reason', 'Object', 'Message', 'Count', 'Last seen'], eventRows, { id: 'events-table' }));
    },
  };
}

// A queued job's place in Kueue (the tree's `queue`): its queues, its Workload's admission or
// its position among the ClusterQueue's pending Workloads, and the Workload's conditions.
function queueSection(q) {
  if (!q) return [];
  const admission = q.admission || {};
  const flavors = (admission.podSetAssignments || []).map((ps) =>
    `${ps.name}: ${Object.entries(ps.flavors || {}).map(([r, f]) => `${r} on ${f}`).join(', ')}`).join('; ');
  const place = q.state === 'Pending' ? `${q.position} of ${q.pending} pending in ClusterQueue ${q.clusterQueue}` : '';
  const conds = (q.conditions || []).map((c) => h('tr', {},
    h('td', {}, c.type), h('td', {}, badge(c.status)), h('td', {}, c.reason || ''),
    h('td', {}, c.message || ''), h('td', {}, when(c.lastTransitionTime))));
  return [
    h('h2', {}, 'Queue'),
    kv([
      ['LocalQueue', q.localQueue], ['ClusterQueue', q.clusterQueue || ''], ['Workload', q.workload || ''],
      ['Admission', h('span', { id: 'queue-state' }, badge(q.state, q.state === 'Evicted' ? 'bad' : ''))],
      ['Position', h('span', { id: 'queue-position' }, place)], ['Flavors', flavors],
      ['Message', q.message || ''],
    ]),
    table(['Type', 'Status', 'Reason', 'Message', 'Last transition'], conds, { id: 'queue-conditions-table' }),
  ];
}

// The objects the job owns, level by level through controller ownerReferences.
function ownerTreeTab(el, signal, ns, name, state) {
  const item = (node) => h('li', { 'data-kind': node.kind, 'data-name': node.name },
    h('span', { class: 'tree-kind' }, node.kind), ' ',
    node.kind === 'Pod' ? h('a', { href: `#/workloads/${state.plural}/${ns}/${name}/logs?pod=${encodeURIComponent(node.name)}` }, node.name)
      : h('span', { class: 'mono' }, node.name),
    ' ', node.state !== undefined ? badge(node.state || 'Pending') : '', node.phase !== undefined ? badge(node.phase) : '',
    node.children.length ? h('ul', {}, node.children.map(item)) : '');
  return {
    update() {
      if (!state.tree) { replace(el, h('p', { class: 'muted' }, state.loaded ? 'This job does not exist (any more).' : 'Loading…')); return; }
      replace(el, h('ul', { class: 'owner-tree', id: 'owner-tree' }, item(state.tree)));
    },
  };
}

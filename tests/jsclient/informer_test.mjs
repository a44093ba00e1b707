// The official JavaScript client against `pjemu serve`, as a new user would point it: the
// kubeconfig that serve writes (HTTPS, the cluster's CA, a bearer token), loaded by
// @kubernetes/client-node 1.x's KubeConfig, with informers on PyTorchJobs and pods. It creates
// the seed job through CustomObjectsApi and checks what the informers saw: the job added and
// updated up to Succeeded, each of its pods added with the operator's labels, then every object
// deleted after the job is deleted. Last, a plain-HTTP kubeconfig is refused by this client
// (why serve speaks HTTPS by default).
// Usage: node informer_test.mjs --pjemu BIN [--out DIR]
// Exit: 0 passed, 1 failed, 77 skipped (@kubernetes/client-node missing; ctest SKIP).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
if (!args.pjemu) {
  console.error('usage: node informer_test.mjs --pjemu BIN [--out DIR]');
  process.exit(2);
}

let k8s;
try {
  k8s = await import('@kubernetes/client-node');
} catch (e) {
  console.log('SKIP: @kubernetes/client-node is not installed (tools/setup runs npm ci in tests/jsclient)');
  process.exit(77);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pjemu-jsclient-'));
const outDir = args.out || work;
fs.mkdirSync(outDir, { recursive: true });
const token = `t-${process.pid}-${Date.now()}`;
const group = 'kubeflow.org';
const version = 'v1';
const plural = 'pytorchjobs';
const namespace = 'kubeflow';
const jobName = 'pytorch-simple';
let failures = 0;
const servers = [];
const step = (msg) => console.log(`== ${msg}`);
const fail = (msg) => { failures++; console.error(`FAIL: ${msg}`); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Starts `pjemu serve` and resolves with its kubeconfig path once it says where it serves.
function startServer(name, extra) {
  return new Promise((resolve, reject) => {
    const kubeconfig = path.join(work, `${name}.kubeconfig`);
    const log = fs.openSync(path.join(outDir, `${name}-serve.log`), 'w');
    const server = spawn(args.pjemu, ['serve', '--port', '0', '--kubeconfig', kubeconfig,
      '--output-dir', path.join(work, `${name}-state`),
      '--image-map', path.join(root, 'tests/e2e/fast-trainer-images.yaml'), ...extra],
    { cwd: root, env: { ...process.env, HOME: work }, stdio: ['ignore', 'pipe', 'pipe'] });
    servers.push(server);
    let text = '';
    const timer = setTimeout(() => reject(new Error(`pjemu serve did not start:\n${text}`)), 30000);
    const onData = (d) => {
      fs.writeSync(log, d);
      text += d;
      if (/serving the Kubernetes API on https?:\/\//.test(text)) {
        clearTimeout(timer);
        resolve(kubeconfig);
      }
    };
    server.stdout.on('data', onData);
    server.stderr.on('data', onData);
    server.on('exit', (code) => { clearTimeout(timer); reject(new Error(`pjemu serve exited ${code}:\n${text}`)); });
  });
}

// Resolves when check() holds, polling the informers' caches; fails after timeoutMs.
async function until(what, check, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await sleep(100);
  }
  fail(`timed out waiting for: ${what}`);
  return false;
}

// "<job>-<replica type>-<index>" for every replica the manifest asks for, sorted.
function expectedPods(job) {
  return Object.entries(job.spec.pytorchReplicaSpecs).flatMap(([type, spec]) =>
    Array.from({ length: spec.replicas ?? 1 }, (_, i) => `${job.metadata.name}-${type.toLowerCase()}-${i}`)).sort();
}

function jobCondition(job, type) {
  return (job?.status?.conditions || []).find((c) => c.type === type && c.status === 'True');
}

// Informers on the seed job's namespace, recording every event they deliver.
async function startInformers(kc) {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const jobs = k8s.makeInformer(kc, `/apis/${group}/${version}/namespaces/${namespace}/${plural}`,
    () => custom.listNamespacedCustomObject({ group, version, namespace, plural }));
  const pods = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/pods`,
    () => core.listNamespacedPod({ namespace }));
  const seen = { jobs: [], pods: [], errors: [] };
  for (const [informer, events] of [[jobs, seen.jobs], [pods, seen.pods]]) {
    for (const verb of [k8s.ADD, k8s.UPDATE, k8s.DELETE]) {
      informer.on(verb, (obj) => events.push({ verb, name: obj.metadata.name, obj }));
    }
    informer.on(k8s.ERROR, (err) => seen.errors.push(String(err?.message || err)));
    await informer.start();
  }
  return { custom, jobs, pods, seen };
}

async function checkSeedJob(kc) {
  const { custom, jobs, pods, seen } = await startInformers(kc);
  step('create the seed job through CustomObjectsApi');
  const body = k8s.loadYaml(fs.readFileSync(path.join(root, 'fixtures/seeds/pytorch-simple.yaml'), 'utf8'));
  const created = await custom.createNamespacedCustomObject({ group, version, namespace, plural, body });
  if (created?.metadata?.uid === undefined) fail(`create answered without a uid: ${JSON.stringify(created)}`);

  step('the job informer follows it to Succeeded; the pod informer sees its pods');
  await until('job Succeeded in the informer cache',
    () => jobCondition(jobs.get(jobName, namespace), 'Succeeded'), 120000);
  const podNames = pods.list(namespace).map((p) => p.metadata.name).sort();
  const want = expectedPods(body);
  if (JSON.stringify(podNames) !== JSON.stringify(want)) fail(`pods in the cache: ${podNames}`);
  for (const p of pods.list(namespace)) {
    const labels = p.metadata.labels || {};
    if (labels['training.kubeflow.org/job-name'] !== jobName) fail(`${p.metadata.name} labels: ${JSON.stringify(labels)}`);
  }
  if (!seen.jobs.some((e) => e.verb === k8s.ADD && e.name === jobName)) fail('no add event for the job');
  if (!seen.jobs.some((e) => e.verb === k8s.UPDATE && jobCondition(e.obj, 'Running'))) fail('no update with Running');
  const podAdds = [...new Set(seen.pods.filter((e) => e.verb === k8s.ADD).map((e) => e.name))].sort();
  if (JSON.stringify(podAdds) !== JSON.stringify(want)) fail(`pod add events for ${podAdds}`);

  step('delete the job: both informers see the deletions');
  await custom.deleteNamespacedCustomObject({ group, version, namespace, plural, name: jobName });
  await until('job gone from the cache', () => jobs.get(jobName, namespace) === undefined);
  await until('pods gone from the cache', () => pods.list(namespace).length === 0, 60000);
  if (!seen.jobs.some((e) => e.verb === k8s.DELETE && e.name === jobName)) fail('no delete event for the job');
  if (seen.errors.length > 0) fail(`informer errors: ${seen.errors.join('; ')}`);
  await jobs.stop();
  await pods.stop();
  console.log(`   events: ${seen.jobs.length} job, ${seen.pods.length} pod`);
}

// The reason serve defaults to HTTPS: this client will not send a request over plain HTTP.
async function checkPlainHttpRefused() {
  step('a plain-HTTP kubeconfig (--insecure-http) is refused by this client');
  const kubeconfig = await startServer('http', ['--insecure-http']);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  try {
    await kc.makeApiClient(k8s.CoreV1Api).listNamespace();
    fail('the client sent a request over plain http');
  } catch (e) {
    if (!/HTTP protocol is not allowed/.test(String(e?.message || e))) fail(`unexpected error: ${e}`);
  }
}

async function main() {
  const kubeconfig = await startServer('https', ['--token', token]);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  step(`pjemu serve at ${kc.getCurrentCluster()?.server}`);
  if (!kc.getCurrentCluster()?.server.startsWith('https://')) fail('serve did not default to https');
  await checkSeedJob(kc);
  await checkPlainHttpRefused();
}

let exitCode = 0;
try {
  await main();
} catch (e) {
  fail(`${e?.stack || e}${e?.body ? `\nbody: ${JSON.stringify(e.body)}` : ''}`);
} finally {
  for (const s of servers) s.kill('SIGTERM');
  await Promise.all(servers.map((s) => (s.exitCode === null ? new Promise((r) => s.on('exit', r)) : null)));
  // The servers' kubeconfigs and state (and, without --out, their logs): kept for a failure only.
  if (failures === 0) fs.rmSync(work, { recursive: true, force: true });
  else console.error(`jsclient: the servers' files are kept in ${work}`);
  exitCode = failures > 0 ? 1 : 0;
  console.log(failures > 0 ? `jsclient: ${failures} failure(s)` : 'jsclient: passed');
}
process.exit(exitCode);

// The console's browser test: headless Debian chromium, driven by playwright-core,
// against a real `pjemu serve --port 0 --token T` (HTTPS) with the fast trainer image map. It
// opens the console, gives the token, shows a validation error at its line, creates the seed
// job from YAML, watches it reach Succeeded, opens every tab of the job page (logs and metrics
// included), deletes the job, and saves a screenshot of each page under --out.
// Usage: node console_test.mjs --pjemu BIN --out DIR [--chromium /usr/bin/chromium]
// Exit: 0 passed, 1 failed, 77 skipped (playwright-core or chromium missing; ctest SKIP).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import https from 'node:https';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const pjemu = args.pjemu;
const outDir = args.out;
const chromiumPath = args.chromium || '/usr/bin/chromium';
if (!pjemu || !outDir) {
  console.error('usage: node console_test.mjs --pjemu BIN --out DIR [--chromium PATH]');
  process.exit(2);
}

let playwright;
try {
  playwright = createRequire(import.meta.url)('playwright-core');
} catch (e) {
  console.log('SKIP: playwright-core is not installed (tools/setup runs npm ci in tests/browser)');
  process.exit(77);
}
if (!fs.existsSync(chromiumPath)) {
  console.log(`SKIP: no chromium at ${chromiumPath} (tools/setup installs Debian's chromium)`);
  process.exit(77);
}

fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pjemu-browser-'));
const token = `t-${process.pid}-${Date.now()}`;
const seedPath = path.join(root, 'fixtures/seeds/pytorch-simple.yaml');
const seed = fs.readFileSync(seedPath, 'utf8');

let server = null;
let browser = null;
let failures = 0;
const step = (msg) => console.log(`== ${msg}`);
const fail = (msg) => { failures++; console.error(`FAIL: ${msg}`); };

function startServer() {
  return new Promise((resolve, reject) => {
    const log = fs.openSync(path.join(outDir, 'serve.log'), 'w');
    server = spawn(pjemu, ['serve', '--port', '0', '--token', token,
      '--kubeconfig', path.join(work, 'kubeconfig'), '--output-dir', path.join(work, 'state'),
      '--image-map', path.join(root, 'tests/e2e/fast-trainer-images.yaml')],
    { cwd: root, env: { ...process.env, HOME: work }, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    const timer = setTimeout(() => reject(new Error(`pjemu serve did not start:\n${text}`)), 30000);
    const onData = (d) => {
      fs.writeSync(log, d);
      text += d;
      const m = text.match(/serving the Kubernetes API on (https:\/\/[0-9.]+:\d+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    };
    server.stdout.on('data', onData);
    server.stderr.on('data', onData);
    server.on('exit', (code) => { clearTimeout(timer); reject(new Error(`pjemu serve exited ${code}:\n${text}`)); });
  });
}

// A request without the browser: what /ui/ gives to someone without the token.
function rawGet(url, headers) {
  return new Promise((resolve, reject) => {
    https.get(url, { rejectUnauthorized: false, headers: headers || {} }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body, type: res.headers['content-type'] }));
    }).on('error', reject);
  });
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(outDir, `${name}.png`), fullPage: true });
  console.log(`   screenshot ${name}.png`);
}

async function expectText(locator, re, what, timeout = 20000) {
  try {
    await locator.filter({ hasText: re }).first().waitFor({ timeout });
  } catch (e) {
    const actual = await locator.first().innerText({ timeout: 1000 }).catch(() => '(absent)');
    fail(`${what}: no text matching ${re}; got: ${actual.slice(0, 500)}`);
  }
}

async function main() {
  const base = await startServer();
  step(`pjemu serve at ${base}`);

  const shell = await rawGet(`${base}/ui/`);
  if (shell.status !== 200 || !shell.body.includes('app.js')) fail(`/ui/ without a token: ${shell.status}`);
  const leak = await rawGet(`${base}/ui/api/namespaces/kubeflow/pods/pytorch-simple-master-0/metrics`);
  if (leak.status !== 401) fail(`/ui/api without a token: ${leak.status} ${leak.body}`);
  const apiNoToken = await rawGet(`${base}/apis/kubeflow.org/v1/pytorchjobs`);
  if (apiNoToken.status !== 401) fail(`the API without a token: ${apiNoToken.status}`);

  // A fresh profile (--user-data-dir) per run: playwright takes it as launchPersistentContext's
  // first argument.
  const context = await playwright.chromium.launchPersistentContext(path.join(work, 'chromium-profile'), {
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    ignoreHTTPSErrors: true,
    viewport: { width: 1280, height: 860 },
  });
  browser = context;
  const page = context.pages()[0] || await context.newPage();
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('dialog', (d) => d.accept());

  step('open the console: it asks for the token');
  await page.goto(`${base}/ui/`);
  await page.locator('#token-dialog[open]').waitFor({ timeout: 15000 });
  await shot(page, '01-token');
  await page.fill('#token-input', token);
  await page.click('#token-save');
  await page.locator('#no-jobs').waitFor({ timeout: 15000 });
  await shot(page, '02-job-list-empty');

  step('create: an invalid manifest shows its error at the line');
  await page.click('#nav-create');
  await page.locator('#yaml-input').waitFor();
  const bad = seed.replace('replicas: 1', 'replicas: 2');
  const badLine = bad.split('\n').findIndex((l) => l.includes('replicas: 2')) + 1;
  await page.fill('#yaml-input', bad);
  await page.click('#create-button');
  await expectText(page.locator('#create-errors li'), new RegExp(`line ${badLine}: .*replicas.*must be 1`), 'validation error');
  const marked = await page.locator('#yaml-gutter .err').allInnerTexts();
  if (!marked.map((t) => t.trim()).includes(String(badLine))) fail(`gutter marks ${marked}, not line ${badLine}`);
  await shot(page, '03-create-invalid');

  step('create the seed job from YAML');
  await page.fill('#yaml-input', seed);
  await shot(page, '04-create-seed');
  await page.click('#create-button');
  await page.waitForURL(/#\/jobs\/kubeflow\/pytorch-simple\/overview$/, { timeout: 15000 });

  step('watch it reach Succeeded');
  const started = Date.now();
  await expectText(page.locator('#job-state'), /Running|Succeeded/, 'job running', 60000);
  await shot(page, '05-job-running');
  await expectText(page.locator('#job-state'), /Succeeded/, 'job state', 180000);
  console.log(`   Succeeded after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await expectText(page.locator('#conditions-table tbody tr'), /Succeeded\s*True\s*PyTorchJobSucceeded/, 'conditions table');
  await expectText(page.locator('#events-table tbody tr'), /SuccessfulCreatePod/, 'events table');
  await shot(page, '06-job-overview');

  step('replicas tab');
  await page.click('button[data-tab="replicas"]');
  await expectText(page.locator('#replicas-table tbody tr'), /pytorch-simple-worker-0.*Succeeded/s, 'replicas table');
  const replicaRows = await page.locator('#replicas-table tbody tr').count();
  if (replicaRows !== 2) fail(`replicas table has ${replicaRows} rows, want 2`);
  await expectText(page.locator('#replicas-table tbody tr'), /127\.42\./, 'pod IP');
  await shot(page, '07-job-replicas');

  step('logs tab');
  await page.click('button[data-tab="logs"]');
  await expectText(page.locator('#log-output'), /Train Epoch: 1/, 'log lines');
  await expectText(page.locator('#log-output'), /accuracy=0\.\d+/, 'log accuracy');
  await shot(page, '08-job-logs');

  step('metrics tab');
  await page.click('button[data-tab="metrics"]');
  await page.locator('#loss-chart svg polyline').waitFor({ timeout: 20000 });
  await page.locator('#accuracy-chart svg circle').waitFor({ timeout: 20000 });
  await expectText(page.locator('#epochs-table tbody tr'), /^\s*1\s*0\.\d{4}/, 'epochs table');
  await shot(page, '09-job-metrics');

  step('resources tab');
  await page.click('button[data-tab="resources"]');
  await page.locator('#memory-chart svg polyline').first().waitFor({ timeout: 20000 });
  await page.locator('#cpu-chart svg polyline').first().waitFor({ timeout: 20000 });
  await shot(page, '10-job-resources');

  step('YAML tab');
  await page.click('button[data-tab="yaml"]');
  await expectText(page.locator('#job-yaml'), /kind: PyTorchJob[\s\S]*name: pytorch-simple[\s\S]*type: Succeeded/, 'YAML');
  await shot(page, '11-job-yaml');

  step('job list');
  await page.click('#nav-jobs');
  await expectText(page.locator('#job-table tbody tr'), /pytorch-simple\s*kubeflow\s*Succeeded\s*0\/2 \(2 succeeded\)/, 'job list row');
  await shot(page, '12-job-list');

  step('delete the job');
  await page.click('a.job-link');
  await page.locator('#delete-job').click();
  await page.waitForURL(/#\/$/, { timeout: 15000 });
  await page.locator('#no-jobs').waitFor({ timeout: 15000 });
  await shot(page, '13-job-list-after-delete');
  const after = await rawGet(`${base}/apis/kubeflow.org/v1/namespaces/kubeflow/pytorchjobs/pytorch-simple`,
    { Authorization: `Bearer ${token}` });
  if (after.status !== 404) fail(`the job is still there after delete: ${after.status}`);

  const real = consoleErrors.filter((e) => !/Failed to load resource|401|ERR_ABORTED|AbortError/.test(e));
  if (real.length) fail(`errors in the page's console:\n${real.join('\n')}`);
}

async function cleanup() {
  if (browser) await browser.close().catch(() => {});
  if (server && server.exitCode === null) {
    server.removeAllListeners('exit');
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15000))]);
    if (server.exitCode === null) server.kill('SIGKILL');
  }
  fs.rmSync(work, { recursive: true, force: true });
}

try {
  await main();
} catch (e) {
  fail(e.stack || String(e));
} finally {
  await cleanup();
}
console.log(failures ? `browser test: ${failures} failure(s); screenshots in ${outDir}` : `browser test: passed; screenshots in ${outDir}`);
process.exit(failures ? 1 : 0);

// The console's browser test: headless Debian chromium, driven by playwright-core,
// against a real `pjemu serve --port 0 --token T` (HTTPS) with the fast trainer image map. It
// opens the console, gives the token, shows a validation error at its line, creates the seed
// job from YAML, watches it reach Succeeded, opens every tab of the job page (logs and metrics
// included), deletes the job, and saves a screenshot of each page under --out.
// Usage: node console_test.mjs --pjemu BIN --out DIR [--chromium /usr/bin/chromium]
// Exit: 0 passed, 1 failed, 77 skipped (playwright-core or chromium missing; ctest SKIP).
import fs from 'node:fs';
import path from 'node:path';
import { root, setup, step, fail as failIn, startServer as startIn, rawGet, openBrowser, shot as shotIn,
  expectText as expectIn, expectSeries, checkConsoleErrors, run } from './harness.mjs';

const t = setup('usage: node console_test.mjs --pjemu BIN --out DIR [--chromium PATH]');
const { token } = t;
const seedPath = path.join(root, 'fixtures/seeds/pytorch-simple.yaml');
const seed = fs.readFileSync(seedPath, 'utf8');
const fail = (msg) => failIn(t, msg);
const shot = (page, name) => shotIn(t, page, name);
const expectText = (locator, re, what, timeout) => expectIn(t, locator, re, what, timeout);
const startServer = () => startIn(t, ['--image-map', path.join(root, 'tests/e2e/fast-trainer-images.yaml')]);

async function main() {
  const base = await startServer();
  step(`pjemu serve at ${base}`);

  const shell = await rawGet(`${base}/ui/`);
  if (shell.status !== 200 || !shell.body.includes('app.js')) fail(`/ui/ without a token: ${shell.status}`);
  const leak = await rawGet(`${base}/ui/api/namespaces/kubeflow/pods/pytorch-simple-master-0/metrics`);
  if (leak.status !== 401) fail(`/ui/api without a token: ${leak.status} ${leak.body}`);
  const apiNoToken = await rawGet(`${base}/apis/kubeflow.org/v1/pytorchjobs`);
  if (apiNoToken.status !== 401) fail(`the API without a token: ${apiNoToken.status}`);

  const page = await openBrowser(t);

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
  await expectText(page.locator('#replicas-table tbody tr'), /(127\.42|10\.244)\./, 'pod IP');
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
  await expectSeries(t, page, '#memory-chart', 'memory chart', 20000);
  await expectSeries(t, page, '#cpu-chart', 'CPU chart', 20000);
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

  checkConsoleErrors(t);
}

await run(t, main);

// What the console's browser tests share: arguments, playwright-core and chromium (exit 77 when
// missing), a `pjemu serve --port 0 --token T` of their own, a fresh headless chromium profile,
// screenshots, text expectations, and the cleanup (browser closed, server stopped, work dir
// removed) with the exit code: 0 passed, 1 failed, 77 skipped.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import https from 'node:https';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '../..');

export function setup(usage) {
  const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
    return acc;
  }, []));
  const t = {
    args, pjemu: args.pjemu, outDir: args.out, chromiumPath: args.chromium || '/usr/bin/chromium',
    server: null, browser: null, failures: 0, playwright: null,
    work: null, token: `t-${process.pid}-${Date.now()}`,
  };
  if (!t.pjemu || !t.outDir) {
    console.error(usage);
    process.exit(2);
  }
  try {
    t.playwright = createRequire(import.meta.url)('playwright-core');
  } catch (e) {
    console.log('SKIP: playwright-core is not installed (tools/setup runs npm ci in tests/browser)');
    process.exit(77);
  }
  if (!fs.existsSync(t.chromiumPath)) {
    console.log(`SKIP: no chromium at ${t.chromiumPath} (tools/setup installs Debian's chromium)`);
    process.exit(77);
  }
  fs.rmSync(t.outDir, { recursive: true, force: true });
  fs.mkdirSync(t.outDir, { recursive: true });
  t.work = fs.mkdtempSync(path.join(os.tmpdir(), 'pjemu-browser-'));
  return t;
}

export const step = (msg) => console.log(`== ${msg}`);
export function fail(t, msg) { t.failures++; console.error(`FAIL: ${msg}`); }

// Starts `pjemu serve` with the token and extraArgs; resolves to its https:// base URL.
export function startServer(t, extraArgs) {
  return new Promise((resolve, reject) => {
    const log = fs.openSync(path.join(t.outDir, 'serve.log'), 'w');
    t.server = spawn(t.pjemu, ['serve', '--port', '0', '--token', t.token,
      '--kubeconfig', path.join(t.work, 'kubeconfig'), '--output-dir', path.join(t.work, 'state'), ...extraArgs],
    { cwd: root, env: { ...process.env, HOME: t.work }, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    const timer = setTimeout(() => reject(new Error(`pjemu serve did not start:\n${text}`)), 30000);
    const onData = (d) => {
      fs.writeSync(log, d);
      text += d;
      const m = text.match(/serving the Kubernetes API on (https:\/\/[0-9.]+:\d+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    };
    t.server.stdout.on('data', onData);
    t.server.stderr.on('data', onData);
    t.server.on('exit', (code) => { clearTimeout(timer); reject(new Error(`pjemu serve exited ${code}:\n${text}`)); });
  });
}

// A request without the browser (the server's certificate is its own CA's).
export function rawRequest(method, url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, rejectUnauthorized: false, headers: headers || {} }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, body: text, type: res.headers['content-type'] }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
export const rawGet = (url, headers) => rawRequest('GET', url, headers);

// A headless chromium with a fresh profile; its page, with the page's console errors collected.
export async function openBrowser(t) {
  const context = await t.playwright.chromium.launchPersistentContext(path.join(t.work, 'chromium-profile'), {
    executablePath: t.chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    ignoreHTTPSErrors: true,
    viewport: { width: 1280, height: 860 },
  });
  t.browser = context;
  const page = context.pages()[0] || await context.newPage();
  t.consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') t.consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => t.consoleErrors.push(String(e)));
  page.on('dialog', (d) => d.accept());
  return page;
}

export async function shot(t, page, name) {
  await page.screenshot({ path: path.join(t.outDir, `${name}.png`), fullPage: true });
  console.log(`   screenshot ${name}.png`);
}

export async function expectText(t, locator, re, what, timeout = 20000) {
  try {
    await locator.filter({ hasText: re }).first().waitFor({ timeout });
  } catch (e) {
    const actual = await locator.first().innerText({ timeout: 1000 }).catch(() => '(absent)');
    fail(t, `${what}: no text matching ${re}; got: ${actual.slice(0, 500)}`);
  }
}

// Waits until the chart under `selector` draws its first series with at least two points. Not
// Playwright's visibility: a flat series (memory that does not change) is a polyline of zero
// height, which it calls hidden though the user sees its stroke.
export async function expectSeries(t, page, selector, what, timeout = 30000) {
  try {
    await page.waitForFunction((sel) => {
      const line = document.querySelector(`${sel} svg polyline`);
      return line !== null && (line.getAttribute('points') || '').trim().split(/\s+/).length >= 2;
    }, selector, { timeout });
  } catch (e) {
    fail(t, `${what}: no series of two points or more in ${selector} within ${timeout} ms`);
  }
}

// Errors in the page's console other than refused or aborted requests.
export function checkConsoleErrors(t) {
  const real = t.consoleErrors.filter((e) => !/Failed to load resource|401|ERR_ABORTED|AbortError/.test(e));
  if (real.length) fail(t, `errors in the page's console:\n${real.join('\n')}`);
}

async function cleanup(t) {
  if (t.browser) await t.browser.close().catch(() => {});
  if (t.server && t.server.exitCode === null) {
    t.server.removeAllListeners('exit');
    const exited = new Promise((r) => t.server.once('exit', r));
    t.server.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15000))]);
    if (t.server.exitCode === null) t.server.kill('SIGKILL');
  }
  fs.rmSync(t.work, { recursive: true, force: true });
}

// Runs main(t), cleans up, and exits with the outcome.
export async function run(t, main) {
  try {
    await main(t);
  } catch (e) {
    fail(t, e.stack || String(e));
  } finally {
    await cleanup(t);
  }
  console.log(t.failures ? `browser test: ${t.failures} failure(s); screenshots in ${t.outDir}`
    : `browser test: passed; screenshots in ${t.outDir}`);
  process.exit(t.failures ? 1 : 0);
}

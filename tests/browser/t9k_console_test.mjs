// The console's pages for T9k's PyTorchTrainingJob, in headless Debian chromium against a real
// `pjemu serve --port 0 --token T`: a job in the tutorial's shape (a `node` replica, a PVC for
// its logs, a tensorboardSpec naming t9k://pvc/<claim>/log) is created from YAML in the console;
// its pod runs t9k_train.py, which logs like the tutorial's script and writes TensorBoard event
// files as it trains. The test follows the job page (basic information, replicas `node: 1`,
// request/limit sums, the TensorBoard's status and link, conditions, events), opens the
// TensorBoard page (a chart per scalar tag from the real event file), the replicas tab and a
// pod's log, the monitoring tab (CPU, memory with request and limit, network, storage I/O), and
// the job list's row (kind, request/limit), until the job Succeeded. Screenshots under --out.
// Usage: node t9k_console_test.mjs --pjemu BIN --out DIR [--chromium /usr/bin/chromium]
// Exit: 0 passed, 1 failed, 77 skipped (playwright-core or chromium missing; ctest SKIP).
import path from 'node:path';
import { root, setup, step, fail, startServer, rawGet, openBrowser, shot, expectText, expectSeries, checkConsoleErrors, run }
  from './harness.mjs';

const t = setup('usage: node t9k_console_test.mjs --pjemu BIN --out DIR [--chromium PATH]');

// The tutorial's job_cpu.yaml in shape; the script is this repository's tests/ folder mounted
// from the host, the logs go to the claim.
const JOB = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: tutorial
  namespace: default
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: PyTorchTrainingJob
metadata:
  name: torch-mnist-trainingjob
  namespace: default
spec:
  tensorboardSpec:
    trainingLogFilesets:
      - t9k://pvc/tutorial/tutorial-examples/ddp/log
    image: t9kpublic/tensorflow-2.11.0:cpu-sdk-0.5.2
  replicaSpecs:
    - type: node
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: python:3.11
              command: [python3, /tests/browser/t9k_train.py, /t9k/mnt/tutorial-examples/ddp/log, "12"]
              resources:
                requests:
                  cpu: 1
                  memory: 1Gi
                limits:
                  cpu: 2
                  memory: 2Gi
              volumeMounts:
                - mountPath: /t9k/mnt
                  name: data
                - mountPath: /tests
                  name: tests
          volumes:
            - name: data
              persistentVolumeClaim:
                claimName: tutorial
            - name: tests
              hostPath:
                path: ${path.join(root, 'tests')}
                type: Directory
`;

await run(t, async () => {
  const base = await startServer(t, []);
  step(`pjemu serve at ${base}`);
  const leak = await rawGet(`${base}/ui/api/namespaces/default/tensorboards/x/scalars`);
  if (leak.status !== 401) fail(t, `/ui/api/.../scalars without a token: ${leak.status} ${leak.body}`);

  const page = await openBrowser(t);
  await page.goto(`${base}/ui/`);
  await page.locator('#token-dialog[open]').waitFor({ timeout: 15000 });
  await page.fill('#token-input', t.token);
  await page.click('#token-save');
  await page.locator('#no-jobs').waitFor({ timeout: 15000 });

  step('create the PyTorchTrainingJob and its claim from YAML');
  await page.click('#nav-create');
  await page.locator('#yaml-input').waitFor();
  await page.fill('#yaml-input', JOB);
  await page.click('#create-button');
  await page.waitForURL(/#\/t9k\/default\/torch-mnist-trainingjob\/job$/, { timeout: 15000 });

  step('the job page: basic information, TensorBoard, conditions, events');
  await expectText(t, page.locator('#job-state'), /Running|Succeeded/, 'job running', 60000);
  await expectText(t, page.locator('#job-replicas'), /^node: 1$/, 'replicas');
  await expectText(t, page.locator('#job-cpu'), /^1\.00 \/ 2\.00$/, 'CPU request / limit');
  await expectText(t, page.locator('#job-memory'), /^1\.00Gi \/ 2\.00Gi$/, 'memory request / limit');
  await expectText(t, page.locator('#tensorboard-status'), /Running/, 'TensorBoard status', 30000);
  await expectText(t, page.locator('#conditions-table tbody tr'), /Running\s*(True|False)/, 'conditions table');
  await expectText(t, page.locator('#events-table tbody tr'), /PyTorchTrainingJob\/torch-mnist-trainingjob|Pod\//, 'events table');
  await shot(t, page, 't9k-01-job-running');

  step('the TensorBoard page: a chart per scalar tag from the event file the pod writes');
  await page.click('#tensorboard-link');
  await page.waitForURL(/#\/tensorboards\/default\/torch-mnist-trainingjob-[0-9a-f]{5}$/, { timeout: 15000 });
  await expectText(t, page.locator('#tensorboard-phase'), /Running/, 'TensorBoard phase');
  await page.locator('#scalar-train_loss svg polyline').waitFor({ timeout: 30000 });
  await page.locator('#scalar-val_accuracy svg').waitFor({ timeout: 30000 });
  await page.locator('#scalar-val_loss svg').waitFor({ timeout: 30000 });
  await shot(t, page, 't9k-02-tensorboard');
  await page.goBack();

  step('replicas tab and a pod\'s log');
  await page.click('button[data-tab="replicas"]');
  await expectText(t, page.locator('#replicas-table tbody tr'), /torch-mnist-trainingjob-[0-9a-f]{5}-node-0.*tensorstack\.dev\/owner-name=torch-mnist-trainingjob/s, 'replicas table');
  await expectText(t, page.locator('#replicas-table tbody tr'), /1\.00 \/ 2\.00\s*1\.00Gi \/ 2\.00Gi/, 'pod request / limit');
  await page.locator('#replicas-table .log-button').first().click();
  await expectText(t, page.locator('#log-output'), /epoch 1\/3, batch\s+125\/375 with loss: \d\.\d{4}/, 'log lines');
  await shot(t, page, 't9k-03-replicas-log');

  step('monitoring tab');
  await page.click('button[data-tab="monitoring"]');
  for (const id of ['cpu-chart', 'memory-chart', 'network-chart', 'iops-chart', 'throughput-chart']) {
    await expectSeries(t, page, `#${id}`, `${id} series`);
  }
  await expectText(t, page.locator('#memory-chart .legend'), /usage\s*request\s*limit/, 'memory chart lines');
  await shot(t, page, 't9k-04-monitoring');

  step('it Succeeded; the job list shows its kind and request/limit sums');
  await page.click('button[data-tab="job"]');
  await expectText(t, page.locator('#job-state'), /Succeeded/, 'job Succeeded', 120000);
  await shot(t, page, 't9k-05-job-succeeded');
  await page.click('#nav-jobs');
  await expectText(t, page.locator('#job-table tbody tr[data-kind="PyTorchTrainingJob"]'),
    /torch-mnist-trainingjob\s*default\s*Succeeded\s*0\/1 \(1 succeeded\)\s*PyTorchTrainingJob\s*1\.00 \/ 2\.00\s*1\.00Gi \/ 2\.00Gi/, 'job list row');
  await shot(t, page, 't9k-06-job-list');
  checkConsoleErrors(t);
});

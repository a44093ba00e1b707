// The console's list and pages for a job kind that has no page of its own (a TrainJob, a
// JobSet or a batch/v1 Job), in headless Debian chromium against a real `pjemu serve --port 0
// --token T`: the job is created with kubectl (its pods run busybox, the host's sh), then the
// test follows it in the console as a user would: the job list's row with the kind's state and
// its pods ready, the job's page (state, conditions, events of it and what it owns), the owner
// tree (TrainJob -> JobSet -> Job -> pods; JobSet -> Job -> pods; Job -> pods), a pod's log,
// the monitoring charts and the YAML, until the kind's finished state. Screenshots under --out.
// Usage: node workloads_console_test.mjs --kind trainjob|jobset|job|queued --kubectl KUBECTL
//          --pjemu BIN --out DIR [--chromium /usr/bin/chromium]
// Exit: 0 passed, 1 failed, 77 skipped (playwright-core, chromium or kubectl missing).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setup, step, fail, startServer, openBrowser, shot, expectText, checkConsoleErrors, run }
  from './harness.mjs';

const t = setup('usage: node workloads_console_test.mjs --kind trainjob|jobset|job|queued --kubectl KUBECTL --pjemu BIN --out DIR');
if (!t.args.kubectl || !fs.existsSync(t.args.kubectl)) {
  console.log(`SKIP: no kubectl at ${t.args.kubectl}`);
  process.exit(77);
}

// The pods' command: a line to find in the log, then long enough for the resource sampler.
const SCRIPT = 'echo "hello from $(hostname)"; sleep 4';

// Per kind: the manifest, the plural, what the owner tree holds under the job, the final state.
const KINDS = {
  trainjob: {
    kind: 'TrainJob', plural: 'trainjobs', name: 'tj-demo', done: /Complete/,
    tree: ['TrainJob', 'JobSet', 'Job', 'Pod'],
    yaml: `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj-demo, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 1
    image: busybox
    command: [sh, -c, '${SCRIPT}']
`,
  },
  jobset: {
    kind: 'JobSet', plural: 'jobsets', name: 'js-demo', done: /Completed/,
    tree: ['JobSet', 'Job', 'Pod'],
    yaml: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js-demo, namespace: default}
spec:
  replicatedJobs:
    - name: workers
      replicas: 1
      template:
        spec:
          parallelism: 2
          completions: 2
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: main
                  image: busybox
                  command: [sh, -c, '${SCRIPT}']
`,
  },
  job: {
    kind: 'Job', plural: 'jobs', name: 'job-demo', done: /Complete/,
    tree: ['Job', 'Pod'],
    yaml: `apiVersion: batch/v1
kind: Job
metadata: {name: job-demo, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          command: [sh, -c, '${SCRIPT}']
`,
  },
  // Kueue: a ClusterQueue of one CPU and two Jobs of one CPU each through its LocalQueue. The
  // first is created alone and admitted (it sleeps until the test ends), then the second: it
  // waits (its page: Pending, 1 of 1 in the queue) until the test raises the quota to two CPUs,
  // then is admitted and completes. Creating them together would leave their order to a tie of
  // creation seconds (Kueue breaks it arbitrarily), and a first job that ends by itself could
  // free the quota before the browser looks.
  queued: {
    kind: 'Job', plural: 'jobs', name: 'queued-b', done: /Complete/,
    tree: ['Job', 'Pod'],
    queue: {
      first: 'queued-a',
      raise: '{"spec":{"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"default-flavor","resources":[{"name":"cpu","nominalQuota":2}]}]}]}}',
    },
    before: `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu]
      flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 1}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-queue, namespace: default}
spec: {clusterQueue: team}
---
apiVersion: batch/v1
kind: Job
metadata: {name: queued-a, namespace: default, labels: {kueue.x-k8s.io/queue-name: team-queue}}
spec:
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: busybox, command: [sleep, '600'], resources: {requests: {cpu: 1}}}]
`,
    yaml: `apiVersion: batch/v1
kind: Job
metadata: {name: queued-b, namespace: default, labels: {kueue.x-k8s.io/queue-name: team-queue}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, '${SCRIPT}'], resources: {requests: {cpu: 1}}}]
`,
  },
};

const k = KINDS[t.args.kind];
if (!k) {
  console.error(`unknown --kind ${t.args.kind}`);
  process.exit(2);
}

await run(t, async () => {
  const base = await startServer(t, []);
  const kubectl = (...argv) => execFileSync(t.args.kubectl, ['--kubeconfig', path.join(t.work, 'kubeconfig'),
    '--cache-dir', path.join(t.work, 'kube-cache'), ...argv], { encoding: 'utf8' });
  const create = (name, yaml) => {
    const manifest = path.join(t.work, name);
    fs.writeFileSync(manifest, yaml);
    console.log(`   ${kubectl('create', '-f', manifest).trim()}`);
  };
  step(`pjemu serve at ${base}`);
  if (k.before) {
    step(`kubectl create -f the queues and ${k.queue.first}, until it is admitted`);
    create('before.yaml', k.before);
    const deadline = Date.now() + 60000;
    while (kubectl('get', 'job', k.queue.first, '-o', 'jsonpath={.spec.suspend}').trim() !== 'false') {
      if (Date.now() > deadline) throw new Error(`${k.queue.first} was not admitted (still suspended) in 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  step(`kubectl create -f the ${k.kind}`);
  create('job.yaml', k.yaml);

  const page = await openBrowser(t);
  await page.goto(`${base}/ui/`);
  await page.locator('#token-dialog[open]').waitFor({ timeout: 15000 });
  await page.fill('#token-input', t.token);
  await page.click('#token-save');

  if (k.queue) {
    step('a queued job\'s page: Pending, its place in the ClusterQueue, then admitted');
    await page.goto(`${base}/ui/#/workloads/${k.plural}/default/${k.name}/overview`);
    await expectText(t, page.locator('#queue-state'), /Pending/, 'queue state', 20000);
    await expectText(t, page.locator('#queue-position'), /1 of 1 pending in ClusterQueue team/, 'queue position');
    await shot(t, page, `${t.args.kind}-00-pending`);
    step('kubectl patch: the ClusterQueue\'s quota raised to two CPUs, so the second job fits');
    console.log(`   ${kubectl('patch', 'clusterqueue', 'team', '--type', 'merge', '-p', k.queue.raise).trim()}`);
    await expectText(t, page.locator('#queue-state'), /Admitted|Finished/, 'admitted', 60000);
    await expectText(t, page.locator('#queue-conditions-table tbody'), /QuotaReserved/, 'workload conditions');
    await page.goto(`${base}/ui/`);
  }

  step('the job list: its row, with the kind and the kind\'s own state');
  const row = page.locator(`#job-table tbody tr[data-kind="${k.kind}"][data-job="default/${k.name}"]`);
  await expectText(t, row, new RegExp(`${k.name}\\s*default\\s*\\S+\\s*\\d+/\\d+.*${k.kind}`), 'job list row', 30000);
  await expectText(t, row.locator('.job-state'), k.done, `${k.kind} finished in the list`, 90000);
  await shot(t, page, `${t.args.kind}-01-job-list`);

  step('the job page: state, conditions, events');
  await row.locator('a.job-link').click();
  await page.waitForURL(new RegExp(`#/workloads/${k.plural}/default/${k.name}/overview$`), { timeout: 15000 });
  await expectText(t, page.locator('#job-state'), k.done, 'job state');
  await expectText(t, page.locator('#job-kind'), new RegExp(`${k.kind} in namespace default`), 'kind line');
  await expectText(t, page.locator('#conditions-table tbody tr'), /True/, 'conditions table');
  await expectText(t, page.locator('#events-table tbody tr'), /SuccessfulCreate|Scheduled|Started|Completed/, 'events table');
  await shot(t, page, `${t.args.kind}-02-overview`);

  step(`the owner tree: ${k.tree.join(' -> ')}`);
  await page.click('button[data-tab="tree"]');
  const nested = k.tree.map((kind) => `li[data-kind="${kind}"]`).join(' ');
  try {
    await page.locator(`#owner-tree ${nested}`).first().waitFor({ timeout: 20000 });
  } catch (e) {
    const got = await page.locator('#tab-content').innerText().catch(() => '(absent)');
    fail(t, `owner tree ${k.tree.join(' -> ')}: not found; got: ${got.slice(0, 500)}`);
  }
  await expectText(t, page.locator('#owner-tree li[data-kind="Pod"]'), /Completed/, 'pods completed');
  await shot(t, page, `${t.args.kind}-03-owner-tree`);

  step('a pod\'s log, opened from the tree');
  await page.locator('#owner-tree li[data-kind="Pod"] a').first().click();
  await expectText(t, page.locator('#log-output'), /hello from \S+/, 'log line');
  await shot(t, page, `${t.args.kind}-04-log`);

  step('monitoring and YAML');
  await page.click('button[data-tab="resources"]');
  await page.locator('#cpu-chart').waitFor({ timeout: 20000 }).catch(() => fail(t, 'no CPU chart'));
  await page.locator('#memory-chart').waitFor({ timeout: 20000 }).catch(() => fail(t, 'no memory chart'));
  await shot(t, page, `${t.args.kind}-05-monitoring`);
  await page.click('button[data-tab="yaml"]');
  await expectText(t, page.locator('#job-yaml'), new RegExp(`kind: ${k.kind}`), 'YAML');
  checkConsoleErrors(t);
});

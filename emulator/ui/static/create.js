// pjemu console: the Create page: paste or upload YAML, its errors at their lines, then each
// object POSTed to the real API and the page of the job it made. Loaded before app.js.
'use strict';

// ---------- create ----------

function fieldToPointer(field) {
  // "spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image" -> JSON pointer parts
  const parts = [];
  const re = /([^.[\]]+)|\[([^\]]*)\]/g;
  let m;
  while ((m = re.exec(field))) parts.push((m[1] ?? m[2]).replace(/~/g, '~0').replace(/\//g, '~1'));
  return parts;
}

function lineOfField(doc, field) {
  const parts = fieldToPointer(field || '');
  while (parts.length) {
    const line = doc.lines[`/${parts.join('/')}`];
    if (line) return line;
    parts.pop();
  }
  return doc.line;
}

function showCreate(main) {
  const sample = 'apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: my-job\n  namespace: default\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      restartPolicy: OnFailure\n      template:\n        spec:\n          containers:\n            - name: pytorch\n              image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727\n              command: ["python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1"]\n';
  const gutter = h('pre', { class: 'gutter', id: 'yaml-gutter' });
  const input = h('textarea', { id: 'yaml-input', spellcheck: 'false', placeholder: 'Paste a PyTorchJob manifest (YAML or JSON)' });
  input.value = sample;
  const ns = h('input', { id: 'default-namespace', value: 'default', size: 14 });
  const result = h('div', { id: 'create-result' });
  const file = h('input', { type: 'file', id: 'yaml-file', accept: '.yaml,.yml,.json,text/yaml,application/json' });
  let errorLines = new Set();
  const drawGutter = () => {
    const n = input.value.split('\n').length;
    replace(gutter, Array.from({ length: n }, (_, i) => h('span', { class: errorLines.has(i + 1) ? 'err' : '' }, `${i + 1}\n`)));
    gutter.scrollTop = input.scrollTop;
  };
  input.addEventListener('input', () => { errorLines = new Set(); drawGutter(); });
  input.addEventListener('scroll', () => { gutter.scrollTop = input.scrollTop; });
  file.addEventListener('change', async () => {
    if (!file.files.length) return;
    if (file.files[0].size > 3 * 1024 * 1024) { replace(result, h('div', { class: 'notice error' }, 'The file is over 3 MiB.')); return; }
    input.value = await file.files[0].text();
    errorLines = new Set();
    drawGutter();
  });
  const showErrors = (title, errors, warnings) => {
    errorLines = new Set(errors.filter((e) => e.line).map((e) => e.line));
    drawGutter();
    replace(result, h('div', { class: 'notice error' }, title),
      h('ul', { class: 'errors', id: 'create-errors' }, errors.map((e) => h('li', {}, e.line ? h('b', {}, `line ${e.line}: `) : '', e.message))),
      warnings && warnings.length ? h('ul', { class: 'warnings' }, warnings.map((w) => h('li', {}, w))) : '');
    const first = [...errorLines].sort((a, b) => a - b)[0];
    if (first) {
      const offset = input.value.split('\n').slice(0, first - 1).join('\n').length + (first > 1 ? 1 : 0);
      input.focus();
      input.setSelectionRange(offset, offset);
      input.scrollTop = Math.max(0, (first - 5) * 18);
    }
  };
  const check = async () => {
    const v = await api('POST', '/ui/api/validate', input.value, 'application/yaml');
    const errors = [...v.errors];
    const warnings = [];
    for (const d of v.documents) { errors.push(...d.errors); warnings.push(...d.warnings); }
    if (errors.length) { showErrors('The manifest is invalid; nothing was created.', errors, warnings); return null; }
    return v;
  };
  const validateButton = h('button', {
    type: 'button', id: 'validate-button',
    onclick: async () => {
      try {
        const v = await check();
        if (v) { errorLines = new Set(); drawGutter(); replace(result, h('div', { class: 'notice' }, `Valid: ${v.documents.length} object(s).`)); }
      } catch (e) { replace(result, h('div', { class: 'notice error' }, e.message)); }
    },
  }, 'Validate');
  const createButton = h('button', {
    type: 'button', class: 'primary', id: 'create-button',
    onclick: async () => {
      createButton.disabled = true;
      try {
        const v = await check();
        if (!v) return;
        const created = [];
        for (const d of v.documents) {
          const o = d.object;
          const res = await resourceFor(o.apiVersion, o.kind);
          const namespace = (o.metadata && o.metadata.namespace) || ns.value.trim() || 'default';
          const url = res.namespaced ? `${res.base}/namespaces/${encodeURIComponent(namespace)}/${res.plural}` : `${res.base}/${res.plural}`;
          try {
            const out = await api('POST', `${url}?fieldValidation=Strict`, o);
            created.push(out);
          } catch (e) {
            const causes = (e.status && e.status.details && e.status.details.causes) || [];
            const errors = causes.length ? causes.map((c) => ({ line: lineOfField(d, c.field), message: `${c.field ? c.field + ': ' : ''}${c.message}` }))
              : [{ line: d.line, message: e.message }];
            showErrors(`${o.kind} ${(o.metadata || {}).name}: ${e.message}`, errors);
            return;
          }
        }
        const kinds = await kindsTable();
        const kindOf = (o) => kinds.find((k) => k.kind === o.kind && k.apiVersion === o.apiVersion);
        const job = created.find(kindOf);
        if (job) location.hash = workloadPage(job.kind, kindOf(job).plural, job.metadata.namespace, job.metadata.name);
        else replace(result, h('div', { class: 'notice' }, `Created ${created.length} object(s).`));
      } catch (e) {
        replace(result, h('div', { class: 'notice error' }, e.message));
      } finally {
        createButton.disabled = false;
      }
    },
  }, 'Create');
  replace(main,
    h('div', { class: 'page-head' }, h('h1', { class: 'grow' }, 'Create a PyTorchJob')),
    h('div', { class: 'toolbar' }, h('label', {}, 'Upload ', file), h('label', {}, 'Namespace (when the manifest names none) ', ns)),
    h('div', { class: 'editor' }, gutter, input),
    h('div', { class: 'toolbar', style: null }, validateButton, createButton),
    result);
  drawGutter();
}

// pjemu console: SVG line charts and the YAML printer the pages share (no chart library).
// Loaded before app.js; uses its DOM helpers when called.
'use strict';

// ---------- charts (SVG) ----------

function niceTicks(min, max, count) {
  if (!(max > min)) { max = min + 1; }
  const raw = (max - min) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((st) => st >= raw) || raw;
  const ticks = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toFixed(10)));
  return ticks;
}

function chartBox(title, id, series, opts) {
  const legend = series.length > 1 ? h('div', { class: 'legend' }, series.map((se, i) =>
    h('span', {}, h('i', { class: `c${i}` }), se.name))) : '';
  const box = h('div', { class: 'chart-box', id }, h('h3', {}, title), lineChart(series, opts), legend);
  box.querySelectorAll('.legend i').forEach((el, i) => { el.style.background = COLORS[i % COLORS.length]; });
  return box;
}

function lineChart(series, opts) {
  const W = 560, H = 240, L = 52, R = 14, T = 22, B = 34;  // T leaves room for value labels
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img' });
  const all = series.flatMap((se) => se.points);
  if (!all.length) {
    svg.append(s('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'no-data' }, 'no data yet'));
    return svg;
  }
  let xMin = Math.min(...all.map((p) => p[0])), xMax = Math.max(...all.map((p) => p[0]));
  let yMin = opts.yMin ?? Math.min(...all.map((p) => p[1])), yMax = opts.yMax ?? Math.max(...all.map((p) => p[1]));
  if (opts.yMin !== undefined) yMax = Math.max(yMax, opts.yMin);
  if (xMax === xMin) { xMin -= 1; xMax += 1; }
  if (yMax === yMin) { yMax = yMin + (Math.abs(yMin) || 1); }
  if (opts.integerX) { xMin = Math.floor(xMin); xMax = Math.ceil(xMax); }
  const yTicks = niceTicks(yMin, yMax, 5);
  yMin = Math.min(yMin, yTicks[0]);
  yMax = Math.max(yMax, yTicks[yTicks.length - 1]);
  let xTicks = niceTicks(xMin, xMax, 6);
  if (opts.integerX) xTicks = xTicks.filter((v) => Number.isInteger(v));
  const X = (v) => L + ((v - xMin) / (xMax - xMin)) * (W - L - R);
  const Y = (v) => T + (1 - (v - yMin) / (yMax - yMin)) * (H - T - B);
  // As many decimals as the tick spacing needs, so that neighbouring ticks never read the same.
  const decimals = Math.min(6, Math.max(0, Math.ceil(-Math.log10(yTicks.length > 1 ? yTicks[1] - yTicks[0] : 1) - 1e-9)));
  const yFormat = opts.yFormat || ((v) => v.toFixed(decimals));
  const xFormat = opts.time ? (v) => new Date(v * 1000).toLocaleTimeString([], { hour12: false }) : (v) => String(v);
  for (const v of yTicks) {
    svg.append(s('line', { class: 'grid', x1: L, x2: W - R, y1: Y(v), y2: Y(v) }));
    svg.append(s('text', { x: L - 6, y: Y(v) + 4, 'text-anchor': 'end' }, yFormat(v)));
  }
  for (const v of xTicks) {
    if (v < xMin || v > xMax) continue;
    svg.append(s('text', { x: X(v), y: H - B + 16, 'text-anchor': 'middle' }, xFormat(v)));
  }
  svg.append(s('line', { class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }));
  svg.append(s('line', { class: 'axis', x1: L, x2: L, y1: T, y2: H - B }));
  if (opts.xLabel) svg.append(s('text', { x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle' }, opts.xLabel));
  series.forEach((se, i) => {
    const color = COLORS[i % COLORS.length];
    if (se.points.length > 1) {
      svg.append(s('polyline', { class: 'series', stroke: color, points: se.points.map((p) => `${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(' ') }));
    }
    if (opts.dots || se.points.length === 1) {
      for (const p of se.points) {
        const dot = s('circle', { cx: X(p[0]), cy: Y(p[1]), r: 4, fill: color });
        dot.append(s('title', {}, `${opts.xLabel || 'x'} ${xFormat(p[0])}: ${yFormat(p[1])}`));
        svg.append(dot);
        if (opts.dots && se.points.length <= 12) {
          svg.append(s('text', { x: X(p[0]), y: Y(p[1]) - 8, 'text-anchor': 'middle', class: 'value' }, yFormat(p[1])));
        }
      }
    }
  });
  return svg;
}

// ---------- YAML output ----------

const YAML_PLAIN = /^[A-Za-z_./][A-Za-z0-9_./:@ -]*$/;
const YAML_SPECIAL = /^(true|false|yes|no|on|off|null|~|y|n)$/i;

function yamlScalar(v) {
  if (v === null) return 'null';
  if (typeof v !== 'string') return String(v);
  if (v === '' || !YAML_PLAIN.test(v) || YAML_SPECIAL.test(v) || /^[0-9.+-]/.test(v) || v.endsWith(' ') ||
      v.includes(': ') || v.includes(' #') || /^\d{4}-\d\d-\d\d/.test(v)) return JSON.stringify(v);
  return v;
}

function toYaml(v, indent = '') {
  if (Array.isArray(v)) {
    if (!v.length) return '[]\n';
    return v.map((item) => {
      if (item && typeof item === 'object' && Object.keys(item).length) {
        const inner = toYaml(item, `${indent}  `);
        return `${indent}- ${inner.slice(indent.length + 2)}`;
      }
      return `${indent}- ${item && typeof item === 'object' ? (Array.isArray(item) ? '[]' : '{}') : yamlScalar(item)}\n`;
    }).join('');
  }
  if (v && typeof v === 'object') {
    const keys = Object.keys(v);
    if (!keys.length) return '{}\n';
    return keys.map((k) => {
      const val = v[k];
      const key = yamlScalar(k);
      if (val && typeof val === 'object' && (Array.isArray(val) ? val.length : Object.keys(val).length)) {
        return `${indent}${key}:\n${toYaml(val, Array.isArray(val) ? indent : `${indent}  `)}`;
      }
      return `${indent}${key}: ${val && typeof val === 'object' ? (Array.isArray(val) ? '[]' : '{}') : yamlScalar(val)}\n`;
    }).join('');
  }
  return `${indent}${yamlScalar(v)}\n`;
}

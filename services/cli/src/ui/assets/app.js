/* global document, window, history, location, URLSearchParams, clearTimeout, setTimeout */
// The web view's page: reads /api/* and draws services → slices, zones → nodes, the timeline
// and the "why" panels. Plain DOM, no framework. The selection lives in the URL's hash
// (#at=SEQ&service=NS/NAME&node=N&endpoint=IP) so a view can be reloaded or shared. After every render,
// <body data-seq> holds the point shown and data-busy is removed: the browser test waits on them.

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const BUCKETS = 80;

const view = { summary: null, buckets: [], state: null, seq: null, service: null, node: null, endpoint: null, why: null, endpointWhy: null };

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c instanceof window.Node ? c : String(c));
  return e;
}

async function getJson(path) {
  const res = await fetch(path);
  const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
  return body;
}

function showError(message) {
  const box = $('error');
  box.hidden = message === null;
  box.textContent = message ?? '';
}

const keyOf = (s) => `${s.namespace}/${s.name}`;
const shortTime = (iso) => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

function saveHash() {
  const q = new URLSearchParams();
  if (view.seq !== null) q.set('at', String(view.seq));
  if (view.service) q.set('service', view.service);
  if (view.node) q.set('node', view.node);
  if (view.endpoint) q.set('endpoint', view.endpoint);
  history.replaceState(null, '', `#${q}`);
}

// ---- timeline ----------------------------------------------------------------------------

// The engine cuts the log into equal spans of time, so bars are equal width and the cursor is
// placed by the time of the point shown.
function drawChart() {
  const svg = $('chart');
  svg.replaceChildren();
  const { first, latest } = view.summary;
  const t0 = Date.parse(first.time);
  const span = Math.max(1, Date.parse(latest.time) - t0 + 1);
  const n = Math.max(1, view.buckets.length);
  const width = 1000 / n;
  const max = Math.max(1, ...view.buckets.map((b) => b.events));
  view.buckets.forEach((b, i) => {
    const h = b.events === 0 ? 0 : Math.max(2, (b.events / max) * 110);
    const rect = document.createElementNS(SVG, 'rect');
    rect.setAttribute('class', view.seq !== null && b.to.seq <= view.seq ? 'bar past' : 'bar');
    rect.setAttribute('x', String(i * width + 0.5));
    rect.setAttribute('y', String(118 - h));
    rect.setAttribute('width', String(Math.max(1, width - 1)));
    rect.setAttribute('height', String(h));
    rect.dataset.to = String(b.to.seq);
    const title = document.createElementNS(SVG, 'title');
    title.textContent = b.events === 0 ? `no events (${shortTime(b.from.time)})` : `${b.events} event${b.events === 1 ? '' : 's'}, seq ${b.from.seq}–${b.to.seq} (${shortTime(b.from.time)} – ${shortTime(b.to.time)})`;
    rect.append(title);
    // A click moves to the end of the bucket: the state once its events are in.
    if (b.events > 0) rect.addEventListener('click', () => void moveTo(String(b.to.seq)));
    svg.append(rect);
  });
  if (view.state !== null) {
    const line = document.createElementNS(SVG, 'line');
    const cx = Math.min(999, Math.max(1, ((Date.parse(view.state.at.time) - t0) / span) * 1000));
    line.setAttribute('class', 'cursor');
    for (const [k, v] of [['x1', cx], ['x2', cx], ['y1', 0], ['y2', 120]]) line.setAttribute(k, String(v));
    svg.append(line);
  }
}

let sliderTimer;
function drawExtent() {
  const slider = $('slider');
  slider.min = String(view.summary.first.seq);
  slider.max = String(view.summary.latest.seq);
  $('axis-first').textContent = `seq ${view.summary.first.seq} · ${shortTime(view.summary.first.time)}`;
  $('axis-latest').textContent = `seq ${view.summary.latest.seq} · ${shortTime(view.summary.latest.time)}`;
}

function wireTimeline() {
  const slider = $('slider');
  drawExtent();
  slider.addEventListener('input', () => {
    $('point').textContent = `seq ${slider.value} …`;
    clearTimeout(sliderTimer);
    sliderTimer = setTimeout(() => void moveTo(slider.value), 150);
  });
  slider.addEventListener('change', () => {
    clearTimeout(sliderTimer);
    void moveTo(slider.value);
  });
  $('service-filter').addEventListener('input', () => view.state && drawServices());
  $('to-first').addEventListener('click', () => void moveTo('first'));
  $('to-latest').addEventListener('click', () => void toLatest());
}

// ---- state -------------------------------------------------------------------------------

function selectedService() {
  return view.state?.services.find((s) => keyOf(s) === view.service) ?? null;
}

function drawServices() {
  const list = $('service-list');
  const filter = $('service-filter').value.trim();
  // The selected Service stays listed whatever the filter says.
  const shown = view.state.services.filter((s) => filter === '' || keyOf(s).includes(filter) || keyOf(s) === view.service);
  $('service-count').textContent = filter === '' ? `(${view.state.services.length})` : `(${shown.length} of ${view.state.services.length})`;
  list.replaceChildren(
    ...shown.map((s) => {
      const endpoints = s.slices.reduce((n, sl) => n + sl.endpoints.length, 0);
      return el(
        'li',
        { 'data-service': keyOf(s), class: keyOf(s) === view.service ? 'selected' : '', onclick: () => selectService(keyOf(s)) },
        el('span', { class: 'mono' }, keyOf(s), s.exists ? null : el('span', { class: 'tag gone', title: 'the Service object is deleted; its slices remain' }, 'deleted')),
        el('span', { class: 'count' }, `${s.slices.length} slice${s.slices.length === 1 ? '' : 's'} · ${endpoints} ep`),
      );
    }),
  );
  if (view.state.services.length === 0) list.append(el('li', { class: 'muted' }, 'no Services at this point'));
}

function yesNo(v, yes = 'yes', no = 'no') {
  return el('span', { class: v ? 'yes' : 'no' }, v ? yes : no);
}

function drawDetail() {
  const s = selectedService();
  $('detail-title').textContent = s ? `Slices of ${keyOf(s)}` : 'Slices';
  $('decisions').replaceChildren(
    ...(s?.decisions ?? []).map((d) => el('div', { class: `decision ${d.outcome}` }, el('strong', {}, `hints ${d.outcome}`), ` (${d.addressType}) — ${d.reason}`)),
  );
  const slices = $('slices');
  if (!s) {
    slices.replaceChildren(el('p', { class: 'muted' }, view.service ? `${view.service} does not exist at this point.` : 'Pick a Service.'));
    return;
  }
  if (s.slices.length === 0) {
    slices.replaceChildren(el('p', { class: 'muted' }, 'No slices at this point.'));
    return;
  }
  slices.replaceChildren(
    ...s.slices.map((sl) =>
      el(
        'div',
        { class: 'slice', 'data-slice': sl.name },
        el('h3', { class: 'mono' }, `${sl.name} `, el('span', { class: 'muted' }, `${sl.addressType} · ${sl.endpoints.length} endpoint${sl.endpoints.length === 1 ? '' : 's'}`)),
        el(
          'table',
          {},
          el('thead', {}, el('tr', {}, ...['address', 'pod', 'node', 'zone', 'ready', 'hints'].map((h) => el('th', {}, h)))),
          el(
            'tbody',
            {},
            ...sl.endpoints.map((e) =>
              el(
                'tr',
                { class: `endpoint${e.address === view.endpoint ? ' selected' : ''}`, 'data-address': e.address, title: 'Click to see which nodes send here, and why', onclick: () => selectEndpoint(e.address) },
                el('td', { class: 'mono' }, e.address),
                el('td', {}, e.pod ?? '—'),
                el('td', {}, e.node ?? '—'),
                el('td', {}, e.zone ?? '—'),
                el('td', {}, e.terminating ? el('span', { class: 'no' }, 'terminating') : yesNo(e.ready)),
                el('td', {}, e.hints.length ? e.hints.map((z) => el('span', { class: 'tag' }, z)) : '—'),
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

function drawZones() {
  const byZone = new Map();
  for (const n of view.state.nodes) {
    const z = n.zone ?? '(no zone)';
    if (!byZone.has(z)) byZone.set(z, []);
    byZone.get(z).push(n);
  }
  const s = selectedService();
  const zones = [...byZone.keys()].sort();
  $('zone-list').replaceChildren(
    ...zones.map((z) => {
      const viewOf = s?.zoneViews.find((v) => v.zone === (z === '(no zone)' ? '_' : z));
      return el(
        'div',
        { class: 'zone', 'data-zone': z },
        el('h3', {}, z, el('span', { class: 'muted' }, ` · ${byZone.get(z).length} node${byZone.get(z).length === 1 ? '' : 's'}`)),
        s ? el('div', { class: 'view' }, viewOf ? `view of ${keyOf(s)}: ${viewOf.endpoints.length} endpoint${viewOf.endpoints.length === 1 ? '' : 's'}` : `no view of ${keyOf(s)}`) : null,
        ...byZone.get(z).map((n) => {
          // With an endpoint picked, each node says whether it sends there.
          const seen = view.endpointWhy?.nodes.find((x) => x.node === n.name);
          const mark = seen === undefined ? '' : seen.sends ? ' sends' : ' silent';
          const title = seen === undefined ? undefined : `${seen.sends ? 'sends' : 'does not send'} to ${view.endpointWhy.ip}`;
          return el('button', { type: 'button', class: `node${n.name === view.node ? ' selected' : ''}${mark}`, 'data-node': n.name, title, onclick: () => selectNode(n.name) }, n.name);
        }),
      );
    }),
  );
  if (zones.length === 0) $('zone-list').replaceChildren(el('p', { class: 'muted' }, 'no nodes at this point'));
}

function drawWhy() {
  const box = $('why');
  if (!view.why) {
    $('why-title').textContent = 'Why';
    const hint = !view.node ? 'Pick a node to see why it sends (or not) to each endpoint of the selected Service.' : !view.service ? 'Pick a Service.' : '';
    box.replaceChildren(el('p', { class: 'muted' }, hint));
    return;
  }
  const w = view.why;
  $('why-title').textContent = `Why: ${w.node} (${w.zone ?? 'no zone'}) → ${w.service.namespace}/${w.service.name}`;
  const facts = el(
    'ul',
    { class: 'notes' },
    ...w.ports.map((p) => el('li', {}, el('span', { class: 'mono' }, p.servicePort), `: ${p.selection}`)),
    ...w.notes.map((n) => el('li', {}, n)),
  );
  if (w.endpoints.length === 0) {
    box.replaceChildren(facts, el('p', { class: 'muted' }, 'The Service has no endpoints at this point.'));
    return;
  }
  box.replaceChildren(
    facts,
    el(
      'table',
      {},
      el('thead', {}, el('tr', {}, ...['endpoint', 'zone', 'sends', 'because'].map((h) => el('th', {}, h)))),
      el(
        'tbody',
        {},
        ...w.endpoints.map((e) =>
          el(
            'tr',
            { 'data-address': e.ip, class: e.ip === view.endpoint ? 'selected' : '' },
            el('td', {}, el('div', { class: 'mono' }, e.address), e.pod ? el('div', { class: 'muted' }, e.pod) : null),
            el('td', {}, e.zone ?? '—'),
            el('td', {}, yesNo(e.sends, 'sends', 'does not')),
            el('td', {}, el('ul', { class: 'reasons' }, ...e.reasons.map((r) => el('li', {}, r)))),
          ),
        ),
      ),
    ),
  );
}

// Nodes that answer alike (same zone, same verdict, same reasons) share a row, so a cluster of
// hundreds of nodes reads as a few lines per zone.
function groupNodes(nodes) {
  const groups = new Map();
  for (const n of nodes) {
    const key = JSON.stringify([n.zone ?? '', n.sends, n.reasons]);
    if (!groups.has(key)) groups.set(key, { zone: n.zone, sends: n.sends, reasons: n.reasons, nodes: [] });
    groups.get(key).nodes.push(n.node);
  }
  return [...groups.values()].sort((a, b) => (a.zone ?? '').localeCompare(b.zone ?? '') || Number(b.sends) - Number(a.sends));
}

function drawEndpointWhy() {
  const title = $('endpoint-title');
  const box = $('endpoint-why');
  const w = view.endpointWhy;
  title.hidden = w === null;
  if (w === null) {
    box.replaceChildren();
    return;
  }
  const senders = w.nodes.filter((n) => n.sends).length;
  title.textContent = `Nodes → ${w.ip} of ${w.service.namespace}/${w.service.name}: ${senders} of ${w.nodes.length} send to it`;
  box.replaceChildren(
    el(
      'table',
      {},
      el('thead', {}, el('tr', {}, ...['nodes', 'zone', 'sends', 'because'].map((h) => el('th', {}, h)))),
      el(
        'tbody',
        {},
        ...groupNodes(w.nodes).map((g) =>
          el(
            'tr',
            { 'data-nodes': g.nodes.join(' '), class: g.nodes.includes(view.node) ? 'selected' : '' },
            el('td', {}, ...g.nodes.map((n) => el('span', { class: 'tag mono' }, n))),
            el('td', {}, g.zone ?? '—'),
            el('td', {}, yesNo(g.sends, 'sends', 'does not')),
            el('td', {}, el('ul', { class: 'reasons' }, ...g.reasons.map((r) => el('li', {}, r)))),
          ),
        ),
      ),
    ),
  );
}

function drawAll() {
  const at = view.state.at;
  $('point').textContent = `seq ${at.seq} · ${shortTime(at.time)}`;
  $('slider').value = String(at.seq);
  drawChart();
  drawServices();
  drawDetail();
  drawZones();
  drawWhy();
  drawEndpointWhy();
  document.body.dataset.seq = String(at.seq);
  delete document.body.dataset.busy;
  saveHash();
}

/** The "why" for the node and Service picked, at `seq`; null when either is missing. */
async function fetchWhy(seq, state) {
  if (!view.node || !view.service || !state.services.some((s) => keyOf(s) === view.service)) return null;
  const q = new URLSearchParams({ at: String(seq), node: view.node, service: view.service });
  return getJson(`/api/why?${q}`);
}

/** Which nodes send to the endpoint picked; null when none is, or it is not in the Service at this point. */
async function fetchEndpointWhy(seq, state) {
  const svc = state.services.find((s) => keyOf(s) === view.service);
  if (!view.endpoint || !svc || !svc.slices.some((sl) => sl.endpoints.some((e) => e.address === view.endpoint))) return null;
  const q = new URLSearchParams({ at: String(seq), service: view.service, ip: view.endpoint });
  return getJson(`/api/endpoint?${q}`);
}

// Answers may arrive out of order while the slider moves: `work` only fetches, and what it
// returns is applied and drawn only if no later request started meanwhile.
let generation = 0;
async function refresh(work) {
  const mine = ++generation;
  document.body.dataset.busy = '';
  try {
    const apply = await work();
    if (mine !== generation) return;
    apply();
    showError(null);
    drawAll();
  } catch (err) {
    if (mine !== generation) return;
    showError(err.message);
    delete document.body.dataset.busy;
  }
}

async function reloadExtent() {
  const [summary, buckets] = await Promise.all([getJson('/api/summary'), getJson(`/api/timeline?buckets=${BUCKETS}`)]);
  return () => {
    view.summary = summary;
    view.buckets = buckets;
    drawExtent();
  };
}

/** Fetches the state at `spec` (and the extent when `extent` or the log grew), then the why. */
function moveTo(spec, extent = false) {
  return refresh(async () => {
    const state = await getJson(`/api/state?at=${encodeURIComponent(spec)}`);
    // A live log that has grown past the timeline: read its extent again.
    const applyExtent = extent || state.at.seq > view.summary.latest.seq ? await reloadExtent() : () => {};
    if (view.service === null) {
      const first = state.services.find((s) => s.slices.length > 0) ?? state.services[0];
      if (first) view.service = keyOf(first);
    }
    const [why, endpointWhy] = await Promise.all([fetchWhy(state.at.seq, state), fetchEndpointWhy(state.at.seq, state)]);
    return () => {
      applyExtent();
      view.state = state;
      view.seq = state.at.seq;
      view.why = why;
      view.endpointWhy = endpointWhy;
    };
  });
}

// A live log grows while the page is open: "latest" reads its extent and timeline again too.
function toLatest() {
  return moveTo('latest', true);
}

function reloadWhy() {
  return refresh(async () => {
    const [why, endpointWhy] = await Promise.all([fetchWhy(view.seq, view.state), fetchEndpointWhy(view.seq, view.state)]);
    return () => {
      view.why = why;
      view.endpointWhy = endpointWhy;
    };
  });
}

function selectService(key) {
  view.service = key;
  view.endpoint = null;
  return reloadWhy();
}

function selectNode(name) {
  view.node = view.node === name ? null : name;
  return reloadWhy();
}

async function selectEndpoint(address) {
  view.endpoint = view.endpoint === address ? null : address;
  await reloadWhy();
  document.querySelector(`#why tr[data-address="${address}"]`)?.scrollIntoView({ block: 'nearest' });
}

async function start() {
  const hash = new URLSearchParams(location.hash.slice(1));
  view.service = hash.get('service');
  view.node = hash.get('node');
  view.endpoint = hash.get('endpoint');
  try {
    [view.summary, view.buckets] = await Promise.all([getJson('/api/summary'), getJson(`/api/timeline?buckets=${BUCKETS}`)]);
  } catch (err) {
    // A live log may hold no events yet (the stack just started): try again shortly.
    showError(`cannot read the log: ${err.message} — trying again in a few seconds`);
    setTimeout(() => void start(), 3000);
    return;
  }
  $('source').textContent = view.summary.source;
  wireTimeline();
  // An edited or pasted address moves the view; replaceState (saveHash) fires no hashchange.
  window.addEventListener('hashchange', () => {
    const h = new URLSearchParams(location.hash.slice(1));
    view.service = h.get('service') ?? view.service;
    view.node = h.get('node');
    view.endpoint = h.get('endpoint');
    void moveTo(h.get('at') ?? 'latest');
  });
  await moveTo(hash.get('at') ?? 'latest');
}

void start();

// The UI's `requests.js`, served at `/ui/requests.js` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let requestsJS = #"""
// One request log across services, newest first, live (server-sent events; polling with `after`
// while they are down), filterable.
// A denied Firestore request opens to its rules trace beside the rules source; a failed S3
// signature to the diagnosis and the canonical request / string-to-sign.
import { h, fill, guarded, codeView, diffView, statusBadge, fmtTime } from './dom.js';
import { hub, firestoreEmulator, live, setCurrentDatabase } from './api.js';

export async function render(root, args) {
  const selectedSeq = args[0] ? Number(args[0]) : null;
  const f = {
    service: h('select', { id: 'filter-service', 'aria-label': 'Service' }, ['', 'auth', 'firestore', 's3', 'api'].map(s => h('option', { value: s }, s || 'all services'))),
    status: h('select', { id: 'filter-status', 'aria-label': 'Status' }, [['', 'any status'], ['error', 'errors (≥ 400)'], ['ok', 'ok (< 400)'], ['4xx', '4xx'], ['403', '403'], ['5xx', '5xx']].map(([v, l]) => h('option', { value: v }, l))),
    user: h('input', { id: 'filter-user', placeholder: 'user', 'aria-label': 'User', size: 12 }),
    path: h('input', { id: 'filter-path', placeholder: 'path contains', 'aria-label': 'Path contains', class: 'grow' }),
  };
  const params = new URLSearchParams(location.hash.split('?')[1] || '');
  for (const k of Object.keys(f)) if (params.get(k)) f[k].value = params.get(k);
  const body = h('tbody', { id: 'requests-body' });
  const detail = h('section', { class: 'panel', id: 'request-detail', 'aria-label': 'Request detail' }, h('p', { class: 'muted' }, 'Pick a request to see why it failed.'));
  const more = h('button', { id: 'older', onclick: () => load('older') }, 'Older');
  const info = h('span', { class: 'muted' });
  fill(root, h('h1', {}, 'Requests'),
    h('form', { class: 'inline', onsubmit: e => { e.preventDefault(); reset(); } }, f.service, f.status, f.user, f.path,
      h('button', { type: 'submit' }, 'Filter'), h('button', { type: 'button', onclick: () => guarded(async () => { await hub('DELETE', '/emulator/v1/requests'); reset(); }) }, 'Clear log'), info),
    h('div', { class: 'grid cols2 wide-right' },
      h('section', { class: 'panel' }, h('div', { class: 'scroll' }, h('table', { id: 'requests' },
        h('thead', {}, h('tr', {}, ['Time', 'Service', 'Request', 'Status', 'User'].map(t => h('th', { class: t === 'User' ? 'hide-narrow' : '' }, t)))), body)),
        h('div', { class: 'row' }, more)),
      detail));
  for (const el of [f.service, f.status]) el.addEventListener('change', reset);

  let latest = 0, oldest = null, selectedRow = null;
  const query = extra => {
    const q = new URLSearchParams(extra);
    for (const [k, el] of Object.entries(f)) if (el.value.trim()) q.set(k, el.value.trim());
    return q.toString();
  };
  const row = e => {
    const tr = h('tr', { class: 'clickable' + (e.seq === selectedSeq ? ' sel' : ''), 'data-seq': e.seq },
      h('td', { class: 'mono' }, fmtTime(e.time).slice(11)),
      h('td', {}, e.service),
      h('td', { class: 'mono' }, h('button', { class: 'link mono', title: `${e.method} ${e.path} (${e.durationMs.toFixed(1)} ms)`, onclick: () => open(e.seq, tr) },
        h('strong', {}, e.method), ' ', shortPath(e.path, e.fields), e.fields?.stream ? h('span', { class: 'muted' }, ` · ${e.fields.stream}`) : null)),
      h('td', {}, statusBadge(e.status)),
      h('td', { class: 'hide-narrow' }, e.user || ''));
    tr.addEventListener('click', ev => { if (ev.target.tagName !== 'BUTTON') open(e.seq, tr); });
    return tr;
  };
  async function load(kind) {
    const r = await hub('GET', '/emulator/v1/requests?' + query(kind === 'newer' ? { after: latest, limit: 200 } : kind === 'older' ? { before: oldest, limit: 100 } : { limit: 100 }));
    if (kind === 'newer') { if (r.requests.length) body.prepend(...r.requests.map(row)); }
    else body.append(...r.requests.map(row));
    if (kind !== 'newer' && r.requests.length) oldest = r.requests[r.requests.length - 1].seq;
    if (kind === 'older' && !r.requests.length) more.disabled = true;
    latest = Math.max(latest, r.latest);
    info.textContent = `${r.kept} kept (up to ${r.capacity}), newest #${r.latest}`;
  }
  // Live rows arrive one event at a time; they are added once per frame, and the table keeps at
  // most MAX_ROWS (older ones are a click on "Older" away).
  let pending = [], frame = 0, stopLive = null;
  const flush = () => {
    frame = 0;
    const fresh = pending.filter(e => e.seq > latest).sort((a, b) => b.seq - a.seq);
    pending = [];
    if (!fresh.length) return;
    latest = fresh[0].seq;
    body.prepend(...fresh.map(row));
    while (body.rows.length > MAX_ROWS) body.lastElementChild.remove();
    const last = body.lastElementChild;
    if (last && body.rows.length === MAX_ROWS) { oldest = Number(last.dataset.seq); more.disabled = false; }
    info.textContent = info.textContent.replace(/newest #\d+/, `newest #${latest}`);
  };
  const pushed = e => { pending.push(e); if (!frame) frame = requestAnimationFrame(flush); };
  function follow() {
    if (stopLive) stopLive();
    // The stream starts right after the page just loaded (the hub replays what came in between).
    const params = { lastEventId: latest ? String(latest) : '' };
    for (const [k, el] of Object.entries(f)) if (el.value.trim()) params[k] = el.value.trim();
    stopLive = live({ topics: ['requests'], params, handlers: { request: pushed }, interval: 1000,
      poll: () => load('newer').catch(() => {}), resync: () => reset() });
  }
  async function reset() {
    body.replaceChildren();
    latest = 0; oldest = null; more.disabled = false;
    await guarded(() => load('first'));
    follow();
  }
  async function open(seq, tr) {
    if (selectedRow) selectedRow.classList.remove('sel');
    selectedRow = tr;
    tr?.classList.add('sel');
    history.replaceState(null, '', `#/requests/${seq}`);
    await guarded(async () => showDetail(detail, await hub('GET', `/emulator/v1/requests/${seq}`)));
  }
  await reset();
  if (selectedSeq) await open(selectedSeq, body.querySelector(`tr[data-seq="${selectedSeq}"]`));
  return () => { if (stopLive) stopLive(); if (frame) cancelAnimationFrame(frame); };
}

const MAX_ROWS = 1000;

/** Firestore's long resource prefix folded (a named database kept), and at most 40 characters (the end, where the ids are). */
function shortPath(path, fields) {
  let db = fields?.database && fields.database !== '(default)' ? fields.database : null;
  let p = path.replace(/^\/v1\/projects\/[^/]+\/databases\/([^/]+)\/documents/, (_, d) => {
    if (decodeURIComponent(d) !== '(default)') db = decodeURIComponent(d);
    return '…/documents';
  });
  p = p.length > 40 ? '…' + p.slice(-39) : p;
  return db ? `[${db}] ${p}` : p;
}

/** The Firestore database a logged request was for: named in its REST path, or a gRPC call's `database` field. */
function databaseOf(e) {
  const m = /^\/v1(?:beta1)?\/projects\/[^/]+\/databases\/([^/:]+)/.exec(e.path);
  if (m) return decodeURIComponent(m[1]);
  return e.fields?.database || '(default)';
}

async function showDetail(el, e) {
  const fields = Object.entries(e.fields || {}).filter(([k]) => k !== 's3.diagnosis');
  const parts = [h('h2', { class: 'mono' }, `${e.method} ${e.path}`),
    h('p', {}, statusBadge(e.status), ` ${e.service} · ${fmtTime(e.time)} · user ${e.user || '(none)'} · ${e.durationMs} ms · request id `, h('code', {}, e.requestId)),
    fields.length ? h('dl', { class: 'kv' }, fields.map(([k, v]) => [h('dt', {}, k), h('dd', { class: 'mono' }, typeof v === 'string' ? v : JSON.stringify(v))])) : null];
  const bodyText = e.errorBody || '';
  if (e.service === 'firestore' && bodyText) parts.push(...await firestoreDenial(bodyText, databaseOf(e)));
  else if (e.service === 's3' && bodyText.includes('<Error>')) parts.push(...s3Failure(bodyText));
  else if (bodyText) parts.push(h('h3', {}, 'Error body'), h('pre', { class: 'wrap' }, prettyJSON(bodyText)));
  fill(el, parts);
}

function prettyJSON(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
}

async function firestoreDenial(text, database) {
  let message = text;
  try { message = JSON.parse(text).error.message; } catch { /* not JSON */ }
  const out = [h('h3', {}, 'Why'), h('pre', { class: 'wrap', id: 'denial-trace' }, message)];
  // `false for 'create' @ L5`, and the trace's `L12` mentions: the allow statements that failed.
  const primary = new Set([...message.matchAll(/(?:false for '[^']*'|allow [^@\n]*) @ L(\d+)/g)].map(m => Number(m[1])));
  const related = new Set([...message.matchAll(/\bL(\d+)\b/g)].map(m => Number(m[1])));
  if (!primary.size && !related.size) return out;
  try {
    // The rules judging the request's database now (its own, else the project's, else the file's).
    const r = await firestoreEmulator('GET', 'securityRules', undefined, database);
    const file = r.rules?.files?.[0];
    if (!file) return out;
    const view = codeView(file.content, n => primary.has(n) ? 'fail' : related.has(n) ? 'issue' : '');
    view.classList.add('tall');
    const openRules = h('a', { href: '#/rules', id: 'denial-database', onclick: () => setCurrentDatabase(database) }, database);
    out.push(h('h3', {}, 'Rules judging database ', openRules, `: ${file.name} `, h('span', { class: 'badge fail-key' }, 'false allow'), ' ', h('span', { class: 'badge issue-key' }, 'named in the trace')),
      h('div', { id: 'denial-rules' }, view));
    // Scroll the rules box (not the page) to the first failing allow.
    setTimeout(() => { const f = view.querySelector('.fail') || view.querySelector('.issue'); if (f) view.scrollTop = f.offsetTop - view.clientHeight / 3; }, 0);
  } catch { /* rules not readable: the trace alone */ }
  return out;
}

function s3Failure(text) {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  const get = t => doc.getElementsByTagName(t)[0]?.textContent ?? '';
  const out = [h('h3', {}, `${get('Code')}: ${get('Message')}`)];
  const diagnosis = get('Diagnosis');
  if (diagnosis) out.push(h('div', { class: 'note', id: 's3-diagnosis' }, diagnosis));
  const pairs = [['Canonical request', get('CanonicalRequest'), get('DiagnosisCanonicalRequest')], ['String to sign', get('StringToSign'), get('DiagnosisStringToSign')]];
  for (const [title, hearth, client] of pairs) {
    if (!hearth) continue;
    if (client) {
      out.push(h('h3', {}, `${title}: what the client signed (−) against what Hearth computed (+)`), diffView(client, hearth));
    } else {
      out.push(h('h3', {}, `${title} Hearth computed (compare with your client's, e.g. boto3 debug logging)`), codeView(hearth));
    }
  }
  if (get('SignatureProvided')) out.push(h('dl', { class: 'kv' }, h('dt', {}, 'Signature provided'), h('dd', { class: 'mono' }, get('SignatureProvided'))));
  return out;
}

"""#
}

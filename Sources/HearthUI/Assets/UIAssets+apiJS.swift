// The UI's `api.js`, served at `/ui/api.js` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let apiJS = #"""
// Every read and write goes through Hearth's own public and emulator endpoints, mounted on the
// UI's origin: /hub, /auth, /firestore, /s3 and /api are the listeners' own handlers.

export class ApiError extends Error {
  constructor(status, message, body) { super(message); this.status = status; this.body = body; }
}

let statusCache = null;

/** The ready JSON (services, env, project, rules) from the hub. */
export async function hearthStatus(refresh = false) {
  if (!statusCache || refresh) statusCache = await hub('GET', '/emulator/v1/status');
  return statusCache;
}

export async function project() { return (await hearthStatus()).project; }

/** fetch with JSON in and out; a non-2xx answer throws ApiError with the service's message. */
export async function call(method, url, { body, headers = {}, raw = false } = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    if (body instanceof Blob || body instanceof ArrayBuffer || typeof body === 'string') init.body = body;
    else { init.body = JSON.stringify(body); init.headers['Content-Type'] = 'application/json'; }
  }
  const res = await fetch(url, init);
  if (raw) return res;
  const text = await res.text();
  if (!res.ok) throw new ApiError(res.status, errorMessage(res.status, text), text);
  if (!text) return {};
  try { return JSON.parse(text); } catch { return text; }
}

export function errorMessage(status, text) {
  try {
    const j = JSON.parse(text);
    const e = j.error;
    if (e) return `${status} ${e.status || ''} ${e.message || JSON.stringify(e)}`.replace(/\s+/, ' ');
  } catch { /* not JSON */ }
  const m = /<Message>([\s\S]*?)<\/Message>/.exec(text);
  const c = /<Code>([\s\S]*?)<\/Code>/.exec(text);
  if (m || c) return `${status} ${c ? c[1] : ''}: ${m ? m[1] : ''}`;
  return `${status} ${text.slice(0, 300)}`;
}

export const hub = (method, path, body) => call(method, '/hub' + path, { body });

/**
 * Live updates pushed by the hub (server-sent events, `GET /emulator/v1/events`), falling back to
 * calling `poll` every `interval` ms whenever the event stream is down (or EventSource is missing).
 * `handlers` maps event names (`request`, `document`) to functions of the parsed data; `resync` runs
 * when events may have been missed (`reset`/`overflow` from the hub, and for `documents` every
 * reconnect, which replays nothing). A hidden tab closes its stream (a browser allows only six
 * connections per host, and each open stream holds one) and resyncs when shown again.
 * Returns a function that stops everything.
 */
export function live({ topics, params = {}, handlers = {}, poll, interval = 2000, resyncOnReconnect = false, resync }) {
  let source = null, timer = null, stopped = false, opened = false;
  const mode = m => { document.documentElement.dataset.live = m; };
  const startPolling = () => {
    mode('polling');
    if (!timer && poll) timer = setInterval(() => { if (!document.hidden) poll(); }, interval);
  };
  const stopPolling = () => { if (timer) { clearInterval(timer); timer = null; } };
  if (typeof EventSource !== 'function') { startPolling(); return () => stopPolling(); }
  const q = new URLSearchParams({ topics: topics.join(',') });
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  let lastId = params.lastEventId || '';
  const connect = () => {
    if (lastId) q.set('lastEventId', lastId);
    source = new EventSource('/hub/emulator/v1/events?' + q);
    for (const [name, fn] of Object.entries(handlers)) {
      source.addEventListener(name, e => { if (e.lastEventId) lastId = e.lastEventId; if (!stopped) fn(JSON.parse(e.data)); });
    }
    for (const name of ['reset', 'overflow']) source.addEventListener(name, () => { if (!stopped && resync) resync(); });
    source.onopen = () => {
      stopPolling();
      mode('events');
      // What happened while the stream was down was polled, or must be reloaded.
      if (opened && resyncOnReconnect && resync) resync();
      opened = true;
    };
    // CONNECTING: the browser retries by itself (poll meanwhile); CLOSED: it gave up, poll for good.
    source.onerror = () => { if (!stopped) startPolling(); };
  };
  const onVisibility = () => {
    if (stopped) return;
    if (document.hidden) { if (source) { source.close(); source = null; } stopPolling(); }
    else if (!source) connect();
  };
  document.addEventListener('visibilitychange', onVisibility);
  connect();
  return () => {
    stopped = true;
    document.removeEventListener('visibilitychange', onVisibility);
    if (source) source.close();
    stopPolling();
  };
}

/** Identity Toolkit / emulator endpoints with admin rights (Bearer owner). */
export const auth = (method, path, body) => call(method, '/auth' + path, { body, headers: { Authorization: 'Bearer owner' } });

// The Firestore database the data browser and the rules view show: one choice for both pages,
// kept for the tab (sessionStorage), `(default)` until another is picked.
const DATABASE_KEY = 'hearth.database';

export function currentDatabase() {
  try { return sessionStorage.getItem(DATABASE_KEY) || '(default)'; } catch { return '(default)'; }
}

export function setCurrentDatabase(id) {
  try { sessionStorage.setItem(DATABASE_KEY, id); } catch { /* storage off: this page only */ }
}

/**
 * The project's databases — `(default)`, every one written to and every one given rules of its
 * own — each with the rules that judge it: `rules.from` is `database` (its own), `project`, `file`,
 * `configured` (the shipped rules) or `none`; `rules.state` `loaded`, `open` or `denied`.
 */
export async function firestoreDatabases() {
  const p = await project();
  return (await hub('GET', `/emulator/v1/firestore/projects/${encodeURIComponent(p)}/databases`)).databases;
}

/** Firestore REST as the owner (rules bypassed, as the Admin SDK's emulator mode does), on the current database. */
export async function firestore(method, path, body, database = currentDatabase()) {
  const p = await project();
  return call(method, `/firestore/v1/projects/${p}/databases/${encodeURIComponent(database)}/documents${path}`, { body, headers: { Authorization: 'Bearer owner' } });
}

/** `…/projects/{p}:action` (the project's rules), or with `database` `…/projects/{p}/databases/{d}:action` (that database's). */
export async function firestoreEmulator(method, action, body, database) {
  const p = await project();
  const at = database ? `${p}/databases/${encodeURIComponent(database)}` : p;
  return call(method, `/firestore/emulator/v1/projects/${at}:${action}`, { body });
}

/** Encodes each segment of a document or collection path. */
export const encodePath = path => path.split('/').map(encodeURIComponent).join('/');

// --- S3 with SigV4 (crypto.subtle), signed for the S3 listener's own address and the emulator clock.

const enc = new TextEncoder();
const hex = buf => [...new Uint8Array(buf)].map(b => b.toString(16).padStart(2, '0')).join('');
const sha256 = async s => hex(await crypto.subtle.digest('SHA-256', enc.encode(s)));
async function hmac(key, msg) {
  const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, typeof msg === 'string' ? enc.encode(msg) : msg));
}
/** RFC 3986 encoding as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
export const uriEncode = s => encodeURIComponent(s).replace(/[!'()*]/g, c => '%' + c.charCodeAt(0).toString(16).toUpperCase());

/** A SigV4-signed S3 request: path `/bucket/key`, query an object of strings. */
export async function s3(method, path, { query = {}, body, contentType } = {}) {
  if (!crypto.subtle) throw new Error('S3 signing needs a secure context: open the UI at http://localhost or http://127.0.0.1');
  const st = await hearthStatus();
  const env = st.env;
  const host = new URL(env.AWS_ENDPOINT_URL_S3).host;
  const clock = await hub('GET', '/emulator/v1/clock');
  const amzDate = clock.now.replace(/[-:]/g, '').replace(/\.\d+/, '');
  const date = amzDate.slice(0, 8);
  const region = env.AWS_REGION;
  const canonicalPath = path.split('/').map(uriEncode).join('/');
  const canonicalQuery = Object.keys(query).sort().map(k => `${uriEncode(k)}=${uriEncode(query[k])}`).join('&');
  const payload = 'UNSIGNED-PAYLOAD';
  const headers = { host, 'x-amz-content-sha256': payload, 'x-amz-date': amzDate };
  const signed = Object.keys(headers).sort();
  const canonical = [method, canonicalPath, canonicalQuery, signed.map(k => `${k}:${headers[k]}\n`).join(''), signed.join(';'), payload].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, await sha256(canonical)].join('\n');
  let key = await hmac(enc.encode('AWS4' + env.AWS_SECRET_ACCESS_KEY), date);
  for (const part of [region, 's3', 'aws4_request']) key = await hmac(key, part);
  const signature = hex(await hmac(key, toSign));
  const h = {
    'x-amz-content-sha256': payload, 'x-amz-date': amzDate,
    Authorization: `AWS4-HMAC-SHA256 Credential=${env.AWS_ACCESS_KEY_ID}/${scope}, SignedHeaders=${signed.join(';')}, Signature=${signature}`,
  };
  if (contentType) h['Content-Type'] = contentType;
  const res = await fetch('/s3' + canonicalPath + (canonicalQuery ? '?' + canonicalQuery : ''), { method, headers: h, body });
  if (!res.ok) throw new ApiError(res.status, errorMessage(res.status, await res.text()));
  return res;
}

/** S3's XML answer as a Document. */
export async function s3xml(method, path, opts) {
  const res = await s3(method, path, opts);
  return new DOMParser().parseFromString(await res.text(), 'application/xml');
}

/** Text of the first `tag` under `node`. */
export const xmlText = (node, tag) => node.getElementsByTagName(tag)[0]?.textContent ?? '';

"""#
}

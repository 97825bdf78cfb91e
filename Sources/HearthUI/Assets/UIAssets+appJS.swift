// The UI's `app.js`, served at `/ui/app.js` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let appJS = #"""
// The page shell: navigation, hash routing, the clock in the header. Each page module exports
// `render(root, args)` and may return a function that stops its polling when the page is left.
import { h, fill, toast } from './dom.js';
import { hub } from './api.js';

const pages = [
  ['overview', 'Overview'], ['firestore', 'Firestore'], ['requests', 'Requests'], ['auth', 'Auth'],
  ['s3', 'S3'], ['rules', 'Rules'], ['clock', 'Clock'],
];

let stop = null;
let renderToken = 0;

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [name, ...rest] = raw.split('/');
  return { name: pages.some(p => p[0] === name) ? name : 'overview', args: rest.map(decodeURIComponent) };
}

async function route() {
  const { name, args } = parseHash();
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.page === name) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  if (stop) { try { stop(); } catch { /* already stopped */ } stop = null; }
  const token = ++renderToken;
  const main = document.getElementById('main');
  const title = pages.find(p => p[0] === name)[1];
  document.title = `${title} · Hearth`;
  try {
    const mod = await import(`./${name}.js`);
    if (token !== renderToken) return;
    const root = fill(main);
    const cleanup = await mod.render(root, args);
    if (token !== renderToken) { if (typeof cleanup === 'function') cleanup(); return; }
    stop = typeof cleanup === 'function' ? cleanup : null;
  } catch (e) {
    if (token === renderToken) fill(main, h('h1', {}, title), h('div', { class: 'error' }, e.message || String(e)));
  }
  markReady();
}

/** The first page is drawn with its data: a `hearth-ready` performance mark (the bench reads it). */
function markReady() {
  if (document.documentElement.dataset.ready) return;
  document.documentElement.dataset.ready = 'true';
  performance.mark('hearth-ready');
}

async function tickClock() {
  try {
    const c = await hub('GET', '/emulator/v1/clock');
    const el = document.getElementById('topclock');
    el.textContent = (c.mode === 'frozen' ? '❄ ' : '') + c.now.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
    el.title = `Emulator clock (${c.mode}${c.offsetSeconds ? `, offset ${c.offsetSeconds} s` : ''})`;
  } catch { /* the hub is gone; the next tick retries */ }
}

/** Lets pages refresh the header clock right after they move it. */
export const refreshClock = tickClock;

function init() {
  fill(document.getElementById('nav'), pages.map(([id, label]) => h('a', { href: `#/${id}`, 'data-page': id }, label)));
  window.addEventListener('hashchange', route);
  window.addEventListener('unhandledrejection', e => toast(String(e.reason?.message || e.reason), true));
  route();
  tickClock();
  setInterval(tickClock, 2000);
}

init();

"""#
}

// The UI's `overview.js`, served at `/ui/overview.js` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let overviewJS = #"""
import { h, fill, toast } from './dom.js';
import { hearthStatus, hub, auth, firestore, s3xml, currentDatabase } from './api.js';

const describe = {
  hub: 'health, clock, reset, request log, S3 admin, rules test API',
  auth: 'Firebase Auth emulator (Identity Toolkit, securetoken)',
  firestore: 'Cloud Firestore REST + gRPC, rules on every request',
  s3: 'S3 with strict SigV4',
  api: 'uploads API (presign, complete, download)',
  ui: 'this web UI',
};

export async function render(root) {
  const st = await hearthStatus(true);
  const counts = h('div', { class: 'grid cards' });
  const exports = Object.entries(st.env).map(([k, v]) => `export ${k}=${v}`).join('\n');
  fill(root,
    h('h1', {}, 'Overview'),
    h('div', { class: 'grid cols2' },
      h('section', { class: 'panel' }, h('h2', {}, 'Services'),
        h('div', { class: 'scroll' }, h('table', {},
          h('thead', {}, h('tr', {}, h('th', {}, 'Service'), h('th', {}, 'Address'), h('th', { class: 'hide-narrow' }, 'Serves'))),
          h('tbody', {}, Object.entries(st.services).map(([name, s]) => h('tr', {},
            h('td', {}, h('strong', {}, name)), h('td', {}, h('code', {}, s.url)),
            h('td', { class: 'hide-narrow muted' }, describe[name] || '')))))),
        h('dl', { class: 'kv' }, h('dt', {}, 'Project'), h('dd', {}, st.project), h('dt', {}, 'Rules'),
          h('dd', {}, Object.values(st.rules || {}).join(' · ')), h('dt', {}, 'Version'), h('dd', {}, st.version),
          h('dt', {}, 'Data'), h('dd', {}, st.dataDir || 'in memory'))),
      h('section', { class: 'panel' }, h('h2', {}, 'Environment for clients'),
        h('pre', { id: 'env-exports' }, exports),
        h('div', { class: 'row' },
          h('button', { onclick: () => navigator.clipboard.writeText(exports).then(() => toast('Copied'), () => toast('Copy failed; select the text', true)) }, 'Copy exports'),
          h('button', { class: 'danger', onclick: resetAll }, 'Reset all data…')))),
    h('h2', {}, 'Contents'), counts,
    h('h2', {}, 'Clock'), h('p', { id: 'overview-clock', class: 'mono' }));
  const [, clock] = await Promise.all([loadCounts(counts, st), hub('GET', '/emulator/v1/clock')]);
  document.getElementById('overview-clock').textContent = `${clock.now} (${clock.mode})`;
}

async function loadCounts(el, st) {
  const card = (n, label, href) => h('a', { class: 'card', href, style: null }, h('div', { class: 'n' }, n), h('div', { class: 'muted' }, label));
  const safe = async f => { try { return await f(); } catch { return '–'; } };
  const [users, collections, buckets, requests] = await Promise.all([
    safe(async () => (await auth('POST', `/identitytoolkit.googleapis.com/v1/projects/${st.project}/accounts:query`, { returnUserInfo: false })).recordsCount ?? 0),
    safe(async () => ((await firestore('POST', ':listCollectionIds', { pageSize: 1000 })).collectionIds || []).length),
    safe(async () => (await s3xml('GET', '/')).getElementsByTagName('Bucket').length),
    safe(async () => (await hub('GET', '/emulator/v1/requests?limit=0')).latest),
  ]);
  fill(el, card(users, 'Auth users', '#/auth'), card(collections, 'Firestore root collections' + (currentDatabase() === '(default)' ? '' : ` in ${currentDatabase()}`), '#/firestore'),
    card(buckets, 'S3 buckets', '#/s3'), card(requests, 'requests served', '#/requests'));
}

async function resetAll() {
  if (!confirm('Delete every user, document, bucket and object?')) return;
  try { await hub('POST', '/emulator/v1/reset'); toast('Every service was reset'); location.reload(); } catch (e) { toast(e.message, true); }
}

"""#
}

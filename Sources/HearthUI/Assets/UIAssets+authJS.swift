// The UI's `auth.js`, served at `/ui/auth.js` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let authJS = #"""
// Auth users through the Identity Toolkit admin API (Bearer owner), per tenant; the emulator's
// waiting oob and SMS codes.
import { h, fill, guarded, toast } from './dom.js';
import { auth, project } from './api.js';

export async function render(root) {
  const proj = await project();
  const tenant = h('input', { id: 'tenant', placeholder: 'tenant id (optional)', 'aria-label': 'Tenant', size: 16, list: 'tenant-ids' });
  const tenantIds = h('datalist', { id: 'tenant-ids' });
  auth('GET', `/identitytoolkit.googleapis.com/v2/projects/${proj}/tenants`).then(r => fill(tenantIds, (r.tenants || []).map(t =>
    h('option', { value: t.name.split('/').pop() }, t.displayName || ''))), () => {});
  const search = h('input', { id: 'user-search', placeholder: 'search email, uid, phone, name', 'aria-label': 'Search users', class: 'grow', type: 'search' });
  const table = h('tbody', { id: 'users-body' });
  const editPane = h('section', { class: 'panel', id: 'user-editor', 'aria-label': 'User' }, h('p', { class: 'muted' }, 'Pick a user, or add one.'));
  const codes = h('section', { class: 'panel', id: 'codes', 'aria-label': 'Codes waiting' });
  const base = () => `/identitytoolkit.googleapis.com/v1/projects/${proj}` + (tenant.value.trim() ? `/tenants/${encodeURIComponent(tenant.value.trim())}` : '');
  const emuBase = () => `/emulator/v1/projects/${proj}` + (tenant.value.trim() ? `/tenants/${encodeURIComponent(tenant.value.trim())}` : '');
  let users = [];

  fill(root, h('h1', {}, 'Auth'),
    h('div', { class: 'row' }, search, tenant, tenantIds,
      h('button', { class: 'primary', id: 'add-user', onclick: () => edit(null) }, '+ Add user'),
      h('button', { class: 'danger', onclick: clearAll }, 'Delete all users')),
    h('div', { class: 'grid cols2' },
      h('section', { class: 'panel' }, h('div', { class: 'scroll' }, h('table', { id: 'users' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Email / phone'), h('th', {}, 'Name'), h('th', { class: 'hide-narrow' }, 'UID'), h('th', {}, 'State'))), table))),
      editPane),
    codes);
  search.addEventListener('input', draw);
  tenant.addEventListener('change', () => load());

  async function load() {
    await guarded(async () => {
      const r = await auth('POST', base() + '/accounts:query', { returnUserInfo: true, limit: '500' });
      users = r.userInfo || [];
      draw();
      await loadCodes();
    });
  }
  function draw() {
    const q = search.value.trim().toLowerCase();
    const shown = users.filter(u => !q || [u.email, u.localId, u.phoneNumber, u.displayName].some(x => (x || '').toLowerCase().includes(q)));
    fill(table, shown.length ? shown.map(u => {
      const tr = h('tr', { class: 'clickable', 'data-uid': u.localId },
        h('td', {}, h('button', { class: 'link', onclick: () => edit(u) }, u.email || u.phoneNumber || '(anonymous)')),
        h('td', {}, u.displayName || ''), h('td', { class: 'hide-narrow mono' }, u.localId),
        h('td', {}, u.disabled ? h('span', { class: 'deny' }, 'disabled') : u.emailVerified ? 'verified' : ''));
      tr.addEventListener('click', ev => { if (ev.target.tagName !== 'BUTTON') edit(u); });
      return tr;
    }) : h('tr', {}, h('td', { colspan: 4, class: 'muted' }, users.length ? 'No user matches.' : 'No users yet.')));
  }
  async function loadCodes() {
    const [oob, sms] = await Promise.all([auth('GET', emuBase() + '/oobCodes').catch(() => ({})), auth('GET', emuBase() + '/verificationCodes').catch(() => ({}))]);
    fill(codes, h('h2', {}, 'Codes waiting'), h('div', { class: 'grid cols2' },
      h('div', {}, h('h3', {}, 'Email action codes (oob)'), (oob.oobCodes || []).length ? h('div', { class: 'scroll' }, h('table', {},
        h('thead', {}, h('tr', {}, h('th', {}, 'Email'), h('th', {}, 'Type'), h('th', {}, 'Link'))),
        h('tbody', {}, oob.oobCodes.map(c => h('tr', {}, h('td', {}, c.email), h('td', {}, c.requestType), h('td', {}, h('a', { href: c.oobLink, target: '_blank', rel: 'noopener' }, c.oobCode))))))) : h('p', { class: 'muted' }, 'None.')),
      h('div', {}, h('h3', {}, 'SMS codes'), (sms.verificationCodes || []).length ? h('div', { class: 'scroll' }, h('table', {},
        h('thead', {}, h('tr', {}, h('th', {}, 'Phone'), h('th', {}, 'Code'))),
        h('tbody', {}, sms.verificationCodes.map(c => h('tr', {}, h('td', {}, c.phoneNumber), h('td', { class: 'mono' }, c.code)))))) : h('p', { class: 'muted' }, 'None.'))));
  }
  function edit(u) {
    const isNew = !u;
    u = u || {};
    const email = h('input', { id: 'user-email', type: 'email', value: u.email || '' });
    const password = h('input', { id: 'user-password', type: 'password', placeholder: isNew ? '' : 'unchanged', autocomplete: 'new-password' });
    const name = h('input', { id: 'user-name', value: u.displayName || '' });
    const phone = h('input', { id: 'user-phone', value: u.phoneNumber || '', placeholder: '+15555550100' });
    const verified = h('input', { id: 'user-verified', type: 'checkbox', checked: !!u.emailVerified });
    const disabled = h('input', { id: 'user-disabled', type: 'checkbox', checked: !!u.disabled });
    const claims = h('textarea', { id: 'user-claims', rows: 3, placeholder: '{"admin": true}' }, u.customAttributes || '');
    fill(editPane, h('h2', {}, isNew ? 'New user' : (u.email || u.localId)),
      isNew ? null : h('p', { class: 'muted mono' }, `uid ${u.localId}` + (u.createdAt ? ` · created ${new Date(Number(u.createdAt)).toISOString()}` : '') + (u.lastLoginAt ? ` · last sign-in ${new Date(Number(u.lastLoginAt)).toISOString()}` : '')),
      h('form', { id: 'user-form', onsubmit: e => { e.preventDefault(); save(); } },
        h('label', { class: 'stack' }, 'Email', email), h('label', { class: 'stack' }, 'Password', password),
        h('label', { class: 'stack' }, 'Display name', name), h('label', { class: 'stack' }, 'Phone', phone),
        h('div', { class: 'row' }, h('label', {}, verified, 'Email verified'), h('label', {}, disabled, 'Disabled')),
        h('label', { class: 'stack' }, 'Custom claims (JSON)', claims),
        h('div', { class: 'row end' },
          isNew ? null : h('button', { type: 'button', class: 'danger', id: 'delete-user', onclick: () => remove(u) }, 'Delete user'),
          h('button', { type: 'submit', class: 'primary', id: 'save-user' }, isNew ? 'Create' : 'Save'))),
      isNew ? null : h('details', {}, h('summary', {}, 'Raw record'), h('pre', {}, JSON.stringify(u, null, 2))));
    email.focus();
    async function save() {
      await guarded(async () => {
        if (claims.value.trim()) JSON.parse(claims.value);
        const body = { email: email.value.trim() || undefined, displayName: name.value, phoneNumber: phone.value.trim() || undefined, emailVerified: verified.checked };
        if (password.value) body.password = password.value;
        if (isNew) {
          const created = await auth('POST', base() + '/accounts', { ...body, disabled: disabled.checked });
          if (claims.value.trim() || disabled.checked) await auth('POST', base() + '/accounts:update', { localId: created.localId, customAttributes: claims.value.trim() || undefined, disableUser: disabled.checked });
          toast('User created');
        } else {
          const upd = { ...body, localId: u.localId, disableUser: disabled.checked, customAttributes: claims.value.trim() || '{}' };
          const del = [];
          if (!name.value) { delete upd.displayName; del.push('DISPLAY_NAME'); }
          if (!phone.value.trim() && u.phoneNumber) del.push('PHONE_NUMBER');
          if (del.length) upd.deleteAttribute = del.filter(a => a !== 'PHONE_NUMBER');
          if (!phone.value.trim() && u.phoneNumber) upd.deleteProvider = ['phone'];
          await auth('POST', base() + '/accounts:update', upd);
          toast('User saved');
        }
        await load();
        const fresh = users.find(x => x.email === email.value.trim()) || users.find(x => x.localId === u.localId);
        if (fresh) edit(fresh);
      });
    }
  }
  async function remove(u) {
    if (!confirm(`Delete ${u.email || u.localId}?`)) return;
    await guarded(async () => { await auth('POST', base() + '/accounts:delete', { localId: u.localId }); toast('User deleted'); fill(editPane); await load(); });
  }
  async function clearAll() {
    if (!confirm('Delete every user of this project' + (tenant.value ? ' tenant' : '') + '?')) return;
    await guarded(async () => { await auth('DELETE', emuBase() + '/accounts'); toast('Users deleted'); await load(); });
  }
  await load();
  const timer = setInterval(() => { if (!document.hidden && !editPane.contains(document.activeElement)) load(); }, 3000);
  return () => clearInterval(timer);
}

"""#
}

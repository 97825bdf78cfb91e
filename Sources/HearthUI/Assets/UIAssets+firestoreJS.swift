// The UI's `firestore.js`, served at `/ui/firestore.js` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let firestoreJS = #"""
// The Firestore data browser: collections → documents → fields, as the owner through the REST API.
// Route: #/firestore/<collection>/<doc>/<subcollection>/…; the hub's document events (or polling
// while they are down) keep the open view live.
import { h, fill, guarded, toast, databasePicker } from './dom.js';
import { firestore, encodePath, project, live, currentDatabase, setCurrentDatabase, firestoreDatabases } from './api.js';

const PAGE = 50;
const TYPES = ['string', 'integer', 'double', 'boolean', 'null', 'timestamp', 'bytes', 'reference', 'geoPoint', 'array', 'map', 'vector'];

export async function render(root, args) {
  const segs = args.filter(s => s !== '');
  const isDoc = segs.length > 0 && segs.length % 2 === 0;
  const collPath = isDoc ? segs.slice(0, -1).join('/') : segs.join('/');
  const docPath = isDoc ? segs.join('/') : null;
  const parentDoc = collPath ? collPath.split('/').slice(0, -1).join('/') : '';
  const proj = await project();
  // The database shown: the one the rules view shows too (one choice for both pages).
  const db = currentDatabase();
  const href = p => '#/firestore/' + (p ? encodePath(p) : '');

  const colsPane = h('section', { class: 'panel', 'aria-label': 'Collections' });
  const docsPane = h('section', { class: 'panel', 'aria-label': 'Documents' });
  const docPane = h('section', { class: 'panel', 'aria-label': 'Document' });
  const crumbs = h('nav', { class: 'crumbs', 'aria-label': 'Path' }, h('a', { href: href('') }, `projects/${proj}/databases/${db}/documents`),
    segs.map((s, i) => [h('span', { class: 'muted' }, '/'), h('a', { href: href(segs.slice(0, i + 1).join('/')) }, s)]));
  const picker = h('div', { class: 'row' });
  fill(root, h('h1', {}, 'Firestore'), picker, crumbs, h('div', { class: 'grid cols3' }, colsPane, docsPane, docPane));
  // Another database starts at its root (the same path there may not exist).
  const pick = id => {
    setCurrentDatabase(id);
    if (location.hash === href('')) window.dispatchEvent(new HashChangeEvent('hashchange'));
    else location.hash = href('');
  };
  firestoreDatabases().then(list => fill(picker, databasePicker(list, db, pick, firestoreDatabases)), () => fill(picker, databasePicker([], db, pick, firestoreDatabases)));

  // Pages are documents.list pages with showMissing (each page token is a position), so any page of
  // a collection of any size is one indexed read of PAGE + 1 entries, and the documents that exist
  // only as parents of subcollections (`users/{uid}` above `files`) are listed too.
  const state = { tokens: [''], page: 0, docsSig: '', colsSig: '', docSig: '', dirty: false, editor: null };

  async function loadCollections() {
    const r = await firestore('POST', (parentDoc ? '/' + encodePath(parentDoc) : '') + ':listCollectionIds', { pageSize: 500 });
    const ids = r.collectionIds || [];
    const sig = ids.join('\n');
    if (sig === state.colsSig) return;
    state.colsSig = sig;
    const current = collPath.split('/').pop();
    fill(colsPane, h('h2', {}, parentDoc ? `Collections of ${parentDoc.split('/').pop()}` : 'Root collections'),
      ids.length ? h('ul', { class: 'list', id: 'collections' }, ids.map(id => h('li', { class: id === current ? 'sel' : '' },
        h('a', { href: href((parentDoc ? parentDoc + '/' : '') + id) }, id)))) : h('p', { class: 'muted' }, 'No collections yet.'),
      newCollectionForm(parentDoc, href), parentDoc ? null : groupForm());
  }

  // A collection group: every collection with this id at any depth (a runQuery with allDescendants).
  function groupForm() {
    const input = h('input', { id: 'group-id', placeholder: 'collection group id', 'aria-label': 'Collection group id', class: 'grow' });
    return h('form', { class: 'inline', onsubmit: e => { e.preventDefault(); showGroup(input.value.trim()); } },
      input, h('button', { type: 'submit' }, 'Collection group'));
  }

  async function showGroup(id) {
    if (!id) return;
    await guarded(async () => {
      const rows = await firestore('POST', ':runQuery', { structuredQuery: { from: [{ collectionId: id, allDescendants: true }], limit: 200 } });
      const docs = rows.filter(r => r.document).map(r => r.document);
      const prefix = `projects/${proj}/databases/${db}/documents/`;
      fill(docsPane, h('h2', {}, `Group: ${id}`), h('p', { class: 'muted' }, `${docs.length} document(s)${docs.length === 200 ? ' (the first 200)' : ''}`),
        h('ul', { class: 'list', id: 'group-documents' }, docs.map(d => {
          const path = d.name.slice(prefix.length);
          return h('li', {}, h('a', { href: href(path.split('/').map(decodeURIComponent).join('/')) }, path));
        })));
      state.docsSig = 'group';
    });
  }

  async function loadDocuments() {
    if (!collPath) { if (state.docsSig !== 'group') fill(docsPane, h('p', { class: 'muted' }, 'Pick a collection.')); return; }
    const token = state.tokens[state.page];
    const r = await firestore('GET', `/${encodePath(collPath)}?pageSize=${PAGE}&showMissing=true${token ? '&pageToken=' + encodeURIComponent(token) : ''}`);
    const docs = r.documents || [];
    const hasNext = !!r.nextPageToken;
    state.tokens[state.page + 1] = r.nextPageToken || '';
    const sig = docs.map(d => d.name + (d.updateTime || '')).join('\n') + '|' + hasNext;
    if (sig === state.docsSig) return;
    state.docsSig = sig;
    const selected = docPath ? docPath.split('/').pop() : null;
    const pager = h('div', { class: 'row' },
      h('button', { id: 'previous-page', disabled: state.page === 0, onclick: () => { state.page--; state.docsSig = ''; loadDocuments(); } }, '← Previous'),
      h('span', { class: 'muted' }, `page ${state.page + 1}`),
      h('button', { id: 'next-page', disabled: !hasNext, onclick: () => { state.page++; state.docsSig = ''; loadDocuments(); } }, 'Next →'));
    fill(docsPane, h('h2', {}, collPath.split('/').pop()),
      h('div', { class: 'row' },
        h('button', { class: 'primary', id: 'add-document', onclick: () => addDocument(collPath, href) }, '+ Add document')),
      docs.length ? h('ul', { class: 'list', id: 'documents' }, docs.map(d => {
        const id = decodeURIComponent(d.name.split('/').pop());
        return h('li', { class: id === selected ? 'sel' : '' },
          h('a', { href: href(collPath + '/' + id), title: d.createTime ? '' : 'no document here, only subcollections' },
            d.createTime ? id : h('i', { class: 'muted' }, id)));
      })) : h('p', { class: 'muted' }, 'No documents.'), pager);
  }

  async function loadDocument(force = false) {
    if (!docPath) { fill(docPane, h('p', { class: 'muted' }, collPath ? 'Pick a document.' : 'Pick or start a collection.')); return; }
    // batchGet answers `missing` for an absent document where get answers 404 (which the browser
    // would report as a failed load).
    const [answer] = await firestore('POST', ':batchGet', { documents: [`projects/${proj}/databases/${db}/documents/${docPath}`] });
    const doc = answer?.found || null;
    const sig = doc ? doc.updateTime : 'missing';
    if (!force && sig === state.docSig) return;
    if (!force && state.dirty) {
      if (!docPane.querySelector('.note.changed')) docPane.prepend(h('div', { class: 'note changed' }, 'This document changed on the server. ', h('button', { onclick: () => { state.dirty = false; loadDocument(true); } }, 'Reload')));
      return;
    }
    state.docSig = sig;
    state.dirty = false;
    const fields = doc ? doc.fields || {} : {};
    const editor = mapEditor(fields, () => { state.dirty = true; });
    state.editor = editor;
    const subs = await firestore('POST', '/' + encodePath(docPath) + ':listCollectionIds', { pageSize: 500 }).catch(() => ({}));
    fill(docPane,
      h('h2', {}, docPath.split('/').pop()),
      doc ? h('p', { class: 'muted mono' }, `created ${doc.createTime} · updated ${doc.updateTime}`) : h('p', { class: 'note' }, 'This document does not exist yet: Save creates it.'),
      h('form', { id: 'document-form', onsubmit: e => { e.preventDefault(); save(); } },
        h('div', { id: 'fields' }, editor.el),
        h('div', { class: 'row' },
          h('button', { type: 'button', id: 'add-field', onclick: () => { editor.addField(); state.dirty = true; } }, '+ Add field'),
          h('span', { class: 'grow' }),
          h('button', { type: 'submit', class: 'primary', id: 'save-document' }, 'Save'),
          doc ? h('button', { type: 'button', class: 'danger', id: 'delete-document', onclick: remove }, 'Delete document') : null)),
      h('h3', {}, 'Subcollections'),
      h('ul', { class: 'list', id: 'subcollections' }, (subs.collectionIds || []).map(id => h('li', {}, h('a', { href: href(docPath + '/' + id) }, id)))),
      newCollectionForm(docPath, href));
  }

  async function save() {
    await guarded(async () => {
      const fields = state.editor.get();
      await firestore('PATCH', '/' + encodePath(docPath), { fields });
      state.dirty = false;
      toast('Saved');
      state.docSig = '';
      state.docsSig = '';
      await Promise.all([loadDocument(true), loadDocuments(), loadCollections()]);
    });
  }

  async function remove() {
    if (!confirm(`Delete ${docPath}? (Its subcollections stay.)`)) return;
    await guarded(async () => {
      await firestore('DELETE', '/' + encodePath(docPath));
      toast('Deleted');
      location.hash = href(collPath);
    });
  }

  await Promise.all([loadCollections(), loadDocuments(), loadDocument(true)]);
  const all = () => Promise.all([loadCollections(), loadDocuments(), loadDocument()]).catch(() => {});
  // A burst of commits (an import, a batch) reloads each part once, shortly after.
  const later = new Map();
  const soon = fn => { if (!later.has(fn)) later.set(fn, setTimeout(() => { later.delete(fn); fn().catch(() => {}); }, 100)); };
  const database = `projects/${proj}/databases/${db}`;
  const changed = e => {
    if (e.change === 'cleared') { if (!e.database || e.database === database) soon(all); return; }
    if (e.database !== database) return;
    const segs = e.path.split('/');
    const coll = segs.slice(0, -1).join('/');
    if (coll === collPath) soon(loadDocuments);
    if (e.path === docPath) soon(loadDocument);
    // A first document in a new collection (or the last one gone) changes the collection list.
    if (e.change !== 'updated' && segs.slice(0, -2).join('/') === parentDoc) soon(loadCollections);
  };
  const stopLive = live({ topics: ['documents'], handlers: { document: changed }, poll: all, interval: 2000,
    resyncOnReconnect: true, resync: all });
  return () => { stopLive(); for (const t of later.values()) clearTimeout(t); };
}

function newCollectionForm(parent, href) {
  const input = h('input', { placeholder: 'collection id', 'aria-label': 'New collection id', required: true, class: 'grow' });
  return h('form', { class: 'inline', onsubmit: e => {
    e.preventDefault();
    const id = input.value.trim();
    if (id) location.hash = href((parent ? parent + '/' : '') + id);
  } }, input, h('button', { type: 'submit' }, parent ? '+ Subcollection' : '+ Start collection'));
}

async function addDocument(collPath, href) {
  const id = prompt('Document id (empty: an automatic id)');
  if (id === null) return;
  await guarded(async () => {
    const path = `/${encodePath(collPath)}` + (id.trim() ? `?documentId=${encodeURIComponent(id.trim())}` : '');
    const doc = await firestore('POST', path, { fields: {} });
    location.hash = href(collPath + '/' + decodeURIComponent(doc.name.split('/').pop()));
  });
}

// --- Value editors: each returns {el, get()} where get() is the Firestore REST Value JSON.

// A vector is the map {__type__: '__vector__', value: [numbers]} on the REST wire (as Firestore sends it).
function isVector(v) {
  const f = v.mapValue && v.mapValue.fields;
  return !!f && Object.keys(f).length === 2 && f.__type__ && f.__type__.stringValue === '__vector__' && 'arrayValue' in (f.value || {});
}

function typeOf(v) {
  if (isVector(v)) return 'vector';
  for (const t of TYPES) if ((t + 'Value') in v) return t;
  return 'null';
}

function defaultValue(type) {
  switch (type) {
    case 'string': return { stringValue: '' };
    case 'integer': return { integerValue: '0' };
    case 'double': return { doubleValue: 0 };
    case 'boolean': return { booleanValue: false };
    case 'timestamp': return { timestampValue: new Date().toISOString() };
    case 'bytes': return { bytesValue: '' };
    case 'reference': return { referenceValue: '' };
    case 'geoPoint': return { geoPointValue: { latitude: 0, longitude: 0 } };
    case 'array': return { arrayValue: {} };
    case 'map': return { mapValue: {} };
    case 'vector': return vectorValue([0]);
    default: return { nullValue: null };
  }
}

function vectorValue(numbers) {
  return { mapValue: { fields: { __type__: { stringValue: '__vector__' }, value: { arrayValue: { values: numbers.map(n => ({ doubleValue: n })) } } } } };
}

function valueEditor(value, onChange, label) {
  const wrap = h('div', { class: 'value' });
  let current = null;
  const select = h('select', { 'aria-label': `${label} type`, class: 'type' }, TYPES.map(t => h('option', { value: t }, t)));
  const build = v => {
    const type = typeOf(v);
    select.value = type;
    current = scalarOrNested(type, v, onChange, label);
    fill(wrap, h('div', { class: 'head' }, select, current.inline), current.block);
  };
  select.addEventListener('change', () => { build(defaultValue(select.value)); onChange(); });
  build(value);
  return { el: wrap, get: () => current.get() };
}

function scalarOrNested(type, v, onChange, label) {
  const input = (val, attrs = {}) => h('input', { value: val, 'aria-label': `${label} value`, oninput: onChange, class: 'grow', ...attrs });
  switch (type) {
    case 'string': {
      const s = v.stringValue;
      const el = s.includes('\n') || s.length > 80
        ? h('textarea', { rows: Math.min(8, s.split('\n').length + 1), 'aria-label': `${label} value`, oninput: onChange }, s)
        : input(s);
      return { inline: el, get: () => ({ stringValue: el.value }) };
    }
    case 'integer': {
      const el = input(String(v.integerValue), { inputmode: 'numeric', pattern: '-?[0-9]+' });
      return { inline: el, get: () => {
        if (!/^-?\d+$/.test(el.value.trim())) throw new Error(`${label}: an integer is digits, got '${el.value}'`);
        return { integerValue: el.value.trim() };
      } };
    }
    case 'double': {
      const el = input(String(v.doubleValue), { inputmode: 'decimal' });
      return { inline: el, get: () => {
        const t = el.value.trim();
        if (['NaN', 'Infinity', '-Infinity'].includes(t)) return { doubleValue: t };
        const n = Number(t);
        if (t === '' || Number.isNaN(n)) throw new Error(`${label}: not a number: '${el.value}'`);
        return { doubleValue: n };
      } };
    }
    case 'boolean': {
      const el = h('select', { 'aria-label': `${label} value`, onchange: onChange }, h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
      el.value = String(v.booleanValue);
      return { inline: el, get: () => ({ booleanValue: el.value === 'true' }) };
    }
    case 'timestamp': {
      const el = input(v.timestampValue, { placeholder: 'RFC 3339, e.g. 2030-01-01T00:00:00Z' });
      return { inline: el, get: () => ({ timestampValue: el.value.trim() }) };
    }
    case 'bytes': {
      const el = input(v.bytesValue, { placeholder: 'base64' });
      return { inline: el, get: () => ({ bytesValue: el.value.trim() }) };
    }
    case 'reference': {
      const el = input(v.referenceValue, { placeholder: 'projects/…/databases/(default)/documents/…' });
      return { inline: el, get: () => ({ referenceValue: el.value.trim() }) };
    }
    case 'geoPoint': {
      const lat = input(String(v.geoPointValue.latitude ?? 0), { 'aria-label': `${label} latitude`, inputmode: 'decimal' });
      const lng = input(String(v.geoPointValue.longitude ?? 0), { 'aria-label': `${label} longitude`, inputmode: 'decimal' });
      return { inline: h('span', { class: 'row grow' }, 'lat', lat, 'lng', lng),
        get: () => ({ geoPointValue: { latitude: Number(lat.value), longitude: Number(lng.value) } }) };
    }
    case 'array': {
      const ed = arrayEditor(v.arrayValue.values || [], onChange, label);
      return { inline: h('span', { class: 'muted' }, ed.summary), block: ed.el, get: () => ({ arrayValue: { values: ed.get() } }) };
    }
    case 'map': {
      const ed = mapEditor(v.mapValue.fields || {}, onChange, label);
      return { inline: h('button', { type: 'button', onclick: () => { ed.addField(); onChange(); } }, '+ field'), block: h('div', { class: 'nested' }, ed.el),
        get: () => ({ mapValue: { fields: ed.get() } }) };
    }
    case 'vector': {
      const nums = (v.mapValue.fields.value.arrayValue.values || []).map(x => String(x.doubleValue ?? x.integerValue));
      const el = input(nums.join(', '), { placeholder: 'numbers, comma-separated', inputmode: 'decimal' });
      return { inline: el, get: () => {
        const parts = el.value.split(',').map(t => t.trim()).filter(t => t !== '');
        const numbers = parts.map(Number);
        if (parts.length === 0 || numbers.some(Number.isNaN)) throw new Error(`${label}: a vector is one or more numbers, got '${el.value}'`);
        return vectorValue(numbers);
      } };
    }
    default:
      return { inline: h('span', { class: 'muted' }, 'null'), get: () => ({ nullValue: null }) };
  }
}

function arrayEditor(values, onChange, label) {
  const list = h('div', { class: 'nested' });
  const items = [];
  const add = v => {
    const row = h('div', { class: 'field' });
    const item = { row, ed: valueEditor(v, onChange, `${label}[${items.length}]`) };
    fill(row, h('span', { class: 'mono muted' }, '•'), item.ed.el,
      h('button', { type: 'button', class: 'danger', 'aria-label': 'Remove element', onclick: () => { items.splice(items.indexOf(item), 1); row.remove(); onChange(); } }, '✕'));
    items.push(item);
    list.append(row);
  };
  values.forEach(add);
  const el = h('div', {}, list, h('button', { type: 'button', onclick: () => { add({ stringValue: '' }); onChange(); } }, '+ element'));
  return { el, summary: `${values.length} element${values.length === 1 ? '' : 's'}`, get: () => items.map(i => i.ed.get()) };
}

/** The fields of a document or map: key inputs with value editors. */
export function mapEditor(fields, onChange, label = '') {
  const el = h('div', { class: 'map' });
  const rows = [];
  const add = (key, v) => {
    const keyInput = h('input', { class: 'key', value: key, 'aria-label': 'Field name', placeholder: 'field', oninput: onChange });
    const row = h('div', { class: 'field' });
    const entry = { row, keyInput, ed: valueEditor(v, onChange, (label ? label + '.' : '') + (key || 'new field')) };
    fill(row, keyInput, entry.ed.el,
      h('button', { type: 'button', class: 'danger', 'aria-label': `Delete field ${key}`, title: 'Delete field', onclick: () => { rows.splice(rows.indexOf(entry), 1); row.remove(); onChange(); } }, '✕'));
    rows.push(entry);
    el.append(row);
    return keyInput;
  };
  for (const k of Object.keys(fields).sort()) add(k, fields[k]);
  return {
    el,
    addField: () => add('', { stringValue: '' }).focus(),
    get: () => {
      const out = {};
      for (const r of rows) {
        const k = r.keyInput.value.trim();
        if (!k) throw new Error('A field needs a name');
        if (k in out) throw new Error(`Field '${k}' appears twice`);
        out[k] = r.ed.get();
      }
      return out;
    },
  };
}

"""#
}

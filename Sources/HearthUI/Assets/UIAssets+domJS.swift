// The UI's `dom.js`, served at `/ui/dom.js` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let domJS = #"""
// Tiny DOM helpers: every text goes in as text (never as HTML), so stored data cannot inject markup.

/** h('div', {class: 'x', onclick: f}, 'text', child, [more]) → element. */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A transient message in the corner (errors stay longer). */
export function toast(message, bad = false) {
  const t = h('div', { class: 'toast' + (bad ? ' bad' : '') }, message);
  document.getElementById('toasts').append(t);
  setTimeout(() => t.remove(), bad ? 8000 : 3000);
}

/** Runs an async action from a button, showing its error instead of throwing. */
export async function guarded(fn) {
  try { return await fn(); } catch (e) { toast(e.message || String(e), true); return undefined; }
}

/** Source text as numbered lines; `classes(lineNo)` adds classes per line. */
export function codeView(text, classes = () => '', titles = () => '') {
  const lines = text.split('\n');
  return h('div', { class: 'code' }, lines.map((line, i) => {
    const n = i + 1;
    return h('div', { class: ('ln ' + classes(n)).trim(), 'data-line': n, title: titles(n) || null },
      h('span', { class: 'no' }, n), h('span', { class: 'src' }, line || ' '));
  }));
}

/** A line diff (LCS) of two texts, as a code view with - and + lines. */
export function diffView(left, right) {
  const a = left.split('\n'), b = right.split('\n');
  const n = a.length, m = b.length;
  const dp = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { out.push([' ', a[i]]); i++; j++; }
    else if (i < n && (j === m || dp[i + 1][j] >= dp[i][j + 1])) { out.push(['-', a[i]]); i++; }
    else { out.push(['+', b[j]]); j++; }
  }
  return h('div', { class: 'code diff' }, out.map(([s, line]) =>
    h('div', { class: 'ln' + (s === '-' ? ' del' : s === '+' ? ' add' : '') },
      h('span', { class: 'sign' }, s), h('span', { class: 'src' }, line || ' '))));
}

/**
 * The database picker of the data browser and the rules view (`databases` from the hub; the
 * current one listed even when it holds nothing yet). `onPick(id)` runs with the chosen id; the
 * last option asks for another database's id. With `reload` (a function answering the list
 * again), the list is read again each time the picker gets focus: a database written to since the
 * page was drawn is then offered too.
 */
export function databasePicker(databases, current, onPick, reload) {
  const select = h('select', { id: 'database-select', 'aria-label': 'Database' });
  const options = list => {
    const ids = list.map(d => d.database);
    if (!ids.includes(current)) ids.push(current);
    const label = id => {
      const d = list.find(x => x.database === id);
      const notes = [d?.ownRules ? 'own rules' : null, d && !d.hasDocuments ? 'no documents' : null].filter(Boolean);
      return notes.length ? `${id} (${notes.join(', ')})` : id;
    };
    fill(select, ids.map(id => h('option', { value: id }, label(id))), h('option', { value: '' }, 'Another database…'));
    select.value = current;
  };
  options(databases);
  if (reload) select.addEventListener('focus', () => reload().then(options, () => { /* keep the list shown */ }));
  select.addEventListener('change', () => {
    let id = select.value;
    if (!id) {
      id = (prompt('Database id (letters, digits, "-", "_", ".")') || '').trim();
      if (!id) { select.value = current; return; }
    }
    onPick(id);
  });
  return h('label', { class: 'database-picker' }, 'Database ', select);
}

export function statusBadge(status) {
  return h('span', { class: 'badge s' + String(status)[0] }, status);
}

export function fmtTime(iso) {
  if (!iso) return '';
  return iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '');
}

"""#
}

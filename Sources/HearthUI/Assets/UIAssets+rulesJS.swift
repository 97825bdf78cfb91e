// The UI's `rules.js`, served at `/ui/rules.js` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let rulesJS = #"""
// The rules Firestore enforces on one database (its own, else the project's, else the file's),
// with coverage as a heat map, an editor that loads new rules for that database or the project,
// and a playground judging one request with the same engine through the rules test API.
import { h, fill, guarded, toast, codeView, databasePicker } from './dom.js';
import { hub, firestoreEmulator, project, hearthStatus, firestoreDatabases, currentDatabase, setCurrentDatabase } from './api.js';

export async function render(root) {
  const proj = await project();
  const database = currentDatabase();
  // The per-database paths answer the rules judging that database, and their coverage.
  const [current, coverage, databases, status] = await Promise.all([
    firestoreEmulator('GET', 'securityRules', undefined, database),
    firestoreEmulator('GET', 'ruleCoverage', undefined, database).catch(() => ({})),
    firestoreDatabases(), hearthStatus()]);
  const info = databases.find(d => d.database === database) || { database, ownRules: false, hasDocuments: false, rules: { from: 'unknown' } };
  const file = current.rules?.files?.[0];
  const source = file?.content ?? '';
  const sourcePane = h('section', { class: 'panel', 'aria-label': 'Loaded rules' });
  const editor = h('textarea', { id: 'rules-editor', rows: 18, spellcheck: 'false', 'aria-label': 'Rules source' }, source);
  const issues = h('div', { id: 'rules-issues' });
  // Where a load goes: this database alone, or the project (every database without rules of its
  // own). A named database, or one with rules of its own, loads its own by default.
  const target = h('select', { id: 'rules-target', 'aria-label': 'Load the rules for' },
    h('option', { value: 'database', title: `Rules of ${database} alone` }, `${database} only`),
    h('option', { value: 'project', title: 'The project: every database without rules of its own' }, 'the project'));
  target.value = database !== '(default)' || info.ownRules ? 'database' : 'project';
  const play = playground(proj, database, () => editor.value);
  const pick = databasePicker(databases, database, id => { setCurrentDatabase(id); render(root); }, firestoreDatabases);
  fill(root, h('h1', {}, 'Rules'),
    h('div', { class: 'row' }, pick, h('p', { id: 'rules-judge', class: 'grow' }, judgedBy(info, status, proj))),
    h('div', { class: 'grid cols2' },
      sourcePane,
      h('section', { class: 'panel', 'aria-label': 'Edit and test' },
        h('h2', {}, 'Playground'), play,
        h('h2', {}, 'Edit'), editor, issues,
        h('div', { class: 'row' },
          h('button', { id: 'rules-check', onclick: () => check() }, 'Check'),
          h('label', {}, 'for ', target),
          h('button', { class: 'primary', id: 'rules-load', onclick: () => load() }, 'Load into Firestore')))));
  showSource();

  function showSource(problems = []) {
    // Heat: how often each line's expressions were evaluated since start (or the last load).
    const heat = new Map();
    const walk = reports => {
      for (const r of reports || []) {
        const line = r.sourcePosition?.line;
        const count = (r.values || []).reduce((s, v) => s + (v.count || 0), 0);
        const err = (r.values || []).some(v => v.error);
        if (line) { const c = heat.get(line) || { n: 0, err: false, seen: true }; c.n = Math.max(c.n, count); c.err ||= err; heat.set(line, c); }
        walk(r.children);
      }
    };
    walk(coverage.report);
    const bad = new Map(problems.map(p => [p.sourcePosition?.line, p.description]));
    const cls = n => bad.has(n) ? 'issue' : !heat.has(n) ? '' : heat.get(n).err ? 'heatx' : heat.get(n).n === 0 ? 'heat0' : heat.get(n).n < 5 ? 'heat1' : heat.get(n).n < 50 ? 'heat2' : 'heat3';
    const title = n => bad.get(n) || (heat.has(n) ? `evaluated ${heat.get(n).n} time(s)${heat.get(n).err ? ', with errors' : ''}` : '');
    const shared = info.rules.from !== 'database' && file ? ' (shared: every database judged by these rules is counted together)' : '';
    fill(sourcePane, h('h2', {}, file ? `Judging ${database}: ${file.name}` : info.rules.state === 'denied' ? `No rules judge ${database}: every request is denied` : `No rules loaded for ${database} (every request is allowed)`),
      h('p', { class: 'muted' }, `Coverage since the rules were loaded${shared}: `, h('span', { class: 'badge heat0' }, 'never'), ' ', h('span', { class: 'badge heat1' }, '1–4'), ' ',
        h('span', { class: 'badge heat2' }, '5–49'), ' ', h('span', { class: 'badge heat3' }, '50+'), ' ', h('span', { class: 'badge heatx' }, 'errors'), ' evaluations'),
      h('div', { id: 'rules-source' }, (() => { const c = codeView(source, cls, title); c.classList.add('tall'); return c; })()));
  }
  function showIssues(list, text = editor.value) {
    const lines = new Map(list.map(i => [i.sourcePosition?.line, `${i.severity}: ${i.description}`]));
    fill(issues, list.length ? [h('div', { class: 'error', id: 'rules-errors' }, list.map(i => `${i.severity} line ${i.sourcePosition?.line}:${i.sourcePosition?.column} ${i.description}`).join('\n')),
      (() => { const c = codeView(text, n => lines.has(n) ? 'issue' : '', n => lines.get(n)); c.classList.add('tall'); return c; })()]
      : h('p', { class: 'allow' }, 'Compiles without issues.'));
  }
  // The rules file hearth enforces may have been edited into something that does not compile
  // (the last good rules stay loaded): the test API without a source compiles that file. It
  // matters only where the file's rules judge this database.
  if (status.rules?.mode === 'file' && info.rules.from === 'file') hub('POST', `/v1/projects/${proj}:test`, { testSuite: { testCases: [] } }).then(r => {
    if ((r.issues || []).some(i => i.severity === 'ERROR')) {
      sourcePane.prepend(h('div', { class: 'error' }, 'The rules file does not compile; the last good rules shown here stay in force:\n' +
        r.issues.map(i => `line ${i.sourcePosition?.line}:${i.sourcePosition?.column} ${i.description}`).join('\n')));
    }
  }, () => { /* rules given as open or shipped: nothing to check */ });
  async function check() {
    await guarded(async () => {
      const r = await hub('POST', `/v1/projects/${proj}:test`, { source: { files: [{ name: file?.name || 'firestore.rules', content: editor.value }] }, testSuite: { testCases: [] } });
      showIssues(r.issues || []);
    });
  }
  async function load() {
    await guarded(async () => {
      const files = [{ name: file?.name || 'firestore.rules', content: editor.value }];
      // Rules that do not compile are refused with a 400, as the official emulator refuses them:
      // check first, so that their errors are marked in the source instead of a bare message.
      const checked = await hub('POST', `/v1/projects/${proj}:test`, { source: { files }, testSuite: { testCases: [] } });
      if ((checked.issues || []).some(i => i.severity === 'ERROR')) { showIssues(checked.issues); return; }
      const forDatabase = target.value === 'database';
      let r;
      try {
        r = await firestoreEmulator('PUT', 'securityRules', { rules: { files } }, forDatabase ? database : undefined);
      } catch (e) {
        // Refused all the same (nothing installed): its `L<line>:<column> <description>` lines, marked.
        const refused = compileErrors(e);
        if (!refused.length) throw e;
        showIssues(refused);
        return;
      }
      showIssues(r.issues || []);
      toast(forDatabase ? `Rules loaded for database ${database}` : `Rules loaded for project ${proj}`); render(root);
    });
  }
}

/** The errors of a refused load (400 "Error compiling rules:" and a line `L<line>:<column> <description>` each). */
function compileErrors(e) {
  let message = '';
  try { message = JSON.parse(e.body).error.message || ''; } catch { return []; }
  return [...message.matchAll(/^L(\d+):(\d+) (.*)$/gm)].map(m => ({ severity: 'ERROR', description: m[3], sourcePosition: { line: Number(m[1]), column: Number(m[2]) } }));
}

/** Which rules judge the database's requests, and where they come from. */
function judgedBy(info, status, proj) {
  const db = info.database;
  const r = info.rules;
  const name = r.fileName ? ` (${r.fileName})` : '';
  const state = r.state === 'open' ? ': none, every request is allowed' : r.state === 'denied' ? `: they never compiled, every request is denied (${r.message})` : '';
  switch (r.from) {
    case 'database': return `Requests to ${db} are judged by its own rules${name}, loaded for this database alone${state}.`;
    case 'project': return `Requests to ${db} are judged by the project's rules${name}, loaded for every database of ${proj} without rules of its own${state}.`;
    case 'file': return `Requests to ${db} are judged by the rules file ${r.path || status.rules?.path || ''} (reloaded when it changes), as every database without rules of its own${state}.`;
    case 'configured': return `Requests to ${db} are judged by the ${status.rules?.mode === 'shipped' ? 'shipped rules built into hearth' : 'rules hearth started with'}${name}, as every database without rules of its own${state}.`;
    case 'none': return `Requests to ${db} are judged by no rules: every request is allowed (${status.rules?.mode === 'open' ? '--rules open' : 'no rules configured'}).`;
    default: return `Requests to ${db}: ${JSON.stringify(r)}`;
  }
}

function playground(proj, database, sourceOf) {
  const method = h('select', { id: 'play-method', 'aria-label': 'Method' }, ['get', 'list', 'create', 'update', 'delete'].map(m => h('option', { value: m }, m)));
  const path = h('input', { id: 'play-path', value: 'users/alice/files/f1', 'aria-label': 'Document path', class: 'grow' });
  const uid = h('input', { id: 'play-uid', placeholder: 'uid (empty: signed out)', 'aria-label': 'User id', size: 14 });
  const token = h('textarea', { id: 'play-token', rows: 2, placeholder: 'token claims JSON, e.g. {"email_verified": true}', 'aria-label': 'Token claims' });
  const data = h('textarea', { id: 'play-data', rows: 3, placeholder: 'request.resource.data JSON (create/update)', 'aria-label': 'Request data' });
  const existing = h('textarea', { id: 'play-existing', rows: 3, placeholder: 'resource.data JSON of the stored document (empty: none)', 'aria-label': 'Existing data' });
  const time = h('input', { id: 'play-time', placeholder: 'time (default: the emulator clock)', 'aria-label': 'Time', class: 'grow' });
  const out = h('div', { id: 'play-result', 'aria-live': 'polite' });
  const parse = (el, what) => { if (!el.value.trim()) return undefined; try { return JSON.parse(el.value); } catch (e) { throw new Error(`${what}: ${e.message}`); } };
  async function run() {
    await guarded(async () => {
      const p = `/databases/${database}/documents/` + path.value.trim().replace(/^\/+/, '');
      const request = { method: method.value, path: p, time: time.value.trim() || (await hub('GET', '/emulator/v1/clock')).now };
      request.auth = uid.value.trim() ? { uid: uid.value.trim(), token: { sub: uid.value.trim(), user_id: uid.value.trim(), ...(parse(token, 'Token claims') || {}) } } : null;
      const d = parse(data, 'Request data');
      if (d) request.resource = { data: d };
      const testCase = { expectation: 'ALLOW', request, expressionReportLevel: 'VISITED' };
      const ex = parse(existing, 'Existing data');
      if (ex) testCase.resource = { data: ex };
      const r = await hub('POST', `/v1/projects/${proj}:test`, { source: { files: [{ name: 'firestore.rules', content: sourceOf() }] }, testSuite: { testCases: [testCase] } });
      if (r.issues?.some(i => i.severity === 'ERROR')) { fill(out, h('div', { class: 'error' }, r.issues.map(i => `line ${i.sourcePosition.line}: ${i.description}`).join('\n'))); return; }
      const res = r.testResults[0];
      const allowed = res.state === 'SUCCESS';
      const lines = new Set((res.visitedExpressions || []).filter(v => v.value === false || v.value === undefined).map(v => v.sourcePosition.line));
      if (res.errorPosition) lines.add(res.errorPosition.line);
      const hits = new Set((res.visitedExpressions || []).filter(v => v.value === true).map(v => v.sourcePosition.line));
      const code = codeView(sourceOf(), n => hits.has(n) ? 'heat2' : lines.has(n) ? 'fail' : '');
      code.classList.add('tall');
      fill(out, h('p', {}, h('span', { class: allowed ? 'allow' : 'deny', id: 'play-verdict' }, allowed ? 'ALLOW' : 'DENY'), ` ${method.value} ${p}`),
        (res.debugMessages || []).length ? h('pre', { class: 'wrap' }, res.debugMessages.join('\n')) : null,
        (res.visitedExpressions || []).length ? h('ul', {}, res.visitedExpressions.map(v => h('li', { class: 'mono' }, `line ${v.sourcePosition.line}: ${v.value === undefined ? 'error' : JSON.stringify(v.value)}`))) : h('p', { class: 'muted' }, 'No allow statement matched this path.'),
        code);
      const first = code.querySelector('.fail') || code.querySelector('.heat2');
      if (first) code.scrollTop = first.offsetTop - 24;
    });
  }
  return h('form', { id: 'playground', onsubmit: e => { e.preventDefault(); run(); } },
    h('div', { class: 'row' }, method, path),
    h('div', { class: 'row' }, uid, time),
    token, data, existing,
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary', id: 'play-run' }, 'Decide')), out);
}

"""#
}

// The UI's `s3.js`, served at `/ui/s3.js` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let s3JS = #"""
// S3 buckets and objects through the S3 API itself (SigV4 signed in the page), presigned URLs
// through the hub's presign endpoint. Route: #/s3/<bucket>/<prefix…>
import { h, fill, guarded, toast } from './dom.js';
import { s3, s3xml, xmlText, hub } from './api.js';

export async function render(root, args) {
  const bucket = args[0] || '';
  const prefix = args.slice(1).join('/');
  const href = (b, p = '') => '#/s3/' + (b ? encodeURIComponent(b) + (p ? '/' + p.split('/').map(encodeURIComponent).join('/') : '') : '');
  const bucketsPane = h('section', { class: 'panel', 'aria-label': 'Buckets' });
  const objectsPane = h('section', { class: 'panel', 'aria-label': 'Objects' });
  const objectPane = h('section', { class: 'panel', id: 'object-detail', 'aria-label': 'Object' }, h('p', { class: 'muted' }, bucket ? 'Pick an object.' : 'Pick a bucket.'));
  fill(root, h('h1', {}, 'S3'), h('div', { class: 'grid cols3' }, bucketsPane, objectsPane, objectPane));

  const doc = await s3xml('GET', '/');
  const names = [...doc.getElementsByTagName('Bucket')].map(b => xmlText(b, 'Name'));
  const newBucket = h('input', { placeholder: 'new-bucket', 'aria-label': 'New bucket name', class: 'grow', required: true });
  fill(bucketsPane, h('h2', {}, 'Buckets'),
    h('ul', { class: 'list', id: 'buckets' }, names.map(n => h('li', { class: n === bucket ? 'sel' : '' }, h('a', { href: href(n) }, n)))),
    h('form', { class: 'inline', onsubmit: e => { e.preventDefault(); guarded(async () => { await s3('PUT', '/' + newBucket.value.trim()); location.hash = href(newBucket.value.trim()); }); } },
      newBucket, h('button', { type: 'submit' }, '+ Bucket')));
  if (!bucket) { fill(objectsPane, h('p', { class: 'muted' }, 'Pick a bucket.')); return; }

  let token = '';
  const list = h('tbody', { id: 'objects-body' });
  const more = h('button', { onclick: () => page() }, 'More');
  const file = h('input', { type: 'file', id: 'upload-file', 'aria-label': 'File to upload' });
  const crumbs = prefix.split('/').filter(Boolean);
  fill(objectsPane,
    h('nav', { class: 'crumbs', 'aria-label': 'Prefix' }, h('a', { href: href(bucket) }, bucket), crumbs.map((c, i) => [h('span', { class: 'muted' }, '/'), h('a', { href: href(bucket, crumbs.slice(0, i + 1).join('/') + '/') }, c)])),
    h('form', { class: 'inline', onsubmit: e => { e.preventDefault(); upload(); } }, file, h('button', { type: 'submit', class: 'primary' }, 'Upload here')),
    h('div', { class: 'scroll' }, h('table', { id: 'objects' }, h('thead', {}, h('tr', {}, h('th', {}, 'Key'), h('th', {}, 'Size'), h('th', { class: 'hide-narrow' }, 'Modified'))), list)),
    h('div', { class: 'row' }, more));

  async function page() {
    await guarded(async () => {
      const q = { 'list-type': '2', delimiter: '/', 'max-keys': '200' };
      if (prefix) q.prefix = prefix;
      if (token) q['continuation-token'] = token;
      const x = await s3xml('GET', '/' + bucket, { query: q });
      for (const p of x.getElementsByTagName('CommonPrefixes')) {
        const pf = xmlText(p, 'Prefix');
        list.append(h('tr', {}, h('td', { colspan: 3 }, h('a', { href: href(bucket, pf) }, '📁 ' + pf.slice(prefix.length)))));
      }
      for (const c of x.getElementsByTagName('Contents')) {
        const key = xmlText(c, 'Key');
        list.append(h('tr', { 'data-key': key }, h('td', {}, h('button', { class: 'link', onclick: () => showObject(key) }, key.slice(prefix.length))),
          h('td', {}, size(Number(xmlText(c, 'Size')))), h('td', { class: 'hide-narrow mono' }, xmlText(c, 'LastModified').replace('T', ' ').replace(/\.\d+Z$/, ''))));
      }
      token = xmlText(x, 'NextContinuationToken');
      more.disabled = !token;
      if (!list.children.length) list.append(h('tr', {}, h('td', { colspan: 3, class: 'muted' }, 'Empty.')));
    });
  }
  async function upload() {
    const f = file.files[0];
    if (!f) { toast('Choose a file first', true); return; }
    await guarded(async () => {
      await s3('PUT', `/${bucket}/${prefix}${f.name}`, { body: f, contentType: f.type || 'application/octet-stream' });
      toast(`Uploaded ${prefix}${f.name}`);
      list.replaceChildren(); token = ''; await page();
    });
  }
  async function showObject(key) {
    await guarded(async () => {
      const res = await s3('HEAD', `/${bucket}/${key}`);
      const meta = [...res.headers.entries()].filter(([k]) => k.startsWith('x-amz-meta-') || ['content-type', 'content-length', 'etag', 'last-modified', 'x-amz-version-id', 'cache-control', 'content-disposition'].includes(k));
      const method = h('select', { 'aria-label': 'Method', id: 'presign-method' }, h('option', { value: 'GET' }, 'GET'), h('option', { value: 'PUT' }, 'PUT'));
      const expires = h('input', { type: 'number', value: '900', min: '1', max: '604800', 'aria-label': 'Expires (seconds)', id: 'presign-expires', size: 7 });
      const ctype = h('input', { placeholder: 'Content-Type to sign (PUT)', 'aria-label': 'Content-Type', id: 'presign-type', class: 'grow' });
      const out = h('div', {});
      const versions = await s3xml('GET', '/' + bucket, { query: { versions: '', prefix: key } }).catch(() => null);
      const vs = versions ? [...versions.getElementsByTagName('Version'), ...versions.getElementsByTagName('DeleteMarker')]
        .filter(v => xmlText(v, 'Key') === key) : [];
      fill(objectPane, h('h2', {}, key.split('/').pop()), h('p', { class: 'mono muted' }, `s3://${bucket}/${key}`),
        h('dl', { class: 'kv' }, meta.map(([k, v]) => [h('dt', {}, k), h('dd', { class: 'mono' }, v)])),
        h('div', { class: 'row' },
          h('button', { class: 'primary', onclick: () => download(key) }, 'Download'),
          h('button', { class: 'danger', id: 'delete-object', onclick: () => remove(key) }, 'Delete')),
        vs.length > 1 || (vs[0] && xmlText(vs[0], 'VersionId') !== 'null') ? [h('h3', {}, 'Versions'), h('div', { class: 'scroll' }, h('table', { id: 'versions' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Version id'), h('th', {}, 'Size'), h('th', {}, 'Modified'), h('th', {}, ''))),
          h('tbody', {}, vs.map(v => h('tr', {}, h('td', { class: 'mono' }, xmlText(v, 'VersionId')),
            h('td', {}, v.tagName === 'DeleteMarker' ? 'delete marker' : size(Number(xmlText(v, 'Size')))),
            h('td', { class: 'mono' }, xmlText(v, 'LastModified').replace('T', ' ').replace(/\.\d+Z$/, '')),
            h('td', {}, xmlText(v, 'IsLatest') === 'true' ? 'latest' : ''))))))] : null,
        h('h3', {}, 'Presigned URL'),
        h('form', { class: 'inline', onsubmit: e => { e.preventDefault(); presign(key, method.value, Number(expires.value), ctype.value.trim(), out); } },
          method, expires, ctype, h('button', { type: 'submit', id: 'presign' }, 'Presign')), out);
    });
  }
  async function download(key) {
    await guarded(async () => {
      const r = await hub('POST', '/emulator/v1/s3/presign', { method: 'GET', bucket, key, expiresSeconds: 300 });
      const a = h('a', { href: r.url, download: key.split('/').pop() });
      document.body.append(a); a.click(); a.remove();
    });
  }
  async function presign(key, method, expiresSeconds, contentType, out) {
    await guarded(async () => {
      const body = { method, bucket, key, expiresSeconds };
      if (contentType) body.headers = { 'content-type': contentType };
      const r = await hub('POST', '/emulator/v1/s3/presign', body);
      const curl = method === 'PUT' ? `curl -X PUT${contentType ? ` -H 'Content-Type: ${contentType}'` : ''} --data-binary @FILE '${r.url}'` : `curl '${r.url}'`;
      fill(out, h('pre', { class: 'wrap', id: 'presigned-url' }, r.url), h('pre', { class: 'wrap' }, curl),
        h('button', { onclick: () => navigator.clipboard.writeText(r.url).then(() => toast('Copied')) }, 'Copy URL'));
    });
  }
  async function remove(key) {
    if (!confirm(`Delete s3://${bucket}/${key}?`)) return;
    await guarded(async () => {
      await s3('DELETE', `/${bucket}/${key}`);
      toast('Deleted');
      fill(objectPane, h('p', { class: 'muted' }, 'Deleted.'));
      list.replaceChildren(); token = ''; await page();
    });
  }
  await page();
}

function size(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1 << 30) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  return `${(n / (1 << 30)).toFixed(2)} GiB`;
}

"""#
}

// The UI's `clock.js`, served at `/ui/clock.js` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let clockJS = #"""
import { h, fill, guarded, toast } from './dom.js';
import { hub } from './api.js';
import { refreshClock } from './app.js';

export async function render(root) {
  const now = h('div', { class: 'card' });
  const facts = h('div', { class: 'panel' });
  const at = h('input', { id: 'freeze-at', type: 'text', placeholder: '2030-01-01T00:00:00Z', 'aria-label': 'Freeze at (RFC 3339)' });
  const secs = h('input', { id: 'advance-seconds', type: 'number', value: '3600', 'aria-label': 'Seconds to advance', class: 'grow' });
  const put = body => guarded(async () => { await hub('PUT', '/emulator/v1/clock', body); await show(); refreshClock(); toast('Clock updated'); });
  fill(root, h('h1', {}, 'Clock'),
    h('p', { class: 'muted' }, 'Every service reads this one clock: ID token iat/exp, presigned URL expiry, S3 clock skew, request.time in rules, server timestamps.'),
    now,
    h('div', { class: 'grid cols2' },
      h('section', { class: 'panel' }, h('h2', {}, 'Move it'),
        h('div', { class: 'row' },
          h('button', { id: 'clock-freeze', onclick: () => put({ mode: 'frozen' }) }, 'Freeze now'),
          h('button', { id: 'clock-release', onclick: () => put({ mode: 'system' }) }, 'Release (system time)')),
        h('div', { class: 'row' }, 'Advance:',
          h('button', { onclick: () => put({ advanceSeconds: 60 }) }, '+1 min'),
          h('button', { onclick: () => put({ advanceSeconds: 3600 }) }, '+1 h'),
          h('button', { onclick: () => put({ advanceSeconds: 86400 }) }, '+1 day')),
        h('form', { class: 'inline', onsubmit: e => { e.preventDefault(); put({ advanceSeconds: Number(secs.value) }); } },
          h('label', { class: 'grow' }, 'Seconds', secs), h('button', { id: 'clock-advance', type: 'submit' }, 'Advance')),
        h('form', { class: 'inline', onsubmit: e => { e.preventDefault(); put({ frozenAt: at.value.trim() }); } },
          h('label', { class: 'grow' }, 'Freeze at', at), h('button', { type: 'submit' }, 'Set'))),
      facts));
  async function show() {
    const c = await hub('GET', '/emulator/v1/clock');
    const t = Date.parse(c.now);
    const iso = ms => new Date(ms).toISOString().replace('.000', '');
    fill(now, h('div', { class: 'n mono', id: 'clock-now' }, c.now),
      h('div', { class: 'muted', id: 'clock-mode' }, c.mode === 'frozen' ? 'frozen' : `system time${c.offsetSeconds ? ` ${c.offsetSeconds > 0 ? '+' : ''}${c.offsetSeconds} s` : ''}`));
    fill(facts, h('h2', {}, 'Consequences'), h('dl', { class: 'kv' },
      h('dt', {}, 'ID token minted now'), h('dd', {}, `expires ${iso(t + 3600e3)} (1 h)`),
      h('dt', {}, 'A token minted 1 h ago'), h('dd', {}, 'has expired: clients must refresh'),
      h('dt', {}, 'Presigned URL (15 min)'), h('dd', {}, `expires ${iso(t + 900e3)}`),
      h('dt', {}, 'S3 signatures'), h('dd', {}, `accepted when signed within 15 min of ${iso(t)}`),
      h('dt', {}, 'Moving the clock back'), h('dd', {}, 'tokens minted "later" come from the future and are refused: sign in again')));
  }
  await show();
  const timer = setInterval(() => show().catch(() => {}), 1000);
  return () => clearInterval(timer);
}

"""#
}

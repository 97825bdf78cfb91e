// The UI's `app.css`, served at `/ui/app.css` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let appCSS = #"""
:root {
  --bg: #faf8f5; --panel: #ffffff; --ink: #1f1a14; --muted: #6b6157; --line: #e4ddd3;
  --accent: #c2570c; --accent-ink: #ffffff; --ok: #1b7f3a; --bad: #b42318; --warn: #9a6700;
  --hl: #fff1c2; --hl-bad: #fde2df; --hl-ok: #e3f5e8; --code: #f3efe9;
  --mono: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
}
* { box-sizing: border-box; }
html, body { margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
a { color: var(--accent); }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 8px; top: 8px; background: var(--panel); padding: 6px; z-index: 10; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.top { display: flex; align-items: center; gap: 16px; padding: 8px 16px; background: #2b2118; color: #fff;
  position: sticky; top: 0; z-index: 5; flex-wrap: wrap; }
.brand { color: #fff; font-weight: 700; font-size: 16px; text-decoration: none; display: flex; gap: 6px; align-items: center; }
#nav { display: flex; gap: 2px; flex: 1; overflow-x: auto; }
#nav a { color: #e8dccf; text-decoration: none; padding: 6px 10px; border-radius: 6px; white-space: nowrap; }
#nav a[aria-current="page"] { background: #4a3a2b; color: #fff; }
#nav a:hover { background: #3a2d21; }
.topclock { color: #ffd166; font-family: var(--mono); font-size: 12px; text-decoration: none; white-space: nowrap; }
main { padding: 16px; max-width: 1600px; margin: 0 auto; }
main:focus { outline: none; }
h1 { font-size: 20px; margin: 4px 0 12px; }
h2 { font-size: 16px; margin: 16px 0 8px; }
h3 { font-size: 14px; margin: 12px 0 6px; }
.muted { color: var(--muted); }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px; min-width: 0; }
.grid { display: grid; gap: 12px; }
.cols2 { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
.cols2.wide-right { grid-template-columns: minmax(0, 1fr) minmax(0, 1.25fr); }
.cols3 { grid-template-columns: minmax(160px, 1fr) minmax(200px, 1.3fr) minmax(0, 2.4fr); }
.cards { grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.card .n { font-size: 24px; font-weight: 700; }
a.card { color: inherit; text-decoration: none; } a.card:hover { border-color: var(--accent); }
.row { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 6px 0; }
.row.end { justify-content: flex-end; }
.grow { flex: 1; min-width: 0; }
button, .button { font: inherit; padding: 5px 10px; border-radius: 6px; border: 1px solid var(--line); background: #fff;
  color: var(--ink); cursor: pointer; text-decoration: none; display: inline-block; }
button:hover, .button:hover { border-color: var(--accent); }
button.primary { background: var(--accent); color: var(--accent-ink); border-color: var(--accent); }
button.danger { color: var(--bad); }
button.link { border: none; background: none; color: var(--accent); padding: 2px 4px; text-align: left; }
button:disabled { opacity: .5; cursor: default; }
input, select, textarea { font: inherit; padding: 5px 7px; border: 1px solid #cfc6ba; border-radius: 6px; background: #fff; color: var(--ink); min-width: 0; }
/* The database picker and the rules' load target: long ids and labels shrink with a phone's width. */
.row select { max-width: 100%; }
.row label { max-width: 100%; min-width: 0; }
#rules-judge { margin: 0; min-width: 0; overflow-wrap: anywhere; }
textarea { font-family: var(--mono); font-size: 12.5px; width: 100%; }
label { display: inline-flex; gap: 6px; align-items: center; }
label.stack { display: flex; flex-direction: column; align-items: stretch; gap: 2px; margin: 6px 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
tr.sel td { background: var(--hl); }
tr.clickable:hover td { background: #f6efe6; cursor: pointer; }
code, pre, .mono { font-family: var(--mono); font-size: 12.5px; }
pre { background: var(--code); padding: 8px 10px; border-radius: 6px; overflow-x: auto; margin: 6px 0; white-space: pre; }
pre.wrap { white-space: pre-wrap; word-break: break-word; }
.badge { display: inline-block; padding: 0 6px; border-radius: 10px; font-size: 12px; font-weight: 600; background: var(--code); }
.s2 { color: var(--ok); } .s3 { color: var(--muted); } .s4 { color: var(--bad); } .s5 { color: var(--bad); background: var(--hl-bad); }
.allow { color: var(--ok); font-weight: 700; } .deny { color: var(--bad); font-weight: 700; }
.list { list-style: none; padding: 0; margin: 0; }
.list li { border-bottom: 1px solid var(--line); }
.list li > a, .list li > button { display: block; width: 100%; padding: 6px 8px; text-decoration: none; color: var(--ink);
  background: none; border: none; border-radius: 0; text-align: left; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.list li.sel > a, .list li.sel > button { background: var(--hl); font-weight: 600; }
.list li > a:hover, .list li > button:hover { background: #f6efe6; }
.crumbs { display: flex; flex-wrap: wrap; gap: 4px; align-items: center; font-family: var(--mono); font-size: 13px; margin-bottom: 8px; }
.crumbs a { text-decoration: none; }
.field { display: grid; grid-template-columns: minmax(90px, 180px) minmax(0, 1fr) auto; gap: 6px; align-items: start;
  padding: 4px 0; border-bottom: 1px dashed var(--line); }
.field > input.key { font-family: var(--mono); font-weight: 600; }
.value { display: flex; flex-direction: column; gap: 4px; min-width: 0; }
.value > .head { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; }
.value > .head > input, .value > .head > textarea { flex: 1; min-width: 120px; }
.nested { border-left: 3px solid var(--line); padding-left: 8px; margin-left: 2px; }
.code { font-family: var(--mono); font-size: 12.5px; background: var(--code); border-radius: 6px; overflow-x: auto; padding: 6px 0; }
.code .ln { display: flex; white-space: pre; min-height: 1.45em; }
.code .ln > .no { color: var(--muted); width: 3.5em; text-align: right; padding-right: 10px; user-select: none; flex: none; }
.code .ln > .src { padding-right: 10px; }
.code .ln.fail { background: var(--hl-bad); }
.code .ln.fail > .no { color: var(--bad); font-weight: 700; }
.code .ln.issue { background: var(--hl); }
.fail-key { background: var(--hl-bad); color: var(--bad); } .issue-key { background: var(--hl); }
h2.mono { font-size: 14px; word-break: break-all; }
.code.tall { max-height: 50vh; overflow: auto; position: relative; }
.heat0 { background: #e9e2d8; } .heat1 { background: #e3f5e8; } .heat2 { background: #c4ebd0; }
.heat3 { background: #9adcb0; } .heatx { background: #fde2df; }
.diff .ln.del { background: #fde2df; } .diff .ln.add { background: #e3f5e8; }
.diff .ln > .sign { width: 1.5em; flex: none; text-align: center; color: var(--muted); }
.note { background: var(--hl); border-radius: 6px; padding: 8px 10px; margin: 8px 0; }
.error { background: var(--hl-bad); color: var(--bad); border-radius: 6px; padding: 8px 10px; margin: 8px 0; white-space: pre-wrap; }
#toasts { position: fixed; right: 12px; bottom: 12px; display: flex; flex-direction: column; gap: 6px; z-index: 20; max-width: min(420px, 90vw); }
.toast { background: #2b2118; color: #fff; padding: 8px 12px; border-radius: 6px; box-shadow: 0 2px 8px rgba(0,0,0,.2); }
.toast.bad { background: var(--bad); }
dl.kv { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 12px; margin: 6px 0; }
dl.kv dt { color: var(--muted); } dl.kv dd { margin: 0; overflow-wrap: anywhere; }
.card + .grid { margin-top: 12px; }
form.inline { display: flex; gap: 6px; flex-wrap: wrap; align-items: end; }
@media (max-width: 900px) {
  .cols2, .cols2.wide-right, .cols3 { grid-template-columns: minmax(0, 1fr); }
  main { padding: 10px; }
  .field { grid-template-columns: minmax(0, 1fr) auto; }
  .field > .value { grid-column: 1 / -1; order: 3; }
  .hide-narrow { display: none; }
}
@media (max-width: 700px) {
  .top { gap: 6px 12px; padding: 6px 10px; }
  #nav { order: 3; flex-basis: 100%; flex-wrap: wrap; }
  #nav a { padding: 4px 8px; }
  .topclock { margin-left: auto; }
}

"""#
}

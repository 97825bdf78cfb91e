// The UI's `index.html`, served at `/ui/index.html` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let indexHTML = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hearth</title>
<link rel="icon" href="/ui/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/ui/app.css">
<script type="module" src="/ui/app.js"></script>
<!-- Fetched at once, beside app.js, instead of one import after another. -->
<link rel="modulepreload" href="/ui/dom.js">
<link rel="modulepreload" href="/ui/api.js">
<link rel="modulepreload" href="/ui/overview.js">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="#/overview"><img src="/ui/favicon.svg" alt="" width="22" height="22"> Hearth</a>
  <nav id="nav" aria-label="Pages"></nav>
  <a id="topclock" class="topclock" href="#/clock" title="Emulator clock"></a>
</header>
<main id="main" tabindex="-1"><p class="muted">Loading…</p></main>
<div id="toasts" role="status" aria-live="polite"></div>
</body>
</html>

"""#
}

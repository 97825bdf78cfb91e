// The UI's `favicon.svg`, served at `/ui/favicon.svg` (a raw string: the binary carries the UI, nothing is read from disk).

extension UIAssets {
    static let faviconSVG = #"""
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2b2118"/><path d="M16 5c2 5 7 7 7 13a7 7 0 0 1-14 0c0-3 2-5 3-7 1 2 2 3 3 3 0-4-1-6 1-9z" fill="#f28c28"/><path d="M16 15c1 3 4 4 4 7a4 4 0 0 1-8 0c0-2 2-3 3-4 0 1 1 1 1 1 0-2-1-3 0-4z" fill="#ffd166"/></svg>

"""#
}

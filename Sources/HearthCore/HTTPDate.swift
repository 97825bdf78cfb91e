import Foundation

/// Parses the three date forms HTTP allows (RFC 9110 §5.6.7) for `If-Modified-Since` and friends.
///
/// `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate), `Sunday, 06-Nov-94 08:49:37 GMT` (RFC 850) and
/// `Sun Nov  6 08:49:37 1994` (asctime). Anything else is nil, and the caller then ignores the
/// condition (S3 and Cloud Storage's XML API both read these headers).
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The instant `text` names, or nil when it is not an HTTP date.
    public static func parse(_ text: String) -> Instant? {
        let t = text.trimmingCharacters(in: .whitespaces)
        let parts = t.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        var day: Int?, month: Int?, year: Int?, time: String?
        if parts.count == 6, parts[0].hasSuffix(","), parts[5].uppercased() == "GMT" || parts[5].uppercased() == "UTC" {
            // IMF-fixdate
            day = Int(parts[1]); month = monthIndex(parts[2]); year = Int(parts[3]); time = parts[4]
        } else if parts.count == 4, parts[0].hasSuffix(","), parts[3].uppercased() == "GMT" {
            // RFC 850: 06-Nov-94
            let dmy = parts[1].split(separator: "-").map(String.init)
            if dmy.count == 3, let y = Int(dmy[2]) {
                day = Int(dmy[0]); month = monthIndex(dmy[1]); year = y < 100 ? (y < 70 ? 2000 + y : 1900 + y) : y; time = parts[2]
            }
        } else if parts.count == 5 {
            // asctime
            month = monthIndex(parts[1]); day = Int(parts[2]); time = parts[3]; year = Int(parts[4])
        }
        guard let d = day, let m = month, let y = year, let time, (1...31).contains(d), (1000...9999).contains(y) else { return nil }
        let hms = time.split(separator: ":").map(String.init)
        guard hms.count == 3, hms.allSatisfy({ $0.count == 2 }) else { return nil }
        func pad(_ n: Int, _ width: Int) -> String { String(repeating: "0", count: max(0, width - String(n).count)) + String(n) }
        let text = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(hms[0]):\(hms[1]):\(hms[2])Z"
        return Instant(rfc3339: text)
    }

    private static func monthIndex(_ name: String) -> Int? {
        guard name.count == 3, let i = months.firstIndex(of: name.lowercased()) else { return nil }
        return i + 1
    }
}

/// Conversions between days since 1970-01-01 and proleptic Gregorian (year, month, day), UTC.
///
/// Howard Hinnant's public-domain `days_from_civil` / `civil_from_days`: exact for every date,
/// no Foundation calendar involved (which is slow and locale-sensitive). Every timestamp
/// formatter in Hearth (RFC 3339, HTTP dates, SigV4 dates, rules timestamps) goes through here.
public enum CivilDate {
    /// (year, month 1–12, day 1–31) of `days` since the Unix epoch.
    @inlinable
    public static func civil(fromDays z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    /// Days since the Unix epoch of (year, month 1–12, day).
    @inlinable
    public static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Whether `year` is a leap year.
    @inlinable
    public static func isLeapYear(_ year: Int64) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    /// Number of days in `month` of `year`.
    @inlinable
    public static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

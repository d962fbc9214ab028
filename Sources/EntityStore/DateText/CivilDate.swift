/// Conversions between days since 1970-01-01 and proleptic Gregorian dates, with
/// astronomical year numbering (year 0 is 1 BC), after Howard Hinnant's `days_from_civil`
/// and `civil_from_days` (http://howardhinnant.github.io/date_algorithms.html).
///
/// Exact for every `Int64` input whose result fits: callers keep days within ±10¹⁵ and
/// years within ±10¹², far inside that.
enum CivilDate {
    /// Days in one 400-year Gregorian cycle; the calendar repeats after it.
    static let daysPerEra: Int64 = 146_097
    /// Seconds in one 400-year cycle.
    static let secondsPerEra: Int64 = 146_097 * 86_400

    /// The day number (days since 1970-01-01) of a date; `month` is 1...12, `day` 1...31.
    /// - Complexity: O(1).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * daysPerEra + dayOfEra - 719_468
    }

    /// The date of a day number (days since 1970-01-01).
    /// - Complexity: O(1).
    static func date(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - (daysPerEra - 1)) / daysPerEra
        let dayOfEra = z - era * daysPerEra
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The number of days in `month` (1...12) of a year, given the year modulo 400
    /// (0...399), which decides whether it is a leap year.
    static func daysInMonth(_ month: Int64, yearModulo400 year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// `value` divided by `divisor` (positive), rounded toward minus infinity, and the
    /// remainder in `0..<divisor`.
    static func floorDivided(_ value: Int64, by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = value / divisor
        let remainder = value % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}

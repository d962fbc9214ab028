import Foundation

/// The text form of a `Date` in a snapshot: ISO 8601 in UTC, exact to the bit.
///
/// `2026-11-24T10:00:00.1234567+00:00`: the civil date and time in UTC (proleptic
/// Gregorian calendar), then as many fractional digits as the instant needs, then
/// `+00:00`. The digits are exact: they are the shortest decimal that round-trips the
/// `Date`'s `timeIntervalSinceReferenceDate` (the digits of its `description`) plus
/// 978,307,200 seconds, added in decimal, never in `Double`; reading subtracts the same
/// in decimal and converts the result with a correctly rounded `Double(String)`, which
/// gives back the very same `Double`. So every finite `Date` comes back with the same
/// bits: `-0.0` is written with the offset `-00:00` (the only use of it), since it is
/// the only value the civil time alone cannot tell apart.
///
/// - A fraction of zero is left out, and a fraction never ends in `0`, so each instant
///   has exactly one text.
/// - Years 0000...9999 have four digits; other years are ISO 8601's expanded form: a
///   sign and at least four digits (`+12345-01-01T00:00:00+00:00`, `-0001-12-31T...`),
///   as far as `Double` goes (about ±5.7 × 10³⁰⁰ years).
/// - For years 0001...9999 the text sorts in time order: the fields have fixed widths, and
///   the offset's `+` sorts below `.` and the digits, so `10:00:00+00:00` <
///   `10:00:00.5+00:00` < `10:00:00.55+00:00`. (With a trailing `Z`, which sorts above
///   the digits, `.5Z` would sort after `.55Z`.)
/// - SQLite's date functions read it: `select date(created) from t`. They keep about a
///   millisecond and take four-digit years only.
///
/// Reading also accepts what people and SQLite write by hand: `Z` or no offset instead of
/// `+00:00`, a space instead of `T`, no seconds, no time, trailing zeros in the fraction.
/// No other offset is accepted.
///
/// It lives here, beside the dynamic records, because it is also how they hold a date,
/// whether read from a snapshot file or from PostgreSQL.
package enum DateText {
    /// Seconds from 1970-01-01T00:00:00Z to `Date`'s reference date, 2001-01-01T00:00:00Z.
    static let unixOffset: Int64 = 978_307_200

    /// The text of `date`.
    /// - Throws: ``DateTextError/notFinite(_:)`` for an infinite or NaN date.
    /// - Complexity: O(1) for years up to about ±2.9 × 10¹¹ with fractions of up to 19
    ///   digits (one allocation for the result, one for the `Double`'s digits); O(*d*²) in
    ///   the number of digits beyond that.
    package static func string(from date: Date) throws(DateTextError) -> String {
        try string(fromReferenceSeconds: date.timeIntervalSinceReferenceDate)
    }

    /// The date a text stands for.
    /// - Throws: ``DateTextError`` if `text` is not a date text or is beyond `Date`'s range.
    /// - Complexity: as ``referenceSeconds(parsing:)``.
    package static func date(parsing text: String) throws(DateTextError) -> Date {
        let result = Array(text.utf8).withUnsafeBufferPointer { bytes in
            Result { () throws(DateTextError) -> Double in try referenceSeconds(parsing: bytes) }
        }
        return Date(timeIntervalSinceReferenceDate: try result.get())
    }
}

/// Why a date cannot become text, or a text cannot become a date.
package enum DateTextError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The date is infinite or NaN, which no civil time describes.
    case notFinite(Double)
    /// The text does not have the form of a date; `reason` says where it fails.
    case malformed(text: String, reason: String)
    /// The text is a well-formed date too far away for `Date`.
    case outOfRange(text: String)

    /// A sentence naming the value and what is wrong with it.
    package var description: String {
        switch self {
        case .notFinite(let value):
            "a date of \(value) seconds since 2001-01-01 is not finite, and only finite dates can be stored"
        case .malformed(let text, let reason):
            "'\(text)' is not a date of the form YYYY-MM-DDTHH:MM:SS[.fraction]+00:00: \(reason)"
        case .outOfRange(let text):
            "'\(text)' is beyond the range of Date"
        }
    }

    /// `text` shortened for an error message.
    static func excerpt(_ text: UnsafeBufferPointer<UInt8>) -> String {
        let limit = 64
        let shown = String(decoding: text.prefix(limit), as: UTF8.self)
        return text.count > limit ? shown + "…" : shown
    }
}

#if PostgreSQL
import EntityStore
import EntityStoreCodec

/// The dates of dynamic records: the snapshot format's date text
/// (`2026-11-24T10:00:00.5+00:00`, what a snapshot file's dynamic readers give for a
/// `date` column), stored as a `date` column's exact seconds since 1970. Both ways are
/// exact, so a date column keeps its kind from a file to PostgreSQL and back.
enum DynamicDates {
    /// A dynamic record's date value as a `date` column stores it; nil for a value that
    /// is not a date's text.
    static func encode(_ value: JSONValue) -> EncodedValue? {
        guard case let .string(text) = value, let date = try? DateText.date(parsing: text),
              let seconds = try? DecimalText.unixSeconds(of: date, path: [])
        else { return nil }
        return EncodedValue(value: .text(seconds), kind: .date)
    }
}
#endif

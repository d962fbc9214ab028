import EntityStore
import Foundation

/// What differs between back ends in how the one codec stores a value: the form of a
/// date and of a `number`, whether a double may be NaN, and how errors name the integer
/// columns. Each back
/// end declares its own (`CodecDialect.sqlite`, `CodecDialect.postgres`).
package struct CodecDialect: Sendable {
    /// How a `date` column holds an instant; both forms are exact to the bit.
    package enum DateForm: Sendable {
        /// ISO 8601 text in UTC (``DateText``).
        case isoText
        /// The exact seconds since 1970 as decimal text (``DecimalText``).
        case unixSeconds
    }

    package var dates: DateForm
    /// Whether a `number` column's values come as decimal text (PostgreSQL's `NUMERIC`)
    /// rather than as integers and doubles.
    package var numbersAsText: Bool
    /// Why a NaN cannot be stored, or nil where a double column keeps NaN.
    package var nanRefusal: String?
    /// How a message names the integer columns, as in "… does not fit BIGINT".
    package var integerColumns: String

    package init(dates: DateForm, numbersAsText: Bool, nanRefusal: String?, integerColumns: String) {
        self.dates = dates
        self.numbersAsText = numbersAsText
        self.nanRefusal = nanRefusal
        self.integerColumns = integerColumns
    }

    /// The stored double: `value`, unless this back end refuses NaN.
    /// - Throws: `EncodingError.invalidValue` for a NaN where ``nanRefusal`` is set.
    @inline(__always)
    package func real(_ value: Double, path: @autoclosure () -> [any CodingKey]) throws -> StoredValue {
        if value.isNaN, let nanRefusal {
            throw EncodingError.invalidValue(value, .init(codingPath: path(), debugDescription: nanRefusal))
        }
        return .double(value)
    }

    /// The stored integer of an unsigned value.
    /// - Throws: `EncodingError.invalidValue` above `Int64.max`.
    package func integer(_ value: UInt64, path: [any CodingKey]) throws -> Int64 {
        guard let signed = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "\(value) does not fit \(integerColumns)"))
        }
        return signed
    }

    /// The column value of a date in this back end's form.
    /// - Throws: `EncodingError.invalidValue` for an infinite or NaN date.
    package func encode(_ date: Date, path: [any CodingKey]) throws -> EncodedValue {
        switch dates {
        case .isoText:
            do {
                return EncodedValue(value: .text(try DateText.string(from: date)), kind: .date)
            } catch {
                throw EncodingError.invalidValue(date, .init(codingPath: path, debugDescription: error.description))
            }
        case .unixSeconds:
            return EncodedValue(value: .text(try DecimalText.unixSeconds(of: date, path: path)), kind: .date)
        }
    }
}

extension CodecDialect {
    /// For encoders whose output is dropped (the super-encoders of ignored containers).
    static let neutral = CodecDialect(dates: .isoText, numbersAsText: false, nanRefusal: nil, integerColumns: "64-bit signed integers")
}

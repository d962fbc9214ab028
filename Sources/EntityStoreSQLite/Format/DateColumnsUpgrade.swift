import EntityStore
import EntityStoreCodec
import Foundation

/// Format 2's code step: every column of kind `date` goes from REAL seconds since 1970 to
/// the exact text of ``DateText``.
///
/// Each stored value u becomes the `Date` the format 1 reader made of it,
/// `Date(timeIntervalSince1970: u)` (u − 978,307,200 rounded in `Double`), so a restore
/// gives the same dates before and after the upgrade; from then on they are exact.
enum DateColumnsUpgrade {
    /// The SQL function that converts one value, defined on the connection while the
    /// step runs.
    static let functionName = "entitystore_unix_seconds_to_date_text"

    /// Converts the date columns the metadata lists. Columns or tables it lists but the
    /// file lacks are left to the checks of restore and verify; values that are not
    /// numbers are left as they are (restore and verify report them).
    /// - Throws: ``SnapshotError/invalidData(table:detail:)`` for a value that is no
    ///   finite date (an infinity), naming the table and column; ``SQLiteError`` otherwise.
    /// - Complexity: O(*n*) in the rows of the tables with date columns.
    static func run(_ connection: SQLiteConnection) throws {
        var columns: [(table: String, column: String)] = []
        for row in try connection.prepare(
            "SELECT table_name, name FROM entitystore_columns WHERE kind = 'date' ORDER BY table_name, position").rows() {
            if case let .text(table) = row[0], case let .text(column) = row[1] { columns.append((table, column)) }
        }
        guard !columns.isEmpty else { return }
        let failure = FirstFailure()
        try connection.withFunction(named: functionName, argumentCount: 1, { arguments in
            do throws(ConversionFailure) {
                return try convert(arguments.first ?? .null)
            } catch {
                failure.message = failure.message ?? error.description
                throw error
            }
        }) {
            for (table, column) in columns {
                let present = try connection.prepare("SELECT 1 FROM pragma_table_info(?) WHERE name = ?")
                    .rows([.text(table), .text(column)])
                guard try connection.tableExists(table), !present.isEmpty else { continue }
                let name = quoteIdentifier(column)
                do {
                    try connection.execute("""
                        UPDATE \(quoteIdentifier(table)) SET \(name) = \(functionName)(\(name)) \
                        WHERE typeof(\(name)) IN ('real', 'integer')
                        """)
                } catch let error as SQLiteError {
                    guard let message = failure.message else { throw error }
                    throw SnapshotError.invalidData(table: table, detail: "column '\(column)' \(message)")
                }
            }
        }
    }

    /// The format 2 value of a format 1 date value: numbers become date text, anything else
    /// is returned as it is.
    /// - Throws: ``ConversionFailure`` for an infinite number.
    static func convert(_ value: SQLiteValue) throws(ConversionFailure) -> SQLiteValue {
        let unixSeconds: Double
        switch value {
        case .real(let seconds): unixSeconds = seconds
        case .integer(let seconds): unixSeconds = Double(seconds)
        default: return value
        }
        do {
            return .text(try DateText.string(from: Date(timeIntervalSince1970: unixSeconds)))
        } catch {
            throw ConversionFailure(unixSeconds: unixSeconds)
        }
    }

    /// A stored date that no finite `Date` describes.
    struct ConversionFailure: Error, CustomStringConvertible {
        let unixSeconds: Double

        var description: String {
            "holds \(unixSeconds) seconds since 1970, which is not a finite date and cannot be stored as date text; "
                + "set it to a date or NULL (for example with sqlite3) and open the file again"
        }
    }

    /// The first conversion failure of a statement, kept for its error.
    private final class FirstFailure {
        var message: String?
    }
}

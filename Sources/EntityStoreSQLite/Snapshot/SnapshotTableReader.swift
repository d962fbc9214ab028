import EntityStore

/// Reads some rows of one table of a snapshot without restoring the store: what a
/// one-shot query needs (a count, one record by id, the rows a condition selects) costs
/// an SQLite lookup instead of a full restore.
///
/// The file is opened read-only and never changed: one of an older format is read
/// through a private copy brought up to date (``SQLiteConnection/privateCopy(of:)``),
/// which disappears with the reader. Rows are decoded exactly as a restore decodes them
/// into dynamic records.
package struct SnapshotTableReader {
    /// A filter on rows, in SQL: clauses AND-ed, with their bound arguments. Columns must
    /// be named with `quoteIdentifier` and every value bound, never spliced.
    package struct Filter: Sendable {
        package var clauses: [String] = []
        package var arguments: [SQLiteValue] = []

        package init() {}

        package var whereClause: String { clauses.isEmpty ? "" : " WHERE " + clauses.map { "(\($0))" }.joined(separator: " AND ") }
    }

    package let path: String
    /// The metadata, of the current format (an older file's as its upgrade gives it).
    package let metadata: SnapshotMetadata
    /// The format version of the file itself.
    package let fileFormatVersion: Int
    private let connection: SQLiteConnection

    /// Opens the snapshot at `path` read-only and reads its metadata.
    /// - Throws: ``SnapshotError`` for a missing, damaged or foreign file.
    package init(path: String) throws(SnapshotError) {
        guard FileSystem.exists(path) else { throw .fileNotFound(path: path) }
        if let kind = FileSystem.nonRegularKind(path) { throw .notASnapshot(path: path, reason: "it is \(kind)") }
        do {
            var connection = try SQLiteConnection.openSnapshotForReading(path)
            let version = try SnapshotIdentity.check(connection)
            // Before the upgrade writes to the copy: a write would run the file's triggers.
            try SnapshotStructure.checkFile(connection)
            if version < FormatMigrator.currentVersion {
                connection = try SQLiteConnection.privateCopy(of: connection)
                try FormatMigrator().migrate(connection)
            }
            self.metadata = try SnapshotMetadata.read(connection)
            self.fileFormatVersion = version
            self.connection = connection
            self.path = path
        } catch let error as SnapshotError {
            throw error
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch {
            throw .notASnapshot(path: path, reason: String(describing: error))
        }
    }

    /// The number of rows of `table` that `filter` selects. O(log n) with an SQL index on
    /// the filtered column, else one pass over the table inside SQLite.
    package func count(_ table: String, _ filter: Filter) throws(SnapshotError) -> Int {
        do {
            let statement = try connection.prepare("SELECT count(*) FROM \(quoteIdentifier(table))\(filter.whereClause)")
            try statement.bind(filter.arguments)
            guard try statement.step() else { return 0 }
            return Int(statement.int64(at: 0))
        } catch {
            throw SnapshotError(error, path: path)
        }
    }

    /// The value of `column` at `position` (0 for the first) in the order of the non-NULL
    /// values of the rows of `table` that `filter` selects, largest first when
    /// `descending`; nil when fewer rows have one. O(n log k) for k = position + 1 inside
    /// SQLite, O(log n + k) with an SQL index on the column.
    package func value(
        of column: String, in table: String, _ filter: Filter, descending: Bool, at position: Int
    ) throws(SnapshotError) -> SQLiteValue? {
        let name = quoteIdentifier(column)
        var selecting = filter
        selecting.clauses.append("\(name) IS NOT NULL")
        do {
            let rows = try connection.prepare(
                "SELECT \(name) FROM \(quoteIdentifier(table))\(selecting.whereClause) ORDER BY \(name)\(descending ? " DESC" : "") LIMIT 1 OFFSET ?")
                .rows(selecting.arguments + [.integer(Int64(position))])
            return rows.first?.first
        } catch {
            throw SnapshotError(error, path: path)
        }
    }

    /// The values of `expressions` (SQL built with `quoteIdentifier` names) over the rows
    /// of `table` that `filter` selects, grouped by `groupBy` when given: one array per
    /// result row.
    package func select(
        _ expressions: [String], from table: String, _ filter: Filter, groupBy: String? = nil
    ) throws(SnapshotError) -> [[SQLiteValue]] {
        let grouping = groupBy.map { " GROUP BY \($0)" } ?? ""
        do {
            return try connection.prepare(
                "SELECT \(expressions.joined(separator: ", ")) FROM \(quoteIdentifier(table))\(filter.whereClause)\(grouping)")
                .rows(filter.arguments)
        } catch {
            throw SnapshotError(error, path: path)
        }
    }

    /// The rows of `table` that `filter` selects, in id order, decoded as a restore
    /// decodes them.
    /// - Throws: ``SnapshotError/invalidData(table:detail:)`` for a value that does not fit
    ///   its column's kind.
    package func records(_ table: String, _ filter: Filter) throws(SnapshotError) -> [DynamicRecord] {
        guard let stored = metadata.table(named: table) else { return [] }
        let listed = stored.columns.map(\.name)
        let selected = (listed.contains("id") ? listed : ["id"] + listed).map(quoteIdentifier).joined(separator: ", ")
        do {
            let statement = try connection.prepare(
                "SELECT \(selected) FROM \(quoteIdentifier(table))\(filter.whereClause) ORDER BY \"id\"")
            try statement.bind(filter.arguments)
            let layout = ColumnLayout(statement, stored: stored)
            var records: [DynamicRecord] = []
            while try statement.step() {
                records.append(try DynamicRowReader.record(statement, layout: layout, idKind: stored.idKind))
            }
            return records
        } catch let error as SnapshotError {
            throw error
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch {
            throw .invalidData(table: table, detail: String(describing: error))
        }
    }
}

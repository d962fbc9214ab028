import EntityStore
import EntityStoreCodec

/// Reads some rows of one table of a snapshot without restoring the store: what a
/// one-shot query needs (a count, one record by id, the rows a condition selects) costs
/// an SQLite lookup instead of a full restore.
///
/// The file is opened read-only and never changed: one of an older format is read
/// through a private copy brought up to date (`SQLiteConnection/privateCopy(of:)`),
/// which disappears with the reader. Rows are decoded exactly as a restore decodes them
/// into dynamic records, and the collation `SQLiteConnection/swiftStringOrder` is
/// defined, so statements can order and compare text as the in-memory store does.
package struct SnapshotTableReader {
    /// A filter on rows, in SQL: clauses AND-ed, with their bound arguments. Columns must
    /// be named with `quoteIdentifier` and every value bound, never spliced.
    package struct Filter: Sendable {
        package var clauses: [String] = []
        package var arguments: [SQLiteValue] = []

        package init() {}

        package var whereClause: String { clauses.isEmpty ? "" : " WHERE " + clauses.map { "(\($0))" }.joined(separator: " AND ") }

        /// The same rows, selected by their ids first, by themselves: SQLite then finds
        /// them through the index of a filtered column where it has one, instead of
        /// scanning `table` in id order.
        /// - Complexity: O(clauses).
        package func selectingIDsFirst(of table: String) -> Filter {
            var filter = Filter()
            filter.clauses = ["\"id\" IN (SELECT \"id\" FROM \(quoteIdentifier(table))\(whereClause))"]
            filter.arguments = arguments
            return filter
        }
    }

    /// The SQL order of ids as the store orders them, with `collation` (see
    /// ``collation(of:in:_:)``), largest first when `descending`: an `orderBy` for
    /// ``forEachRecord(_:_:orderBy:_:)``.
    package static func idOrder(collation: String, descending: Bool) -> String {
        "\"id\"\(collation)\(descending ? " DESC" : "")"
    }

    package let path: String
    /// The metadata, of the current format (an older file's as its upgrade gives it).
    package let metadata: StoreMetadata
    /// The format version of the file itself.
    package let fileFormatVersion: Int
    private let connection: SQLiteConnection
    /// Per table, whether its ids are all ASCII, once asked (see ``records(_:withIDs:)``).
    private let asciiIDs = Memo()

    private final class Memo {
        var values: [String: Bool] = [:]
    }

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
            let migrates = version < FormatMigrator.currentVersion
            if migrates {
                connection = try SQLiteConnection.privateCopy(of: connection)
                try FormatMigrator().migrate(connection)
            }
            try connection.defineSwiftStringOrder()
            try connection.defineASCIITest()
            // Unmigrated, the connection is the one just checked: no need to check it twice.
            self.metadata = try StoreMetadata.read(connection, checkedVersion: migrates ? nil : version)
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

    /// Whether `column` of `table` holds text, which SQL must order with
    /// `SQLiteConnection/swiftStringOrder` to order it as the store does.
    package func holdsText(_ column: String, of table: String) -> Bool {
        guard let stored = metadata.table(named: table) else { return false }
        if column == "id" { return stored.idKind == .string }
        return stored.columns.first { $0.name == column }?.kind == .string
    }

    /// The `COLLATE` clause with which SQL orders and compares `column` as the store does
    /// on the rows of `table` that `filter` selects: none for numbers, nor for text that
    /// is all ASCII there (whose bytes order as Swift orders it, so an SQL index on the
    /// column serves), else `" COLLATE entitystore_swift"`.
    /// - Complexity: for text, one pass over the selected values (the column's SQL index
    ///   alone, where it has one), stopping at the first beyond ASCII.
    package func collation(of column: String, in table: String, _ filter: Filter) throws(SnapshotError) -> String {
        guard holdsText(column, of: table) else { return "" }
        let name = quoteIdentifier(column)
        var selecting = filter
        selecting.clauses += ["\(name) IS NOT NULL", "NOT \(SQLiteConnection.asciiTest)(\(name))"]
        do {
            let beyond = try connection.prepare("SELECT EXISTS (SELECT 1 FROM \(quoteIdentifier(table))\(selecting.whereClause))")
                .rows(selecting.arguments)
            return beyond.first?.first == .integer(0) ? "" : " COLLATE \(SQLiteConnection.swiftStringOrder)"
        } catch {
            throw SnapshotError(error, path: path)
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
    /// values of the rows of `table` that `filter` selects, compared with `collation`
    /// (see ``collation(of:in:_:)``), largest first when `descending`; nil when fewer rows
    /// have one. O(n log k) for k = position + 1 inside SQLite, O(log n + k) with an SQL
    /// index on the column and no collation.
    package func value(
        of column: String, in table: String, _ filter: Filter, collation: String = "", descending: Bool, at position: Int
    ) throws(SnapshotError) -> SQLiteValue? {
        let name = quoteIdentifier(column)
        var selecting = filter
        selecting.clauses.append("\(name) IS NOT NULL")
        let order = name + collation
        do {
            let rows = try connection.prepare(
                "SELECT \(name) FROM \(quoteIdentifier(table))\(selecting.whereClause) ORDER BY \(order)\(descending ? " DESC" : "") LIMIT 1 OFFSET ?")
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

    /// The rows of `table` that `filter` selects, in the order SQLite gives ids (a restore
    /// inserts them in that order), decoded as a restore decodes them.
    /// - Throws: ``SnapshotError/invalidData(table:detail:)`` for a value that does not fit
    ///   its column's kind.
    package func records(_ table: String, _ filter: Filter) throws(SnapshotError) -> [DynamicRecord] {
        var records: [DynamicRecord] = []
        do {
            try forEachRecord(table, filter, orderBy: "\"id\"") { record in
                records.append(record)
                return true
            }
        } catch let error as SnapshotError {
            throw error
        } catch {
            throw .invalidData(table: table, detail: String(describing: error))
        }
        return records
    }

    /// The records of `table` whose ids equal one of `ids` as the store compares ids
    /// (canonically equivalent strings are equal), keyed by their ids.
    /// - Complexity: O(k log n) for k ids through the id's SQL index. On a table of string
    ///   ids, those not found byte for byte that could still equal one in Swift's sense (a
    ///   string beyond ASCII, or any string if the table's ids go beyond ASCII, which one
    ///   pass over them tells, once per reader) cost one more pass over its ids.
    package func records(_ table: String, withIDs ids: [RecordID]) throws(SnapshotError) -> [RecordID: DynamicRecord] {
        var found: [RecordID: DynamicRecord] = [:]
        let wanted = Set(ids)
        func read(_ ids: some Collection<RecordID>, collated: Bool) throws(SnapshotError) {
            var filter = Filter()
            let column = collated ? "\"id\" COLLATE \(SQLiteConnection.swiftStringOrder)" : "\"id\""
            filter.clauses = ["\(column) IN (\(Array(repeating: "?", count: ids.count).joined(separator: ", ")))"]
            filter.arguments = ids.map { id in
                switch id {
                case .integer(let number): .integer(number)
                case .string(let text): .text(text)
                }
            }
            // SQLite matches the text '5' with the id 5: only ids of the kind asked count.
            for record in try records(table, filter) where wanted.contains(record.id) { found[record.id] = record }
        }
        // SQLite binds at most 32,766 values per statement.
        let chunk = 10_000
        for start in stride(from: 0, to: ids.count, by: chunk) {
            try read(ids[start..<min(ids.count, start + chunk)], collated: false)
        }
        // Text equal to an id only in Swift's sense ("e\u{301}" and "é", "K" and the Kelvin sign).
        guard metadata.table(named: table)?.idKind == .string else { return found }
        var missing = ids.filter { if case .string = $0 { found[$0] == nil } else { false } }
        // ASCII equals only itself: an ASCII id can equal another spelling only beyond ASCII.
        let isASCII = { (id: RecordID) in if case .string(let text) = id { text.utf8.allSatisfy { $0 < 0x80 } } else { true } }
        if missing.contains(where: isASCII) {
            let all = if let known = asciiIDs.values[table] { known } else { try collation(of: "id", in: table, Filter()) == "" }
            asciiIDs.values[table] = all
            if all { missing.removeAll(where: isASCII) }
        }
        for start in stride(from: 0, to: missing.count, by: chunk) {
            try read(missing[start..<min(missing.count, start + chunk)], collated: true)
        }
        return found
    }

    /// Calls `body` with each row of `table` that `filter` selects, decoded as a restore
    /// decodes it, in the order of the SQL `orderBy` (built with `quoteIdentifier`),
    /// until it returns false. One row is decoded at a time.
    /// - Throws: what `body` throws; ``SnapshotError`` for the file, and
    ///   ``SnapshotError/invalidData(table:detail:)`` for a value that does not fit its
    ///   column's kind.
    package func forEachRecord(
        _ table: String, _ filter: Filter, orderBy: String, _ body: (DynamicRecord) throws -> Bool
    ) throws {
        guard let stored = metadata.table(named: table) else { return }
        let listed = stored.columns.map(\.name)
        let selected = (listed.contains("id") ? listed : ["id"] + listed).map(quoteIdentifier).joined(separator: ", ")
        let statement: SQLiteStatement
        let layout: ColumnLayout
        do {
            statement = try connection.prepare("SELECT \(selected) FROM \(quoteIdentifier(table))\(filter.whereClause) ORDER BY \(orderBy)")
            try statement.bind(filter.arguments)
            layout = ColumnLayout(statement, stored: stored)
        } catch {
            throw SnapshotError(error, path: path)
        }
        while true {
            let record: DynamicRecord
            do {
                guard try statement.step() else { return }
                record = try DynamicRowReader.record(statement, layout: layout, idKind: stored.idKind)
            } catch let error as SnapshotError {
                throw error
            } catch let error as SQLiteError {
                throw SnapshotError(error, path: path)
            } catch {
                throw SnapshotError.invalidData(table: table, detail: String(describing: error))
            }
            guard try body(record) else { return }
        }
    }
}

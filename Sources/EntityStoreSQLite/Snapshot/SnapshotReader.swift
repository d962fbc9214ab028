import EntityStore
import Foundation

/// Reads a snapshot file into a new `EntityState`, validating everything before the
/// caller swaps it in: the live store is untouched by any failure.
struct SnapshotReader {
    let path: String
    let options: SnapshotOptions

    /// Opens the file read-only after bringing it up to date (format and app migrations,
    /// each in its own transaction), and reads its metadata.
    func open() throws(SnapshotError) -> (SQLiteConnection, SnapshotMetadata) {
        guard FileSystem.exists(path) else { throw .fileNotFound(path: path) }
        guard !FileSystem.isDirectory(path) else { throw .notASnapshot(path: path, reason: "it is a directory") }
        var connection = try connect(.readOnly)
        let version: Int
        do { version = try SnapshotIdentity.check(connection) } catch let error as SnapshotError { throw error } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch { throw .notASnapshot(path: path, reason: String(describing: error)) }
        let storedAppVersion = try appSchemaVersion(connection)
        if version < FormatMigrator.currentVersion || storedAppVersion < options.appSchemaVersion {
            connection = try connect(.readWrite)
            try FormatMigrator().migrate(connection)
            try AppMigrator(options: options).migrate(connection)
        }
        let metadata = try SnapshotMetadata.read(connection)
        if options.appSchemaVersion > 0, metadata.appSchemaVersion > options.appSchemaVersion {
            throw .newerAppSchema(found: metadata.appSchemaVersion, supported: options.appSchemaVersion)
        }
        return (connection, metadata)
    }

    private func connect(_ mode: SQLiteConnection.OpenMode) throws(SnapshotError) -> SQLiteConnection {
        do { return try SQLiteConnection(path: path, mode: mode) } catch { throw SnapshotError(error, path: path) }
    }

    private func appSchemaVersion(_ connection: SQLiteConnection) throws(SnapshotError) -> Int {
        do {
            guard try connection.tableExists("entitystore_meta") else { return 0 }
            let rows = try connection.prepare("SELECT value FROM entitystore_meta WHERE key = 'app_schema_version'").rows()
            if case let .text(value)? = rows.first?.first { return Int(value) ?? 0 }
            return 0
        } catch { throw SnapshotError(error, path: path) }
    }

    /// Reads every table of `schema` into a new state.
    /// - Throws: ``SnapshotError/schemaMismatch(table:detail:)`` if the file holds a table
    ///   the schema does not declare or a column does not fit its Swift field;
    ///   ``SnapshotError/invalidData(table:detail:)`` for stored values that are wrong.
    ///   Tables the schema declares but the file lacks restore empty.
    func read(schema: Schema) throws(SnapshotError) -> EntityState {
        let (connection, metadata) = try open()
        for table in metadata.tables where schema.table(named: table.name) == nil {
            throw .schemaMismatch(table: table.name, detail: "the snapshot holds this table but the schema does not declare it")
        }
        let total = metadata.tables.reduce(0) { $0 + $1.rowCount }
        var done = 0
        do {
            return try EntityState.build(schema: schema) { transaction in
                for table in schema.tables {
                    guard let stored = metadata.table(named: table.name), let typed = table as? any TypedTable else { continue }
                    let rows = try readRows(of: typed, stored: stored, connection: connection, into: transaction) { rows in
                        options.progress?(SnapshotProgress(table: table.name, tableRows: rows, rowsDone: done + rows, totalRows: total))
                    }
                    done += rows
                }
            }
        } catch let error as SnapshotError {
            throw error
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch let error as EntityStoreError {
            throw .invalidData(table: "?", detail: error.description)
        } catch {
            throw .invalidData(table: "?", detail: String(describing: error))
        }
    }

    /// Decodes the rows of one table, in ID order, and inserts them in one batch.
    private func readRows<T: TypedTable>(
        of table: T, stored: SnapshotMetadata.TableMetadata, connection: SQLiteConnection,
        into transaction: Transaction, progress: (Int) -> Void
    ) throws -> Int {
        let statement = try connection.prepare("SELECT * FROM \(quoteIdentifier(table.name)) ORDER BY \"id\"")
        var index: [String: Int32] = [:]
        for column in 0..<statement.columnCount { index[statement.columnName(column)] = column }
        var kinds: [String: ColumnKind] = [:]
        for column in stored.columns { kinds[column.name] = column.kind }
        let layout = ColumnLayout(index: index, kind: kinds, table: table.name)
        let writer = transaction[table.typed]
        let isDynamic = T.Element.self == DynamicRecord.self
        let decoder = RowDecoder(statement: statement, layout: layout)
        defer { decoder.finish() }
        // All rows go in as one batch: into the empty table that is a bulk load, which
        // builds the order and the indexes in one pass instead of row by row.
        var rows: [T.Element] = []
        rows.reserveCapacity(min(max(stored.rowCount, 0), 1 << 22))
        while try statement.step() {
            let entity: T.Element
            if isDynamic, let record = try DynamicRowReader.record(statement, layout: layout, idKind: stored.idKind) as? T.Element {
                entity = record
            } else {
                do { entity = try T.Element(from: decoder) } catch let error as DecodingError {
                    throw SnapshotError.schemaMismatch(table: table.name, detail: Self.describe(error))
                }
            }
            rows.append(entity)
            if rows.count % 10_000 == 0 { progress(rows.count) }
        }
        let count = rows.count
        do { try table.typed.bulk.insert(writer, &rows) } catch {
            throw SnapshotError.invalidData(table: table.name, detail: error.description)
        }
        progress(count)
        if count != stored.rowCount {
            throw SnapshotError.invalidData(
                table: table.name, detail: "the metadata records \(stored.rowCount) rows but the table holds \(count)")
        }
        return count
    }

    static func describe(_ error: DecodingError) -> String {
        switch error {
        case let .keyNotFound(key, context):
            return context.debugDescription.isEmpty ? "missing column '\(key.stringValue)'" : context.debugDescription
        case let .typeMismatch(_, context), let .valueNotFound(_, context), let .dataCorrupted(context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            if context.debugDescription.contains("column") { return context.debugDescription }
            return "column '\(path)': \(context.debugDescription)"
        @unknown default:
            return String(describing: error)
        }
    }
}

/// Reads a dynamic record from the current row, exact by column kind.
enum DynamicRowReader {
    static func record(_ statement: SQLiteStatement, layout: ColumnLayout, idKind: ColumnKind) throws(SnapshotError) -> DynamicRecord {
        guard let idColumn = layout.index["id"] else {
            throw .invalidData(table: layout.table, detail: "the table has no 'id' column")
        }
        let id: RecordID
        switch statement.columnType(idColumn) {
        case .integer: id = .integer(statement.int64(at: idColumn))
        case .text: id = .string(statement.text(at: idColumn))
        default: throw .invalidData(table: layout.table, detail: "an id is neither an integer nor text")
        }
        var fields: [String: JSONValue] = [:]
        for (name, column) in layout.index where name != "id" {
            if let value = try RowValues.jsonValue(statement, column, kind: layout.kind[name], table: layout.table, column: name) {
                fields[name] = value
            }
        }
        return DynamicRecord(id: id, fields: fields)
    }
}

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
        do { return try Self.connect(path, mode) } catch { throw SnapshotError(error, path: path) }
    }

    /// A connection that reads pages through a memory map: a restore reads every page
    /// once, and the map spares a system call and a copy per page.
    private static func connect(_ path: String, _ mode: SQLiteConnection.OpenMode) throws(SQLiteError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, mode: mode)
        try connection.setPragma("mmap_size", String(1 << 30))
        return connection
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

    /// Tables from this many rows on are decoded by two threads, each over half of the IDs.
    static let rowsPerDecoderSplit = 20_000

    /// Decodes the rows of one table, in ID order, and inserts them as one batch.
    ///
    /// Decoding (SQLite stepping and `Codable`) costs about three times what building the
    /// table (rows, insertion order, indexes) does, so large tables are decoded by two
    /// threads, each over half of the IDs on its own connection, while this thread moves
    /// the decoded chunks into the table as they arrive: first half first, so rows keep
    /// their ID order.
    private func readRows<T: TypedTable>(
        of table: T, stored: SnapshotMetadata.TableMetadata, connection: SQLiteConnection,
        into transaction: Transaction, progress: (Int) -> Void
    ) throws -> Int {
        let name = quoteIdentifier(table.name)
        let statements: [SQLiteStatement]
        if stored.rowCount >= Self.rowsPerDecoderSplit,
           let pivot = try connection.prepare("SELECT \"id\" FROM \(name) ORDER BY \"id\" LIMIT 1 OFFSET ?")
               .rows([.integer(Int64(stored.rowCount / 2))]).first?.first {
            let lower = try connection.prepare("SELECT * FROM \(name) WHERE \"id\" < ? ORDER BY \"id\"")
            try lower.bind([pivot])
            let other = try Self.connect(connection.path, .readOnly)
            let upper = try other.prepare("SELECT * FROM \(name) WHERE \"id\" >= ? ORDER BY \"id\"")
            try upper.bind([pivot])
            statements = [lower, upper]
        } else {
            statements = [try connection.prepare("SELECT * FROM \(name) ORDER BY \"id\"")]
        }
        var index: [String: Int32] = [:]
        for column in 0..<statements[0].columnCount { index[statements[0].columnName(column)] = column }
        var kinds: [String: ColumnKind] = [:]
        for column in stored.columns { kinds[column.name] = column.kind }
        let layout = ColumnLayout(index: index, kind: kinds, table: table.name)
        let writer = transaction[table.typed]

        // The first half's channel is bounded (its chunks are taken as they come); the
        // second half's is not, so its decoder never waits for the first half's rows.
        let channels = statements.indices.map { ChunkChannel<T.Element>(capacity: $0 == 0 ? 16 : .max) }
        for (statement, channel) in zip(statements, channels) {
            let producer = RowProducer<T.Element>(
                statement: statement, layout: layout, idKind: stored.idKind, table: table.name, path: path,
                channel: channel)
            let thread = Thread { producer.run() }
            // As deep a stack as the main thread's: decoding nested values recurses.
            thread.stackSize = 8 << 20
            thread.start()
        }
        // This thread keeps the statements until the decoders exited, so the last release
        // (which finalizes a statement on its connection) happens here, not on a decoder.
        defer { withExtendedLifetime(statements) {} }
        // Stop every decoder, and wait for them: they use their statements until they exit.
        func stopDecoders() -> (any Error)? {
            for channel in channels { channel.cancel() }
            return channels.compactMap { $0.waitForProducer() }.first
        }

        var count = 0
        var current = 0
        do {
            try table.typed.bulk.insert(writer, max(0, min(stored.rowCount, 1 << 22))) { chunk in
                while current < channels.count {
                    if channels[current].receive(into: &chunk) {
                        count += chunk.count
                        progress(count)
                        return true
                    }
                    current += 1
                }
                return false
            }
        } catch {
            _ = stopDecoders()
            throw SnapshotError.invalidData(table: table.name, detail: error.description)
        }
        if let failure = channels.compactMap({ $0.waitForProducer() }).first { throw failure }
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

/// The decoding half of a restore: steps a statement on its own thread and sends the
/// decoded entities through a channel in chunks.
private final class RowProducer<Element: Entity>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: the reader creates this object, hands it to the one
    // thread that runs `run()`, and does not use the connection again until
    // `waitForProducer()` returned. `run()` drops its references to the statement and the
    // decoder before it signals its exit (the channel's lock orders the two threads), so
    // the statement is never finalized on this thread while the reader uses the
    // connection.
    private var statement: SQLiteStatement?
    private let layout: ColumnLayout
    private let idKind: ColumnKind
    private let table: String
    private let path: String
    private let channel: ChunkChannel<Element>
    static var chunkSize: Int { 1_024 }

    init(
        statement: SQLiteStatement, layout: ColumnLayout, idKind: ColumnKind, table: String, path: String,
        channel: ChunkChannel<Element>
    ) {
        self.statement = statement
        self.layout = layout
        self.idKind = idKind
        self.table = table
        self.path = path
        self.channel = channel
    }

    func run() {
        if let statement {
            // Created here, so its memory comes from this thread's allocator: the decoder's
            // fields are written for every column, and next to the other decoder's (as two
            // objects allocated one after the other are) each write would evict the other
            // thread's cache line.
            let decoder = RowDecoder(statement: statement, layout: layout)
            produce(statement, decoder)
            decoder.finish()
        }
        statement = nil
        channel.producerExited()
    }

    private func produce(_ statement: SQLiteStatement, _ decoder: RowDecoder) {
        do {
            let isDynamic = Element.self == DynamicRecord.self
            var chunk: [Element] = []
            chunk.reserveCapacity(Self.chunkSize)
            while try statement.step() {
                let entity: Element
                if isDynamic, let record = try DynamicRowReader.record(statement, layout: layout, idKind: idKind) as? Element {
                    entity = record
                } else {
                    do { entity = try Element(from: decoder) } catch let error as DecodingError {
                        throw SnapshotError.schemaMismatch(table: table, detail: SnapshotReader.describe(error))
                    }
                }
                chunk.append(consume entity)
                if chunk.count == Self.chunkSize {
                    // Reversed here, where there is time to spare: the table takes a chunk
                    // from its end (see `insert(expectedCount:drainingChunks:)`). Through
                    // the buffer, the swaps move entities instead of copying them.
                    chunk.withUnsafeMutableBufferPointer { $0.reverse() }
                    // The channel takes the buffer (were this thread still holding it when
                    // the table takes from it, the table would copy the whole chunk) and
                    // gives back an emptied one when it has one.
                    guard channel.send(&chunk) else { return channel.finish() }
                    chunk.reserveCapacity(Self.chunkSize)
                }
            }
            chunk.withUnsafeMutableBufferPointer { $0.reverse() }
            if !chunk.isEmpty, !channel.send(&chunk) { return channel.finish() }
            channel.finish()
        } catch let error as SnapshotError {
            channel.finish(throwing: error)
        } catch let error as SQLiteError {
            channel.finish(throwing: SnapshotError(error, path: path))
        } catch {
            channel.finish(throwing: SnapshotError.invalidData(table: table, detail: String(describing: error)))
        }
    }
}

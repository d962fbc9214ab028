import EntityStore
import EntityStoreCodec
import Foundation

/// Reads a snapshot file into a new `EntityState`, validating everything before the
/// caller swaps it in: the live store is untouched by any failure.
struct SnapshotReader {
    let path: String
    let options: SnapshotOptions
    /// Whether the rows are read as dynamic records, which have no app types: then a file
    /// of a newer app schema version is read when the options declare none.
    var isDynamic = false
    /// Whether a file that needs migrations is left as it is: they run on a private copy
    /// (`SQLiteConnection/privateCopy(of:)`) instead of the file.
    var leavesFileUnchanged = false

    /// Opens the file read-only after bringing it up to date (format and app migrations,
    /// each in its own transaction; on a private copy when ``leavesFileUnchanged``), and
    /// reads its metadata.
    func open() throws(SnapshotError) -> (SQLiteConnection, StoreMetadata) {
        guard FileSystem.exists(path) else { throw .fileNotFound(path: path) }
        if let kind = FileSystem.nonRegularKind(path) { throw .notASnapshot(path: path, reason: "it is \(kind)") }
        var connection = try connect(.readOnly)
        let version: Int
        do { version = try SnapshotIdentity.check(connection) } catch let error as SnapshotError { throw error } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch { throw .notASnapshot(path: path, reason: String(describing: error)) }
        // Before any migration writes to it: a write would run the file's triggers.
        try SnapshotStructure.checkFile(connection)
        let storedAppVersion = try appSchemaVersion(connection)
        let migrates = version < FormatMigrator.currentVersion || storedAppVersion < options.appSchemaVersion
        if migrates {
            if leavesFileUnchanged {
                do { connection = try SQLiteConnection.privateCopy(of: connection) } catch { throw SnapshotError(error, path: path) }
            } else {
                connection = try connect(.readWrite)
            }
            try FormatMigrator().migrate(connection)
            try AppMigrator(options: options).migrate(connection)
        }
        // Unmigrated, the connection is the one just checked: no need to check it twice.
        let metadata = try StoreMetadata.read(connection, checkedVersion: migrates ? nil : version)
        let acceptsNewer = options.acceptsNewerAppSchema || (isDynamic && options.appSchemaVersion == 0)
        if metadata.appSchemaVersion > options.appSchemaVersion, !acceptsNewer {
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
        let connection = mode == .readOnly
            ? try SQLiteConnection.openSnapshotForReading(path) : try SQLiteConnection(path: path, mode: mode)
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
    /// - Parameter opened: what ``open()`` returned, if the caller opened the file already.
    func read(schema: Schema, opened: (SQLiteConnection, StoreMetadata)? = nil) throws(SnapshotError) -> EntityState {
        let (connection, metadata) = if let opened { opened } else { try open() }
        for table in metadata.tables where schema.table(named: table.name) == nil {
            throw .schemaMismatch(table: table.name, detail: "the snapshot holds this table but the schema does not declare it")
        }
        // Bounded: the metadata's row counts sum to at most the file's size.
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

    /// The rows to reserve room for before a table's rows arrive: the count its metadata
    /// claims, which for a large table (over 4,194,304 rows) is first checked against the
    /// table itself (`count(*)`, one walk of its b-tree's pages), so a damaged or hostile
    /// count cannot make a restore reserve gigabytes, while a genuine 10,000,000-row table
    /// is placed without regrowing.
    static func rowsToReserve(claimed: Int, table name: String, connection: SQLiteConnection) throws -> Int {
        guard claimed > 1 << 22 else { return max(0, claimed) }
        guard case let .integer(counted)? = try connection.prepare("SELECT count(*) FROM \(name)").rows().first?.first else { return 1 << 22 }
        return Int(clamping: min(Int64(claimed), counted))
    }

    /// Tables from this many rows on are decoded by two threads (below, the threads cost
    /// more than they save).
    static let rowsPerDecoderSplit = 4_000
    /// A split table gets one ID range per `rowsPerRange` rows, at least two and at most
    /// `maximumRanges`.
    static let maximumRanges = 8
    static let rowsPerRange = 5_000

    /// Decodes the rows of one table, in ID order, and inserts them as one batch.
    ///
    /// Decoding (SQLite stepping and `Codable`) costs about three times what building the
    /// table (rows, insertion order, indexes) does, so large tables are cut into ID ranges
    /// that two threads decode in turn (the first takes ranges 0, 2, 4..., the second
    /// 1, 3, 5..., each on its own connection), while this thread moves the decoded chunks
    /// into the table, range by range, so rows keep their ID order. Several ranges rather
    /// than two halves: this thread takes a range's chunks only after the previous
    /// range's, so whatever is left of the last range when the decoders are done is built
    /// alone, and the smaller the last range, the shorter that tail.
    private func readRows<T: TypedTable>(
        of table: T, stored: StoreMetadata.Table, connection: SQLiteConnection,
        into transaction: Transaction, progress: (Int) -> Void
    ) throws -> Int {
        let name = quoteIdentifier(table.name)
        // A private copy cannot be opened by a second decoder.
        let bounds = connection.isPrivateCopy ? [] : try rangeBounds(of: name, rowCount: stored.rowCount, connection: connection)
        let connections = bounds.isEmpty ? [connection] : [connection, try Self.connect(connection.path, .readOnly)]
        // Range i is [bounds[i - 1], bounds[i]), open at both ends of the list.
        // Only the listed columns: a table may hold others (a generated column a hostile
        // file added), which a reader must never compute.
        let listed = stored.columns.map(\.name)
        let selected = (listed.contains("id") ? listed : ["id"] + listed).map(quoteIdentifier).joined(separator: ", ")
        var statements: [SQLiteStatement] = []
        for range in 0...bounds.count {
            var conditions: [String] = []
            var values: [SQLiteValue] = []
            if range > 0 {
                conditions.append("\"id\" >= ?")
                values.append(bounds[range - 1])
            }
            if range < bounds.count {
                conditions.append("\"id\" < ?")
                values.append(bounds[range])
            }
            let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
            let statement = try connections[range % connections.count].prepare("SELECT \(selected) FROM \(name)\(filter) ORDER BY \"id\"")
            try statement.bind(values)
            statements.append(statement)
        }
        let layout = ColumnLayout(statements[0], stored: stored)
        // Before the decoders start: they step statements on this connection.
        let reserved = try Self.rowsToReserve(claimed: stored.rowCount, table: name, connection: connection)
        let writer = transaction[table.typed]

        // The first range's channel is bounded (its chunks are taken as they come); the
        // others are not, so a decoder never waits for this thread to reach its range.
        let channels = statements.indices.map { ChunkChannel<T.Element>(capacity: $0 == 0 ? 16 : .max) }
        for decoder in connections.indices {
            let mine = Array(stride(from: decoder, to: statements.count, by: connections.count))
            let producer = RowProducer<T.Element>(
                ranges: mine.map { (statements[$0], channels[$0]) }, layout: layout, idKind: stored.idKind,
                table: table.name, path: path)
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
            try table.typed.bulk.insert(writer, reserved) { chunk in
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

    /// The IDs that cut the table `name` into ranges for two decoders, ascending; empty for
    /// a table small enough for one.
    ///
    /// Integer IDs are cut evenly by value between the smallest and the largest, two
    /// lookups in the ID b-tree. Other IDs (or a single distinct value) are cut once, at
    /// the median, which SQLite finds by stepping through half of them.
    private func rangeBounds(of name: String, rowCount: Int, connection: SQLiteConnection) throws -> [SQLiteValue] {
        guard rowCount >= Self.rowsPerDecoderSplit else { return [] }
        let ranges = max(2, min(Self.maximumRanges, rowCount / Self.rowsPerRange))
        if case let .integer(low)? = try connection.prepare("SELECT min(\"id\") FROM \(name)").rows().first?.first,
           case let .integer(high)? = try connection.prepare("SELECT max(\"id\") FROM \(name)").rows().first?.first,
           high > low {
            // The span as an unsigned width, so IDs across the whole Int64 range cannot overflow.
            let step = UInt64(bitPattern: high &- low) / UInt64(ranges)
            var bounds: [Int64] = []
            for range in 1..<ranges {
                let bound = low &+ Int64(bitPattern: step &* UInt64(range))
                if bound > (bounds.last ?? low) { bounds.append(bound) }
            }
            return bounds.map { .integer($0) }
        }
        let median = try connection.prepare("SELECT \"id\" FROM \(name) ORDER BY \"id\" LIMIT 1 OFFSET ?")
            .rows([.integer(Int64(rowCount / 2))]).first?.first
        return median.map { [$0] } ?? []
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
        guard let idColumn = layout.row.index["id"] else {
            throw .invalidData(table: layout.table, detail: "the table has no 'id' column")
        }
        let id: RecordID
        switch statement.columnType(idColumn) {
        case .integer: id = .integer(statement.int64(at: idColumn))
        case .text: id = .string(statement.text(at: idColumn))
        default: throw .invalidData(table: layout.table, detail: "an id is neither an integer nor text")
        }
        var fields: [String: JSONValue] = [:]
        fields.reserveCapacity(layout.row.names.count)
        let hidden = NullMeaning.absentFieldsColumn
        var absent: [String]?
        for (position, name) in layout.row.names.enumerated() where name != "id" && name != hidden {
            let value: JSONValue?
            do {
                value = try StoredJSON.value(
                    statement, Int32(position), kind: layout.row.kinds[position], dialect: .sqlite, table: layout.table, name: name)
            } catch {
                throw SnapshotError(error)
            }
            if let value {
                fields[name] = value
            } else if let nulls = layout.nulls[name] {
                // NULL is null here, unless the row lists the field as missing.
                if nulls == .either, absent == nil { absent = try absentFields(statement, layout: layout) }
                if nulls == .null || !(absent ?? []).contains(name) { fields[name] = .null }
            }
        }
        return DynamicRecord(id: id, fields: fields)
    }

    /// The fields the current row lacks among its table's `either` columns: the JSON array
    /// of names in the hidden column, or none when it is NULL.
    private static func absentFields(_ statement: SQLiteStatement, layout: ColumnLayout) throws(SnapshotError) -> [String] {
        guard let column = layout.row.index[NullMeaning.absentFieldsColumn], statement.columnType(column) != .null else { return [] }
        guard statement.columnType(column) == .text,
              case .array(let names)? = try? JSONValue(parsing: statement.text(at: column)),
              let fields = Optional(names.compactMap(\.stringValue)), fields.count == names.count
        else {
            throw .invalidData(table: layout.table, detail: "column '\(NullMeaning.absentFieldsColumn)' must hold a JSON array of field names")
        }
        return fields
    }
}

/// The decoding half of a restore: steps a statement on its own thread and sends the
/// decoded entities through a channel in chunks.
private final class RowProducer<Element: Entity>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: the reader creates this object, hands it to the one
    // thread that runs `run()`, and does not use the connection again until
    // `waitForProducer()` returned for each channel. `run()` drops its references to the
    // statements before it signals its exit (the channels' locks order the two threads),
    // so no statement is finalized on this thread while the reader uses the connection.
    private var ranges: [(statement: SQLiteStatement, channel: ChunkChannel<Element>)]
    private let layout: ColumnLayout
    private let idKind: ColumnKind
    private let table: String
    private let path: String
    static var chunkSize: Int { 1_024 }

    init(
        ranges: [(statement: SQLiteStatement, channel: ChunkChannel<Element>)], layout: ColumnLayout,
        idKind: ColumnKind, table: String, path: String
    ) {
        self.ranges = ranges
        self.layout = layout
        self.idKind = idKind
        self.table = table
        self.path = path
    }

    /// Decodes each range into its channel, in turn; after a failure or a cancellation,
    /// the remaining ranges end empty.
    func run() {
        let channels = ranges.map(\.channel)
        var going = true
        for (statement, channel) in ranges {
            guard going else {
                channel.finish()
                continue
            }
            // Created here, so its memory comes from this thread's allocator: the decoder's
            // fields are written for every column, and next to the other decoder's (as two
            // objects allocated one after the other are) each write would evict the other
            // thread's cache line.
            let decoder = RowDecoder(source: statement, layout: layout.row, dialect: .sqlite)
            going = produce(statement, decoder, into: channel)
            decoder.finish()
        }
        ranges = []
        for channel in channels { channel.producerExited() }
    }

    /// Decodes the rows of `statement` into `channel`; returns whether it got through them
    /// all (false after an error, which the channel carries, or a cancellation).
    private func produce(_ statement: SQLiteStatement, _ decoder: RowDecoder, into channel: ChunkChannel<Element>) -> Bool {
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
                    guard channel.send(&chunk) else {
                        channel.finish()
                        return false
                    }
                    chunk.reserveCapacity(Self.chunkSize)
                }
            }
            chunk.withUnsafeMutableBufferPointer { $0.reverse() }
            if !chunk.isEmpty, !channel.send(&chunk) {
                channel.finish()
                return false
            }
            channel.finish()
            return true
        } catch let error as SnapshotError {
            channel.finish(throwing: error)
        } catch let error as SQLiteError {
            channel.finish(throwing: SnapshotError(error, path: path))
        } catch let error as InvalidStoredValue {
            channel.finish(throwing: SnapshotError(error))
        } catch {
            channel.finish(throwing: SnapshotError.invalidData(table: table, detail: String(describing: error)))
        }
        return false
    }
}

#if PostgreSQL
import EntityStore
import EntityStoreCodec
import Foundation

/// Reads a store from its schema into a new `EntityState`, validating everything before
/// the caller swaps it in: the live store is untouched by any failure.
///
/// It reads in one `REPEATABLE READ` transaction (one consistent view of every table),
/// decoding rows on the task that receives them while a thread of its own builds the
/// tables (rows, order, indexes) from the decoded chunks.
struct PostgresSnapshotReader {
    let target: PostgresTarget
    var selection: PostgresSelection = .all

    func read(schema: Schema) async throws(PostgresStoreError) -> (EntityState, PostgresStoreMetadata) {
        var attempt = 0
        while true {
            do {
                return try await target.withSession { session in
                    try SQL.transaction(session, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                        try read(schema: schema, session)
                    }
                }
            } catch let error where attempt < 3 && PostgresStoreMetadata.isReplacedWhileWaiting(error) {
                // A full snapshot replaced the store while this transaction waited for its
                // lock: its snapshot predates the new tables, which look empty to it. A new
                // transaction sees them.
                attempt += 1
            }
        }
    }

    /// Reads on an open session, inside the caller's transaction.
    func read(schema: Schema, _ session: PostgresSession) throws -> (EntityState, PostgresStoreMetadata) {
        let metadata = try PostgresStoreMetadata.read(schema: target.schema, session)
        for stored in metadata.tables where schema.table(named: stored.name) == nil && selection.includes(stored.name) {
            throw PostgresStoreError.schemaMismatch(table: stored.name, detail: "the store holds this table but the schema does not declare it")
        }
        for (table, condition) in selection.conditions {
            guard let declared = schema.table(named: table) else {
                throw PostgresStoreError.invalidSelection("the schema declares no table '\(table)'")
            }
            guard condition.field == "id" || declared.indexDescriptions.contains(where: { $0.field == condition.field }) else {
                throw PostgresStoreError.invalidSelection("'\(table).\(condition.field)' has no declared index")
            }
        }
        var feeds: [any TableFeed] = []
        for table in schema.tables where selection.includes(table.name) {
            guard let stored = metadata.table(named: table.name) else { continue }
            guard let typed = table as? any TypedTable else {
                throw PostgresStoreError.schemaMismatch(table: table.name, detail: "not a typed table")
            }
            feeds.append(try makeFeed(typed, stored: stored))
        }
        let pending = feeds
        // This thread reads and decodes; another builds the tables (rows, order, indexes).
        let builder = JoinableThread(name: "restore builder") {
            try EntityState.build(schema: schema) { transaction in
                for feed in pending { try feed.build(into: transaction) }
            }
        }
        do {
            for feed in feeds { try feed.fill(session) }
        } catch {
            for feed in feeds { feed.cancel() }
            let built = builder.join()
            if error is BuilderStopped, case let .failure(builderError) = built { throw builderError }
            throw error
        }
        do {
            return (try builder.join().get(), metadata)
        } catch let error as EntityStoreError {
            throw PostgresStoreError.invalidData(table: "?", detail: error.description)
        }
    }

    private func makeFeed<T: TypedTable>(_ table: T, stored: StoreMetadata.Table) throws -> any TableFeed {
        var binds: [PostgresParameter] = []
        var filter = ""
        if let condition = selection.conditions[stored.name] {
            let kind = condition.field == "id" ? stored.idKind : stored.columns.first(where: { $0.name == condition.field })?.kind
            guard let kind else {
                throw PostgresStoreError.invalidSelection("'\(stored.name).\(condition.field)' is not a stored column")
            }
            filter = " WHERE " + condition.sql(kind: kind, binds: &binds)
        }
        let sql = "SELECT \(stored.selectList) FROM \(SQL.qualified(target.schema, stored.name))\(filter) ORDER BY \"id\""
        return TypedFeed(
            table: table, layout: stored.readLayout, query: sql, binds: binds,
            expected: filter.isEmpty ? stored.rowCount : nil)
    }
}

/// Thrown by a feed whose builder stopped taking chunks (the builder's error is the one to report).
struct BuilderStopped: Error {}

/// One table of a restore: the reading half (`fill`, on the task) and the building half
/// (`build`, on the builder thread), joined by a channel.
protocol TableFeed: Sendable {
    func fill(_ session: PostgresSession) throws
    func build(into transaction: Transaction) throws
    func cancel()
}

struct TypedFeed<T: TypedTable>: TableFeed {
    let table: T
    let layout: RowLayout
    let query: String
    let binds: [PostgresParameter]
    /// The row count the metadata records, checked for a whole table.
    let expected: Int?
    let channel = ChunkChannel<T.Element>()
    static var chunkSize: Int { 1024 }

    func build(into transaction: Transaction) throws {
        do {
            try table.typed.bulk.insert(transaction[table.typed], max(0, min(expected ?? 0, 1 << 22))) { chunk in
                channel.receive(into: &chunk)
            }
        } catch {
            channel.cancel()
            throw PostgresStoreError.invalidData(table: table.name, detail: error.description)
        }
    }

    func cancel() { channel.cancel() }

    /// Rows fetched per round trip of the restore's cursor.
    static var rowsPerFetch: Int { 4096 }

    func fill(_ session: PostgresSession) throws {
        defer { channel.finish() }
        try session.execute("DECLARE entitystore_feed NO SCROLL CURSOR FOR \(query)", binds)
        let values = StoredRow()
        values.values.reserveCapacity(layout.names.count)
        let decoder = RowDecoder(source: values, layout: layout, dialect: .postgres)
        defer { decoder.finish() }
        let isDynamic = T.Element.self == DynamicRecord.self
        var chunk: [T.Element] = []
        chunk.reserveCapacity(Self.chunkSize)
        var count = 0
        while true {
            let rows = try session.execute("FETCH FORWARD \(Self.rowsPerFetch) FROM entitystore_feed")
            if rows.isEmpty { break }
            for row in 0..<rows.count {
                values.values.removeAll(keepingCapacity: true)
                for column in 0..<rows.columnCount { values.values.append(try rows.value(row, column, table: layout.table)) }
                let entity: T.Element
                if isDynamic, let record = try Self.record(values, layout: layout) as? T.Element {
                    entity = record
                } else {
                    do { entity = try T.Element(from: decoder) } catch let error as DecodingError {
                        throw PostgresStoreError.schemaMismatch(table: layout.table, detail: describe(error))
                    } catch let error as InvalidStoredValue {
                        throw PostgresStoreError.invalidData(table: error.table, detail: error.detail)
                    }
                }
                chunk.append(entity)
                count += 1
                if chunk.count == Self.chunkSize {
                    chunk.reverse()
                    // Never blocks (the channel has no capacity): the server's rows keep flowing.
                    guard channel.send(&chunk) else { throw BuilderStopped() }
                    chunk.reserveCapacity(Self.chunkSize)
                }
            }
        }
        try session.execute("CLOSE entitystore_feed")
        chunk.reverse()
        if !chunk.isEmpty, !channel.send(&chunk) { throw BuilderStopped() }
        if let expected, expected != count {
            throw PostgresStoreError.invalidData(table: layout.table, detail: "the metadata records \(expected) rows but the table holds \(count); if rows were written to it outside EntityStore, `entity-store repair` (PostgresTarget.repairStore()) recounts them and makes every replica reload")
        }
    }

    /// A dynamic record from a row: SQL NULL is a missing field, JSON `null` a null one.
    static func record(_ row: StoredRow, layout: RowLayout) throws(PostgresStoreError) -> DynamicRecord {
        let id: RecordID
        switch row.values.first {
        case let .integer(number)?: id = .integer(number)
        case let .text(text)?: id = .string(text)
        default: throw .invalidData(table: layout.table, detail: "an id is neither an integer nor text")
        }
        var fields: [String: JSONValue] = [:]
        for position in 1..<row.values.count {
            do {
                fields[layout.names[position]] = try StoredJSON.value(
                    row, Int32(position), kind: layout.kinds[position], dialect: .postgres, table: layout.table, name: layout.names[position])
            } catch {
                throw .invalidData(table: error.table, detail: error.detail)
            }
        }
        return DynamicRecord(id: id, fields: fields)
    }
}

func describe(_ error: DecodingError) -> String {
    switch error {
    case let .keyNotFound(key, context):
        return context.debugDescription.isEmpty ? "missing column '\(key.stringValue)'" : context.debugDescription
    case let .typeMismatch(_, context), let .valueNotFound(_, context), let .dataCorrupted(context):
        return context.debugDescription
    @unknown default:
        return String(describing: error)
    }
}
#endif

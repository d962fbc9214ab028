#if PostgreSQL
import EntityStore
import EntityStoreCodec
import Foundation

/// What a full snapshot to PostgreSQL wrote.
public struct PostgresSnapshotSummary: Sendable, CustomStringConvertible {
    /// One table and its rows.
    public struct TableCount: Sendable, Hashable {
        /// The table's name.
        public let name: String
        /// Its rows.
        public let rows: Int
    }
    /// Where it went (no password).
    public let target: String
    /// The change-log position the stored contents are at.
    public let position: Int64
    /// The tables, in schema order.
    public let tables: [TableCount]
    /// Wall time.
    public let duration: Duration

    /// The total number of rows.
    public var rows: Int { tables.reduce(0) { $0 + $1.rows } }

    /// `N rows in M tables to target in T`.
    public var description: String {
        "\(rows) rows in \(tables.count) tables to \(target) in \(duration)"
    }
}

/// Writes a whole state into a schema, replacing what it held, in one transaction.
///
/// Everything is built in a new schema with a random name: tables with generated names
/// and columns, loaded with `COPY ... FROM STDIN` (text format; the rows are encoded on a
/// thread of their own, ``CopyEncoder``, while the connection's thread sends them), then renamed to the entity tables' names (quoted), keyed and indexed. The old
/// schema is dropped and the new one renamed over it before the commit, so a reader sees
/// the old contents or the new, never a mix; any failure (or a killed process, or a
/// server that stops) rolls everything back and leaves the old contents.
struct PostgresSnapshotWriter {
    let state: EntityState
    let target: PostgresTarget
    var appSchemaVersion = 0
    /// The date fields of dynamic tables, by table (``DynamicKinds``).
    var dateFields: [String: Set<String>] = [:]
    /// Bytes of rows per `COPY` message.
    static let bytesPerMessage = 1 << 20

    func write() async throws(PostgresStoreError) -> PostgresSnapshotSummary {
        // Unreachable nil: only a create-only write finds a store and writes nothing.
        guard let summary = try await write(onlyIfAbsent: false) else { throw .notAStore(schema: target.schema, reason: "not written") }
        return summary
    }

    /// Writes the store only if the schema holds none; nil when one is there (another
    /// process created it first, maybe while this one tried): then load that one.
    func create() async throws(PostgresStoreError) -> PostgresSnapshotSummary? {
        try await write(onlyIfAbsent: true)
    }

    private func write(onlyIfAbsent: Bool) async throws(PostgresStoreError) -> PostgresSnapshotSummary? {
        let start = ContinuousClock.now
        try SQL.checkIdentifier(target.schema, what: "the schema", table: target.schema)
        for name in state.tableNames {
            try SQL.checkIdentifier(name, what: "the table", table: name)
            if name.hasPrefix("entitystore_") {
                throw .encodingFailed(table: name, detail: "table names starting with 'entitystore_' are reserved for the store's metadata")
            }
        }
        guard let (position, counts) = try await writeOnce(onlyIfAbsent: onlyIfAbsent) else { return nil }
        return PostgresSnapshotSummary(
            target: target.description, position: position, tables: counts, duration: ContinuousClock.now - start)
    }

    private func writeOnce(onlyIfAbsent: Bool) async throws(PostgresStoreError) -> (Int64, [PostgresSnapshotSummary.TableCount])? {
        try await target.withSession { session in
            try SQL.transaction(session) {
                try self.writeAll(onlyIfAbsent: onlyIfAbsent, session)
            }
        }
    }

    private func writeAll(onlyIfAbsent: Bool, _ session: PostgresSession) throws -> (Int64, [PostgresSnapshotSummary.TableCount])? {
        let schema = target.schema
        try Self.serialize(schema: schema, session)
        let previousHead = try Self.lockExisting(schema: schema, session)
        if previousHead > 0 && onlyIfAbsent { return nil }
        let head = previousHead + 1
        let stage = "entitystore_stage_" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        try session.execute("CREATE SCHEMA \(SQL.quote(stage))")
        try MetadataTables.create(in: stage, session)
        var counts: [PostgresSnapshotSummary.TableCount] = []
        for (position, table) in state.schema.tables.enumerated() {
            guard let typed = table as? any TypedTable else {
                throw PostgresStoreError.schemaMismatch(table: table.name, detail: "not a typed table")
            }
            let layout = try copy(typed, position: position, into: stage, revision: head, session)
            let rows = state.count(ofTable: table.name) ?? 0
            try MetadataTables.record(table, layout: layout, rows: rows, position: position, in: stage, session)
            try MetadataTables.createIndexes(for: table, layout: layout, in: stage, session)
            counts.append(.init(name: table.name, rows: rows))
        }
        try Self.recordMeta(in: stage, head: head, appSchemaVersion: appSchemaVersion, session)
        if previousHead > 0 {
            // Readers (pulls, restores) touch the metadata first: once this waits for those
            // reading and then holds it, no reader holds a table the drop must lock.
            try session.execute("LOCK TABLE \(SQL.qualified(schema, "entitystore_meta")) IN ACCESS EXCLUSIVE MODE")
        }
        try session.execute("DROP SCHEMA IF EXISTS \(SQL.quote(schema)) CASCADE")
        try session.execute("ALTER SCHEMA \(SQL.quote(stage)) RENAME TO \(SQL.quote(schema))")
        // Delivered at commit: replicas that listen reload.
        try session.execute("SELECT pg_notify($1, $2)", [.text(SQL.channel(for: schema)), .text(String(head))])
        return (head, counts)
    }

    /// The change-log head of the store in `schema`, locked until the transaction ends;
    /// 0 when there is none. The metadata table is locked in `EXCLUSIVE` mode, which
    /// readers pass and writers wait for before taking anything: a push that began first
    /// and locked the head row is waited for here, and one that begins later waits holding
    /// no lock the snapshot's `DROP SCHEMA` needs (with the head row locked alone, a push
    /// waiting on the row held the table's `ROW SHARE` lock the drop waited for: a deadlock).
    /// - Throws: ``PostgresStoreError/notAStore(schema:reason:)`` for a schema that holds
    ///   other tables, which a snapshot must never drop.
    static func lockExisting(schema: String, _ session: PostgresSession) throws -> Int64 {
        let exists = try session.execute("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", [.text(schema)])
        guard exists.bool(0, 0) == true else { return 0 }
        let meta = try session.execute("SELECT to_regclass($1) IS NOT NULL", [.text(SQL.qualified(schema, "entitystore_meta"))])
        guard meta.bool(0, 0) == true else {
            let others = try session.execute(
                "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1", [.text(schema)])
            if (others.int64(0, 0) ?? 0) > 0 {
                throw PostgresStoreError.notAStore(schema: schema, reason: "it holds other tables, which a snapshot would drop; choose another schema")
            }
            return 0
        }
        try session.execute("LOCK TABLE \(SQL.qualified(schema, "entitystore_meta")) IN EXCLUSIVE MODE")
        let head = try session.execute("SELECT value FROM \(SQL.qualified(schema, "entitystore_meta")) WHERE key = 'log_head'")
        return head.isEmpty ? 0 : Int64(head.string(0, 0) ?? "0") ?? 0
    }

    /// Serializes the writers of whole stores into `schema` (snapshots, repairs) with a
    /// transaction-scoped advisory lock taken first: a second creator waits for the first
    /// to commit, then finds its store (each later statement sees the commit) and replaces
    /// it as a second snapshot would, or, creating only if absent, loads it. Pushes and
    /// readers do not take it.
    static func serialize(schema: String, _ session: PostgresSession) throws {
        try session.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [.text("entitystore:" + schema)])
    }

    static func recordMeta(in schema: String, head: Int64, appSchemaVersion: Int, _ session: PostgresSession) throws {
        let keys = ["format_version", "app_schema_version", "library", "created_at", "log_head", "log_start"]
        let values = [
            String(MetadataTables.formatVersion), String(appSchemaVersion), "EntityStorePostgres",
            Date().formatted(.iso8601), String(head), String(head),
        ]
        try session.execute(
            "INSERT INTO \(SQL.qualified(schema, "entitystore_meta")) (key, value) SELECT k, v FROM unnest($1::text[], $2::text[]) AS u(k, v)",
            [.texts(keys), .texts(values)])
    }

    /// Creates and fills one table under a generated name, then gives it its own name,
    /// its columns' names and its primary key.
    private func copy<T: TypedTable>(
        _ table: T, position: Int, into stage: String, revision: Int64, _ session: PostgresSession
    ) throws -> WriteLayout {
        let view = state[table.typed]
        let generated = SQL.qualified(stage, "entitystore_t\(position)")
        let encoder = try CopyEncoder(
            view: view, bulk: table.typed.bulk, table: table.name, dateFields: dateFields[table.name] ?? [], revision: revision,
            bytesPerPiece: target.bytesPerCopyMessage)
        // The rows are encoded on a thread of their own while this one sends them.
        let feed = encoder.start()
        defer { feed.cancel() }
        func columnName(_ position: Int) -> String { "entitystore_c\(position)" }
        var layout = encoder.initialLayout
        var created = false
        func create() throws {
            var definitions = layout.columns.indices.map { "\(SQL.quote(columnName($0))) \(layout.sqlType($0))" }
            definitions.append("\"entitystore_revision\" BIGINT NOT NULL")
            try session.execute("CREATE TABLE \(generated) (\(definitions.joined(separator: ", ")))")
            created = true
        }
        var pending = try feed.next()
        while let piece = pending {
            pending = nil
            switch piece {
            case let .layout(next, changes):
                layout = next
                if !created {
                    try create()
                    break
                }
                for change in changes {
                    switch change {
                    case let .add(column):
                        try session.execute("ALTER TABLE \(generated) ADD COLUMN \(SQL.quote(columnName(column))) \(layout.sqlType(column))")
                    case let .retype(column):
                        try session.execute(
                            "ALTER TABLE \(generated) ALTER COLUMN \(SQL.quote(columnName(column))) TYPE \(layout.sqlType(column)) USING NULL")
                    }
                }
            case let .rows(first):
                // One COPY for the rows up to the next layout change (or the end).
                let columns = (layout.columns.indices.map(columnName) + ["entitystore_revision"]).map(SQL.quote)
                var firstChunk: [UInt8]? = first
                try session.copyIn("COPY \(generated) (\(columns.joined(separator: ", "))) FROM STDIN") {
                    if let chunk = firstChunk {
                        firstChunk = nil
                        return chunk
                    }
                    guard let next = try feed.next() else { return nil }
                    guard case let .rows(buffer) = next else {
                        pending = next
                        return nil
                    }
                    return buffer
                }
            case let .done(final):
                layout = final
                if !created { try create() }
            }
            if pending == nil, case .done = piece { break }
            if pending == nil { pending = try feed.next() }
        }
        for column in layout.columns.indices {
            try session.execute(
                "ALTER TABLE \(generated) RENAME COLUMN \(SQL.quote(columnName(column))) TO \(SQL.quote(layout.columns[column].name))")
        }
        try session.execute("ALTER TABLE \(generated) RENAME TO \(SQL.quote(table.name))")
        try session.execute("ALTER TABLE \(SQL.qualified(stage, table.name)) ADD PRIMARY KEY (\"id\")")
        return layout
    }
}

/// One entity's fields, as `COPY` text and the sync's statements store them.
enum RowFields<E: Entity> {
    /// The fields of `entity`: a dynamic record's through `dynamic`, others through
    /// `encoder`. O(fields).
    static func of(
        _ entity: E, encoder: RowEncoder, dynamic: DynamicKinds?, table: String
    ) throws(PostgresStoreError) -> [(name: String, value: EncodedValue)] {
        if let dynamic, let record = entity as? DynamicRecord { return try dynamic.fields(of: record) }
        do {
            try encoder.encode(entity)
        } catch {
            throw .encodingFailed(table: table, detail: "entity \(entity.id): \(error)")
        }
        return encoder.fields
    }
}
#endif

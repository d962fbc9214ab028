#if PostgreSQL
import EntityStore
import EntityStoreCodec
import Foundation

/// The metadata of a store kept in a PostgreSQL schema: what `entity-store inspect`
/// shows, and what a restore checks before reading a row.
public struct PostgresStoreMetadata: Sendable {
    /// One stored table.
    public struct StoredTable: Sendable {
        /// The table's name.
        public let name: String
        /// The Swift type that wrote it (`DynamicRecord` for dynamic tables).
        public let entityType: String
        /// The kind of its IDs (`integer`, `string`, `uuid`, or `null` while empty).
        public let idKind: ColumnKind
        /// Its row count.
        public let rowCount: Int
        /// Its columns after `id`, in order, with their kinds.
        public let columns: [(name: String, kind: ColumnKind)]
        /// Its declared indexes.
        public let indexes: [IndexDescription]
        /// Its relations.
        public let relations: [RelationSpec]
    }

    /// The schema.
    public let schema: String
    /// The snapshot format version the layout follows.
    public let formatVersion: Int
    /// The app's schema version when it was written.
    public let appSchemaVersion: Int
    /// The last change-log position.
    public let head: Int64
    /// Positions up to this one are no longer in the change log (a replica behind it reloads).
    public let logStart: Int64
    /// The tables, in order.
    public let tables: [StoredTable]

    /// Reads the metadata tables of `schema`. O(tables + columns + indexes).
    /// - Throws: ``PostgresStoreError/notAStore(schema:reason:)`` when the schema has no
    ///   store or one of a newer format.
    static let noFormatVersion = "entitystore_meta has no format_version"

    /// Whether `error` is what a reader meets when a full snapshot replaced the store while
    /// it waited: the new metadata table, committed after its snapshot, looks empty.
    static func isReplacedWhileWaiting(_ error: PostgresStoreError) -> Bool {
        if case let .notAStore(_, reason) = error { return reason == noFormatVersion }
        return false
    }

    static func read(schema: String, _ session: PostgresSession) throws -> PostgresStoreMetadata {
        let present = try session.execute("SELECT to_regclass($1) IS NOT NULL", [.text(SQL.qualified(schema, "entitystore_meta"))])
        guard present.bool(0, 0) == true else {
            throw PostgresStoreError.notAStore(schema: schema, reason: "it has no entitystore_meta table (push a snapshot first)")
        }
        var meta: [String: String] = [:]
        let metaRows = try session.execute("SELECT key, value FROM \(SQL.qualified(schema, "entitystore_meta"))")
        for row in 0..<metaRows.count {
            meta[try metaRows.requiredString(row, 0)] = try metaRows.requiredString(row, 1)
        }
        guard let format = meta["format_version"].flatMap({ Int($0) }) else {
            throw PostgresStoreError.notAStore(schema: schema, reason: Self.noFormatVersion)
        }
        guard format <= MetadataTables.formatVersion else {
            throw PostgresStoreError.notAStore(schema: schema, reason: "format \(format) is newer than this library's \(MetadataTables.formatVersion)")
        }
        var columns: [String: [(name: String, kind: ColumnKind)]] = [:]
        let columnRows = try session.execute("SELECT table_name, name, kind FROM \(SQL.qualified(schema, "entitystore_columns")) ORDER BY table_name, position")
        for row in 0..<columnRows.count {
            let (table, name, kind) = (try columnRows.requiredString(row, 0), try columnRows.requiredString(row, 1), try columnRows.requiredString(row, 2))
            guard let parsed = ColumnKind(rawValue: kind) else {
                throw PostgresStoreError.invalidData(table: table, detail: "column '\(name)' has the unknown kind '\(kind)'")
            }
            if name != "id" { columns[table, default: []].append((name, parsed)) }
        }
        var indexes: [String: [IndexDescription]] = [:]
        let indexRows = try session.execute("SELECT table_name, name, kind, field FROM \(SQL.qualified(schema, "entitystore_indexes")) ORDER BY table_name, name")
        for row in 0..<indexRows.count {
            let (table, name, kind, field) = (
                try indexRows.requiredString(row, 0), try indexRows.requiredString(row, 1), try indexRows.requiredString(row, 2),
                try indexRows.requiredString(row, 3))
            guard let parsed = IndexKind(rawValue: kind) else {
                throw PostgresStoreError.invalidData(table: table, detail: "index '\(name)' has the unknown kind '\(kind)'")
            }
            indexes[table, default: []].append(IndexDescription(name: name, kind: parsed, field: field))
        }
        var relations: [String: [RelationSpec]] = [:]
        let relationRows = try session.execute(
            "SELECT table_name, field, target_table, delete_rule FROM \(SQL.qualified(schema, "entitystore_relations")) ORDER BY table_name, field")
        for row in 0..<relationRows.count {
            let (table, field, target, rule) = (
                try relationRows.requiredString(row, 0), try relationRows.requiredString(row, 1), try relationRows.requiredString(row, 2),
                try relationRows.requiredString(row, 3))
            guard let parsed = DeleteRule(rawValue: rule) else {
                throw PostgresStoreError.invalidData(table: table, detail: "relation '\(field)' has the unknown delete rule '\(rule)'")
            }
            relations[table, default: []].append(RelationSpec(table: table, field: field, targetTable: target, deleteRule: parsed))
        }
        var tables: [StoredTable] = []
        let tableRows = try session.execute("SELECT name, entity_type, id_kind, row_count FROM \(SQL.qualified(schema, "entitystore_tables")) ORDER BY position")
        for row in 0..<tableRows.count {
            let (name, type, idKind, count) = (
                try tableRows.requiredString(row, 0), try tableRows.requiredString(row, 1), try tableRows.requiredString(row, 2),
                try tableRows.requiredInt64(row, 3))
            guard let kind = ColumnKind(rawValue: idKind), count >= 0 else {
                throw PostgresStoreError.invalidData(table: name, detail: "invalid id kind or row count in entitystore_tables")
            }
            tables.append(StoredTable(
                name: name, entityType: type, idKind: kind, rowCount: Int(count), columns: columns[name] ?? [],
                indexes: indexes[name] ?? [], relations: relations[name] ?? []))
        }
        return PostgresStoreMetadata(
            schema: schema, formatVersion: format, appSchemaVersion: meta["app_schema_version"].flatMap { Int($0) } ?? 0,
            head: meta["log_head"].flatMap { Int64($0) } ?? 0, logStart: meta["log_start"].flatMap { Int64($0) } ?? 0, tables: tables)
    }

    /// The stored table `name`, if any. O(tables).
    public func table(named name: String) -> StoredTable? { tables.first { $0.name == name } }

    /// The dynamic-record schema mirroring these tables, their indexes and relations.
    public func dynamicSchema() throws -> Schema {
        var declared: [String: Table<DynamicRecord>] = [:]
        for stored in tables {
            var table = Table<DynamicRecord>(stored.name)
            let relationFields = Set(stored.relations.map(\.field))
            for index in stored.indexes where !(index.kind == .grouped && index.name == index.field && relationFields.contains(index.field)) {
                let field = index.field
                table = table.index(index.kind, named: index.name, field: field) { $0[field: field] }
            }
            declared[stored.name] = table
        }
        var result: [any AnyTable] = []
        for stored in tables {
            guard var table = declared[stored.name] else { continue }
            for relation in stored.relations {
                guard let target = declared[relation.targetTable] else {
                    throw PostgresStoreError.invalidData(table: stored.name, detail: "relation '\(relation.field)' targets '\(relation.targetTable)', which the store lacks")
                }
                table = table.references(field: relation.field, to: target, onDelete: relation.deleteRule)
            }
            result.append(table)
        }
        return try Schema(result)
    }
}

/// Which rows a restore loads: every table, some tables, and within a table only the
/// rows matching a condition on an indexed field.
public struct PostgresSelection: Sendable {
    /// The tables to load; nil for all.
    public var tables: Set<String>?
    /// A condition per table.
    public var conditions: [String: PostgresCondition] = [:]

    /// Every row of every table.
    public static var all: PostgresSelection { PostgresSelection(tables: nil) }

    /// Every row of the named tables; the others restore empty.
    public static func tables(_ names: some Sequence<String>) -> PostgresSelection {
        PostgresSelection(tables: Set(names))
    }

    /// Only the rows of `table` that match `condition` (the table is selected too).
    public func filtering(_ table: String, _ condition: PostgresCondition) -> PostgresSelection {
        var copy = self
        copy.conditions[table] = condition
        copy.tables?.insert(table)
        return copy
    }

    func includes(_ table: String) -> Bool { tables?.contains(table) ?? true }
}

/// A condition on one field that a partial load sends to the server: equality, or a
/// half-open range. The field must have a declared index (so the server reads only the
/// matching rows through its SQL index).
public struct PostgresCondition: Sendable {
    enum Bound: Sendable {
        case equals(EncodedValue)
        case range(lower: EncodedValue?, upper: EncodedValue?)
    }
    let field: String
    let bound: Bound

    /// Rows whose `field` equals `value`.
    /// - Throws: ``PostgresStoreError/invalidSelection(_:)`` for a value no column holds.
    public static func field(_ field: String, equals value: some Encodable) throws(PostgresStoreError) -> PostgresCondition {
        PostgresCondition(field: field, bound: .equals(try encode(value)))
    }

    /// Rows whose `field` is at least `lower` (if given) and below `upper` (if given).
    public static func field<V: Encodable>(_ field: String, from lower: V?, below upper: V?) throws(PostgresStoreError) -> PostgresCondition {
        PostgresCondition(field: field, bound: .range(lower: try lower.map { v throws(PostgresStoreError) in try encode(v) }, upper: try upper.map { v throws(PostgresStoreError) in try encode(v) }))
    }

    private static func encode(_ value: some Encodable) throws(PostgresStoreError) -> EncodedValue {
        do {
            let encoded = try RowEncoder(dialect: .postgres).encodeNested(value, path: [])
            if encoded.kind == .json || encoded.kind == nil { throw PostgresStoreError.invalidSelection("a condition compares a single value, not \(value)") }
            return encoded
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw .invalidSelection("cannot encode \(value): \(error)")
        }
    }

    /// `"field" = $n::type` and the like, binding the values.
    func sql(kind: ColumnKind, binds: inout [PostgresParameter]) -> String {
        func bind(_ value: EncodedValue) -> String {
            binds.append(PostgresParameter(value.value))
            return "$\(binds.count)::\(kind.sqlType)"
        }
        let column = SQL.quote(field)
        switch bound {
        case let .equals(value): return "\(column) = \(bind(value))"
        case let .range(lower, upper):
            var parts: [String] = []
            if let lower { parts.append("\(column) >= \(bind(lower))") }
            if let upper { parts.append("\(column) < \(bind(upper))") }
            return parts.isEmpty ? "TRUE" : parts.joined(separator: " AND ")
        }
    }

}

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

    private func makeFeed<T: TypedTable>(_ table: T, stored: PostgresStoreMetadata.StoredTable) throws -> any TableFeed {
        var names = ["id"]
        var kinds = [stored.idKind]
        var selected = [SQL.quote("id") + (stored.idKind.selectsAsText ? "::text" : "")]
        for column in stored.columns {
            names.append(column.name)
            kinds.append(column.kind)
            selected.append(SQL.quote(column.name) + (column.kind.selectsAsText ? "::text" : ""))
        }
        var binds: [PostgresParameter] = []
        var filter = ""
        if let condition = selection.conditions[stored.name] {
            let kind = condition.field == "id" ? stored.idKind : stored.columns.first(where: { $0.name == condition.field })?.kind
            guard let kind else {
                throw PostgresStoreError.invalidSelection("'\(stored.name).\(condition.field)' is not a stored column")
            }
            filter = " WHERE " + condition.sql(kind: kind, binds: &binds)
        }
        let sql = "SELECT \(selected.joined(separator: ", ")) FROM \(SQL.qualified(target.schema, stored.name))\(filter) ORDER BY \"id\""
        return TypedFeed(
            table: table, layout: RowLayout(table: stored.name, names: names, kinds: kinds), query: sql, binds: binds,
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
    let channel = UnboundedChunkChannel<T.Element>()
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
                    guard channel.send(chunk) else { throw BuilderStopped() }
                    chunk = []
                    chunk.reserveCapacity(Self.chunkSize)
                }
            }
        }
        try session.execute("CLOSE entitystore_feed")
        chunk.reverse()
        if !chunk.isEmpty, !channel.send(chunk) { throw BuilderStopped() }
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

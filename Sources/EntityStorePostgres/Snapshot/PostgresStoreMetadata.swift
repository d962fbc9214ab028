#if PostgreSQL
// The metadata model is the codec's, shared with the SQLite snapshot format; users of
// this module name it `StoreMetadata`.
@_exported import struct EntityStoreCodec.StoreMetadata
@_exported import enum EntityStoreCodec.NullMeaning
import EntityStore
import EntityStoreCodec

/// The metadata of a store kept in a PostgreSQL schema: its tables, as a snapshot file's
/// (``metadata``), and where its change log stands. What `entity-store inspect` shows,
/// and what a restore checks before reading a row. The shared model's members read
/// through it: `tables`, `formatVersion`, `appSchemaVersion`, `facts`.
@dynamicMemberLookup
public struct PostgresStoreMetadata: Sendable, Equatable {
    /// The versions, facts and tables, in the model a snapshot file's metadata shares.
    public let metadata: StoreMetadata
    /// The schema.
    public let schema: String
    /// The last change-log position.
    public let head: Int64
    /// Positions up to this one are no longer in the change log (a replica behind it reloads).
    public let logStart: Int64

    /// One stored table.
    @available(*, deprecated, renamed: "StoreMetadata.Table", message: "the metadata model is shared with the SQLite snapshot format")
    public typealias StoredTable = StoreMetadata.Table

    /// A member of ``metadata``: `tables`, `formatVersion`, `appSchemaVersion`, `facts`. O(1).
    public subscript<Value>(dynamicMember member: KeyPath<StoreMetadata, Value>) -> Value {
        metadata[keyPath: member]
    }

    /// The stored table `name`, if any. O(tables).
    public func table(named name: String) -> StoreMetadata.Table? { metadata.table(named: name) }

    /// The dynamic-record schema mirroring these tables, their indexes and relations
    /// (`StoreMetadata.dynamicSchema()`), with a relation to a table the store lacks a
    /// ``PostgresStoreError``. O(tables + indexes + relations).
    public func dynamicSchema() throws -> Schema {
        try metadata.dynamicSchema { relation in
            PostgresStoreError.invalidData(
                table: relation.table, detail: "relation '\(relation.field)' targets '\(relation.targetTable)', which the store lacks")
        }
    }

    /// Why a schema whose metadata table is empty is not a store.
    static let noFormatVersion = "entitystore_meta has no format_version"

    /// Whether `error` is what a reader meets when a full snapshot replaced the store while
    /// it waited: the new metadata table, committed after its snapshot, looks empty.
    static func isReplacedWhileWaiting(_ error: PostgresStoreError) -> Bool {
        if case let .notAStore(_, reason) = error { return reason == noFormatVersion }
        return false
    }

    /// Reads the metadata tables of `schema`. O(tables + columns + indexes).
    /// - Throws: ``PostgresStoreError/notAStore(schema:reason:)`` when the schema has no
    ///   store or one of a newer format.
    static func read(schema: String, _ session: PostgresSession) throws -> PostgresStoreMetadata {
        let present = try session.execute("SELECT to_regclass($1) IS NOT NULL", [.text(SQL.qualified(schema, "entitystore_meta"))])
        guard present.bool(0, 0) == true else {
            throw PostgresStoreError.notAStore(schema: schema, reason: "it has no entitystore_meta table (push a snapshot first)")
        }
        var facts: [String: String] = [:]
        let metaRows = try session.execute("SELECT key, value FROM \(SQL.qualified(schema, "entitystore_meta"))")
        for row in 0..<metaRows.count {
            facts[try metaRows.requiredString(row, 0)] = try metaRows.requiredString(row, 1)
        }
        guard let format = facts["format_version"].flatMap({ Int($0) }) else {
            throw PostgresStoreError.notAStore(schema: schema, reason: Self.noFormatVersion)
        }
        guard format <= MetadataTables.formatVersion else {
            throw PostgresStoreError.notAStore(schema: schema, reason: "format \(format) is newer than this library's \(MetadataTables.formatVersion)")
        }
        var rows = StoreMetadata.Rows()
        func text(_ result: PostgresRows, _ row: Int, _ columns: Int) throws -> [String] {
            try (0..<columns).map { column throws(PostgresStoreError) in try result.requiredString(row, column) }
        }
        do {
            let columns = try session.execute(
                "SELECT table_name, name, kind, nulls, nullable FROM \(SQL.qualified(schema, "entitystore_columns")) ORDER BY table_name, position")
            for row in 0..<columns.count {
                let cells = try text(columns, row, 4)
                try rows.column(table: cells[0], name: cells[1], kind: cells[2], nullable: columns.bool(row, 4) ?? true, nulls: cells[3])
            }
            let indexes = try session.execute("SELECT table_name, name, kind, field FROM \(SQL.qualified(schema, "entitystore_indexes")) ORDER BY table_name, name")
            for row in 0..<indexes.count {
                let cells = try text(indexes, row, 4)
                try rows.index(table: cells[0], name: cells[1], kind: cells[2], field: cells[3])
            }
            let relations = try session.execute(
                "SELECT table_name, field, target_table, delete_rule FROM \(SQL.qualified(schema, "entitystore_relations")) ORDER BY table_name, field")
            for row in 0..<relations.count {
                let cells = try text(relations, row, 4)
                try rows.relation(table: cells[0], field: cells[1], target: cells[2], rule: cells[3])
            }
        } catch let error as InvalidStoredValue {
            throw PostgresStoreError.invalidData(table: error.table, detail: error.detail)
        }
        var tables: [StoreMetadata.Table] = []
        let tableRows = try session.execute("SELECT name, entity_type, id_kind, row_count FROM \(SQL.qualified(schema, "entitystore_tables")) ORDER BY position")
        for row in 0..<tableRows.count {
            let (cells, count) = (try text(tableRows, row, 3), try tableRows.requiredInt64(row, 3))
            guard count >= 0 else { throw PostgresStoreError.invalidData(table: cells[0], detail: "invalid row count in entitystore_tables") }
            do {
                tables.append(try rows.table(name: cells[0], entityType: cells[1], idKind: cells[2], rowCount: Int(clamping: count)))
            } catch {
                throw PostgresStoreError.invalidData(table: error.table, detail: error.detail)
            }
        }
        let metadata = StoreMetadata(
            formatVersion: format, appSchemaVersion: facts["app_schema_version"].flatMap { Int($0) } ?? 0, facts: facts, tables: tables)
        return PostgresStoreMetadata(
            metadata: metadata, schema: schema, head: facts["log_head"].flatMap { Int64($0) } ?? 0,
            logStart: facts["log_start"].flatMap { Int64($0) } ?? 0)
    }
}

extension StoreMetadata.Table {
    /// How a reader decodes the table's rows: `id` (of kind ``idKind``), then every other
    /// column, with their kinds.
    var readLayout: RowLayout {
        let after = columns.filter { $0.name != "id" }
        return RowLayout(table: name, names: ["id"] + after.map(\.name), kinds: [idKind] + after.map(\.kind))
    }

    /// The `SELECT` list of ``readLayout``'s columns, each kind the decoder reads as text
    /// cast to text.
    var selectList: String {
        let layout = readLayout
        return zip(layout.names, layout.kinds).map { SQL.quote($0) + ($1?.selectsAsText == true ? "::text" : "") }.joined(separator: ", ")
    }
}
#endif

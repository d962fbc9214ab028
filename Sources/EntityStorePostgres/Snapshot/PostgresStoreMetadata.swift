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
extension PostgresStoreMetadata.StoredTable {
    /// How a reader decodes the table's rows: `id`, then every column, with their kinds.
    var readLayout: RowLayout {
        RowLayout(table: name, names: ["id"] + columns.map(\.name), kinds: [idKind] + columns.map(\.kind))
    }

    /// The `SELECT` list of ``readLayout``'s columns, each kind the decoder reads as text
    /// cast to text.
    var selectList: String {
        ([("id", idKind)] + columns).map { SQL.quote($0.0) + ($0.1.selectsAsText ? "::text" : "") }.joined(separator: ", ")
    }
}
#endif

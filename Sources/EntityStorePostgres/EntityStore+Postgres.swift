#if PostgreSQL
import EntityStore
import Foundation

/// What a restore from PostgreSQL loaded.
public struct PostgresRestoreSummary: Sendable, CustomStringConvertible {
    /// Where it came from (no password).
    public let target: String
    /// The change-log position the loaded contents are at.
    public let position: Int64
    /// The rows loaded per table, in schema order.
    public let tables: [PostgresSnapshotSummary.TableCount]
    /// The store revision the restore committed.
    public let revision: UInt64
    /// Wall time.
    public let duration: Duration

    /// The total number of rows loaded.
    public var rows: Int { tables.reduce(0) { $0 + $1.rows } }

    /// `N rows in M tables from target in T`.
    public var description: String { "\(rows) rows in \(tables.count) tables from \(target) in \(duration)" }
}

extension EntityState {
    /// Writes this state into `target`'s schema, replacing what it held, atomically: in
    /// one transaction, with `COPY ... FROM STDIN`; a reader sees the old contents or the
    /// new, and a failure (a killed process, a stopped server) leaves the old.
    ///
    /// The layout is the snapshot file's (docs/SnapshotFormat.md, "PostgreSQL layout" in
    /// docs/Scaling.md): one table per entity table, the metadata tables, the declared
    /// indexes. Replicas following the schema with ``PostgresSync`` reload fully after it.
    ///
    /// `dateFields` names, by table, the fields of dynamic tables that hold dates as the
    /// snapshot format's date text (what a snapshot file's dynamic readers give for a
    /// `date` column): they become `date` columns, as a typed table's `Date` fields do.
    /// - Throws: ``PostgresStoreError`` (unreachable server, refused login, an entity that
    ///   cannot be stored, a date field holding something else than a date's text, a
    ///   schema that holds other tables ...).
    /// - Complexity: O(n) in the rows of every table, streamed: memory stays O(1 MiB)
    ///   beyond the state; one round trip per table and per declared index.
    @discardableResult
    public func writeSnapshot(
        to target: PostgresTarget, appSchemaVersion: Int = 0, dateFields: [String: Set<String>] = [:]
    ) async throws(PostgresStoreError) -> PostgresSnapshotSummary {
        try await PostgresSnapshotWriter(state: self, target: target, appSchemaVersion: appSchemaVersion, dateFields: dateFields).write()
    }

    /// Reads the store in `target`'s schema into a new state for `schema`, without a store.
    /// - Complexity: O(n log n) in the rows loaded.
    public static func readSnapshot(
        from target: PostgresTarget, schema: Schema, selection: PostgresSelection = .all
    ) async throws(PostgresStoreError) -> EntityState {
        try await PostgresSnapshotReader(target: target, selection: selection).read(schema: schema).0
    }
}

extension EntityStore {
    /// Writes a consistent point-in-time copy of the store into `target`'s schema,
    /// replacing its previous contents atomically (see ``EntityState/writeSnapshot(to:appSchemaVersion:dateFields:)``).
    /// Commits are not blocked while it runs.
    /// - Complexity: O(n) in the rows of every table.
    @discardableResult
    public func snapshot(
        to target: PostgresTarget, appSchemaVersion: Int = 0, dateFields: [String: Set<String>] = [:]
    ) async throws(PostgresStoreError) -> PostgresSnapshotSummary {
        try await state.writeSnapshot(to: target, appSchemaVersion: appSchemaVersion, dateFields: dateFields)
    }

    /// Replaces every table with the store in `target`'s schema, or with the part of it
    /// `selection` names (tables it leaves out restore empty; a condition loads only the
    /// matching rows of its table, read through the field's SQL index).
    ///
    /// Everything is read in one consistent transaction and validated (metadata, every
    /// row against the Swift types, row counts) into a new state, decoded on one thread
    /// while another builds the tables; only then is it swapped in, as one commit. On
    /// any error the store is untouched.
    /// - Complexity: O(n log n) in the rows loaded.
    @discardableResult
    public func restore(from target: PostgresTarget, selection: PostgresSelection = .all) async throws(PostgresStoreError) -> PostgresRestoreSummary {
        let start = ContinuousClock.now
        let (restored, metadata) = try await PostgresSnapshotReader(target: target, selection: selection).read(schema: schema)
        let revision: UInt64
        do { revision = try replaceAll(with: restored, name: "restore") } catch {
            throw .invalidData(table: "?", detail: String(describing: error))
        }
        return PostgresRestoreSummary(
            target: target.description, position: metadata.head,
            tables: restored.tableNames.map { .init(name: $0, rows: restored.count(ofTable: $0) ?? 0) }, revision: revision,
            duration: ContinuousClock.now - start)
    }

    /// A store of dynamic records holding the store in `target`'s schema (or the part
    /// `selection` names), with the tables, indexes and relations its metadata declares:
    /// no Swift types needed. A `date` column's values are their date text, as from a
    /// snapshot file.
    /// - Complexity: O(n log n) in the rows loaded.
    public static func restoringDynamic(from target: PostgresTarget, selection: PostgresSelection = .all) async throws(PostgresStoreError) -> EntityStore {
        let metadata = try await PostgresStore.metadata(of: target)
        let schema: Schema
        do { schema = try metadata.dynamicSchema() } catch let error as PostgresStoreError { throw error } catch {
            throw .invalidData(table: "?", detail: String(describing: error))
        }
        let store = EntityStore(schema: schema)
        try await store.restore(from: target, selection: selection)
        return store
    }
}

/// Inspection of a store in PostgreSQL that needs no Swift types.
public enum PostgresStore {
    /// The metadata of the store in `target`'s schema.
    /// - Complexity: one connection and five small queries.
    public static func metadata(of target: PostgresTarget) async throws(PostgresStoreError) -> PostgresStoreMetadata {
        try await target.withSession { session in
            try PostgresStoreMetadata.read(schema: target.schema, session)
        }
    }
}
#endif

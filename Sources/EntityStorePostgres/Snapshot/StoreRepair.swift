#if PostgreSQL
import EntityStore

/// What ``PostgresTarget/repairStore()`` found and did.
public struct PostgresRepairSummary: Sendable, CustomStringConvertible {
    /// A table whose recorded row count differed from its rows.
    public struct Recount: Sendable, Hashable {
        /// The table's name.
        public let table: String
        /// The count the metadata recorded.
        public let recorded: Int64
        /// The rows the table holds.
        public let actual: Int64
    }
    /// The tables recounted, in schema order (only those that differed).
    public let recounts: [Recount]
    /// The change-log position the store is at now: every replica reloads past it.
    public let position: Int64

    /// One line per recount and the new position.
    public var description: String {
        let counts = recounts.map { "table \($0.table): \($0.recorded) rows recorded, \($0.actual) held" }
        return (counts + ["every replica reloads at position \(position)"]).joined(separator: "\n")
    }
}

extension PostgresTarget {
    /// Makes the store in this schema consistent again after its tables were written by
    /// hand (`psql`, another program): such writes bypass the change log, so replicas
    /// never pull them, and they leave the recorded row counts wrong, which every open
    /// and pull then refuses. In one transaction that pushes wait for, it recounts every
    /// table into the metadata and moves the change log's start past its head, so each
    /// replica reloads everything on its next pull (and sees the hand-written rows);
    /// listening replicas are notified. Rows that do not decode still fail the reload,
    /// naming the table and the row.
    /// - Complexity: one `count(*)` per table, O(n); the reloads cost a restore each.
    @discardableResult
    public func repairStore() async throws(PostgresStoreError) -> PostgresRepairSummary {
        let schema = self.schema
        try SQL.checkIdentifier(schema, what: "the schema", table: schema)
        return try await withSession { session in
            try SQL.transaction(session) {
                try PostgresSnapshotWriter.serialize(schema: schema, session)
                let meta = SQL.qualified(schema, "entitystore_meta")
                let present = try session.execute("SELECT to_regclass($1) IS NOT NULL", [.text(meta)])
                guard present.bool(0, 0) == true else {
                    throw PostgresStoreError.notAStore(schema: schema, reason: "it has no entitystore_meta table")
                }
                // As a snapshot does: pushes wait before taking anything, readers go on.
                try session.execute("LOCK TABLE \(meta) IN EXCLUSIVE MODE")
                let head = try session.execute("SELECT value FROM \(meta) WHERE key = 'log_head'")
                let current = head.isEmpty ? 0 : Int64(head.string(0, 0) ?? "0") ?? 0
                var recounts: [PostgresRepairSummary.Recount] = []
                let tables = try session.execute("SELECT name, row_count FROM \(SQL.qualified(schema, "entitystore_tables")) ORDER BY position")
                for row in 0..<tables.count {
                    let name = try tables.requiredString(row, 0)
                    let recorded = try tables.requiredInt64(row, 1)
                    try SQL.checkIdentifier(name, what: "the table", table: name)
                    let actual = try session.execute("SELECT count(*) FROM \(SQL.qualified(schema, name))").int64(0, 0) ?? 0
                    guard actual != recorded else { continue }
                    recounts.append(.init(table: name, recorded: recorded, actual: actual))
                    try session.execute(
                        "UPDATE \(SQL.qualified(schema, "entitystore_tables")) SET row_count = $1::int8 WHERE name = $2",
                        [.integer(actual), .text(name)])
                }
                let position = current + 1
                try session.execute("DELETE FROM \(SQL.qualified(schema, "entitystore_changes"))")
                try session.execute(
                    "UPDATE \(meta) SET value = $1 WHERE key IN ('log_head', 'log_start')", [.text(String(position))])
                try session.execute("SELECT pg_notify($1, $2)", [.text(SQL.channel(for: schema)), .text(String(position))])
                return PostgresRepairSummary(recounts: recounts, position: position)
            }
        }
    }
}
#endif

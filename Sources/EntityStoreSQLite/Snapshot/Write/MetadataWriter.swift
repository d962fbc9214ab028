import EntityStore
import EntityStoreCodec
import Foundation

/// Fills the `entitystore_*` metadata tables that describe a snapshot to readers that
/// know no Swift types.
struct MetadataWriter {
    let connection: SQLiteConnection

    /// Records one table: entity type, ID kind, row count, columns, indexes, relations.
    func recordTable(_ table: any AnyTable, layout: TableLayout, rows: Int, position: Int) throws {
        try connection.prepare("""
            INSERT OR REPLACE INTO entitystore_tables (name, entity_type, id_kind, row_count, position) VALUES (?, ?, ?, ?, ?)
            """).run([
                .text(table.name), .text(table.entityTypeName), .text((layout.idKind ?? .null).rawValue),
                .integer(Int64(rows)), .integer(Int64(position)),
            ])
        try recordColumns(layout)
        try connection.prepare("DELETE FROM entitystore_indexes WHERE table_name = ?").run([.text(table.name)])
        let index = try connection.prepare("INSERT INTO entitystore_indexes (table_name, name, kind, field) VALUES (?, ?, ?, ?)")
        for description in table.indexDescriptions {
            try index.run([.text(table.name), .text(description.name), .text(description.kind.rawValue), .text(description.field)])
        }
        try connection.prepare("DELETE FROM entitystore_relations WHERE table_name = ?").run([.text(table.name)])
        let relation = try connection.prepare(
            "INSERT INTO entitystore_relations (table_name, field, target_table, delete_rule) VALUES (?, ?, ?, ?)")
        for spec in table.relations {
            try relation.run([.text(table.name), .text(spec.field), .text(spec.targetTable), .text(spec.deleteRule.rawValue)])
        }
    }

    /// Rewrites the column list of one table.
    func recordColumns(_ layout: TableLayout) throws {
        try connection.prepare("DELETE FROM entitystore_columns WHERE table_name = ?").run([.text(layout.table)])
        let column = try connection.prepare(
            "INSERT INTO entitystore_columns (table_name, name, kind, nullable, position, nulls) VALUES (?, ?, ?, ?, ?, ?)")
        for (position, entry) in layout.columns.enumerated() {
            try column.run([
                .text(layout.table), .text(entry.name), .text((entry.kind ?? .null).rawValue),
                .integer(entry.nullable ? 1 : 0), .integer(Int64(position)), .text(entry.nulls.rawValue),
            ])
        }
    }

    /// Updates a table's row count.
    func recordRowCount(table: String, rows: Int) throws {
        try connection.prepare("UPDATE entitystore_tables SET row_count = ? WHERE name = ?")
            .run([.integer(Int64(rows)), .text(table)])
    }

    /// Records the format and app schema versions, who wrote the file, and when, if
    /// `recordsCreationTime`.
    func recordMeta(appSchemaVersion: Int, recordsCreationTime: Bool = true) throws {
        let statement = try connection.prepare("INSERT OR REPLACE INTO entitystore_meta (key, value) VALUES (?, ?)")
        var facts = [
            ("format_version", String(FormatMigrator.currentVersion)),
            ("app_schema_version", String(appSchemaVersion)),
            ("library", "EntityStore"),
        ]
        if recordsCreationTime { facts.append(("created_at", ISO8601DateFormatter().string(from: Date()))) }
        for (key, value) in facts {
            try statement.run([.text(key), .text(value)])
        }
    }

    /// Creates an SQL index for each declared index on a top-level column, so `sqlite3`
    /// queries on a snapshot use them too.
    func createSQLIndexes(for table: any AnyTable) throws {
        let columns = Set(try connection.prepare("SELECT name FROM entitystore_columns WHERE table_name = ?")
            .rows([.text(table.name)]).compactMap { row -> String? in
                if case let .text(name)? = row.first { return name }
                return nil
            })
        for index in table.indexDescriptions where columns.contains(index.field) && index.field != "id" {
            let name = quoteIdentifier("entitystore_index_\(table.name)_\(index.name)")
            try connection.execute("""
                CREATE \(index.kind == .unique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(name) \
                ON \(quoteIdentifier(table.name)) (\(quoteIdentifier(index.field)))
                """)
        }
    }
}

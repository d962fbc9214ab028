import EntityStoreSQLite
import Foundation

/// Damaged and malicious snapshot files, made from a valid one: the kinds of file a
/// hostile author or a broken tool produces (metadata that lies, views where tables should
/// be, generated columns, triggers, duplicate keys, absurd counts, deep nesting, odd names).
///
/// Every reader must answer each with a clear error or a correct answer, in bounded time
/// and memory, and never crash; `verify` must call a file sound only if a restore accepts it.
package enum HostileSnapshots {
    /// One hostile file.
    package struct Sample: Sendable {
        /// What is wrong with it, for test output.
        package let name: String
        /// Where it is.
        package let path: String
    }

    /// A mutation of a copy of the source snapshot.
    private struct Mutation: Sendable {
        let name: String
        let apply: @Sendable (SQLiteConnection, Target) throws -> Void
    }

    /// What the mutations work on: a table with rows, one of its non-ID columns, and a
    /// unique index if the snapshot declares one.
    private struct Target: Sendable {
        let table: String
        let column: String
        let uniqueIndex: (table: String, name: String, field: String)?
        var quotedTable: String { quote(table) }
    }

    /// Makes every kind of hostile file from the valid snapshot at `source` (in rollback
    /// mode, with at least one table holding two rows) inside `directory`.
    package static func make(from source: String, in directory: String) throws -> [Sample] {
        var samples: [Sample] = []
        for (number, mutation) in mutations.enumerated() {
            let path = (directory as NSString).appendingPathComponent("hostile-\(number).sqlite")
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(atPath: source, toPath: path)
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try mutation.apply(connection, try target(connection))
            try connection.close()
            samples.append(Sample(name: mutation.name, path: path))
        }
        return samples
    }

    private static func target(_ connection: SQLiteConnection) throws -> Target {
        let tables = try connection.prepare("SELECT name FROM entitystore_tables WHERE row_count >= 2 ORDER BY position").rows()
        guard case let .text(table)? = tables.first?.first else { throw HostileSnapshotError("the source needs a table with two rows") }
        let columns = try connection.prepare(
            "SELECT name FROM entitystore_columns WHERE table_name = ? AND name <> 'id' ORDER BY position").rows([.text(table)])
        guard case let .text(column)? = columns.first?.first else { throw HostileSnapshotError("'\(table)' needs a column besides id") }
        let unique = try connection.prepare("SELECT table_name, name, field FROM entitystore_indexes WHERE kind = 'unique' LIMIT 1").rows()
        var uniqueIndex: (String, String, String)?
        if let row = unique.first, case let .text(t) = row[0], case let .text(n) = row[1], case let .text(f) = row[2] {
            uniqueIndex = (t, n, f)
        }
        return Target(table: table, column: column, uniqueIndex: uniqueIndex)
    }

    private static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// A recursive view that never ends, with the given columns.
    private static func endlessView(_ name: String, columns: [String]) -> String {
        let values = columns.enumerated().map { index, column in index == columns.count - 1 ? "n AS \(quote(column))" : "'x' AS \(quote(column))" }
        return "CREATE VIEW \(quote(name)) AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT \(values.joined(separator: ", ")) FROM r"
    }

    /// Recreates `table` as a plain copy without its constraints (so values its
    /// declaration forbade can be written), keeping its rows.
    private static func withoutConstraints(_ connection: SQLiteConnection, _ table: String) throws {
        let quoted = quote(table)
        try connection.execute("""
            CREATE TABLE hostile_copy AS SELECT * FROM \(quoted);
            DROP TABLE \(quoted);
            ALTER TABLE hostile_copy RENAME TO \(quoted);
            """)
    }

    private static let mutations: [Mutation] = [
        Mutation(name: "a row count of Int64.max") { db, t in
            try db.prepare("UPDATE entitystore_tables SET row_count = 9223372036854775807 WHERE name = ?").run([.text(t.table)])
        },
        Mutation(name: "a negative row count") { db, t in
            try db.execute("PRAGMA ignore_check_constraints = 1")
            try db.prepare("UPDATE entitystore_tables SET row_count = -5 WHERE name = ?").run([.text(t.table)])
        },
        Mutation(name: "row counts whose sum overflows") { db, _ in
            try db.execute("UPDATE entitystore_tables SET row_count = 4611686018427387904")
        },
        Mutation(name: "entitystore_columns replaced by an endless recursive view") { db, _ in
            try db.execute("ALTER TABLE entitystore_columns RENAME TO hostile_columns; "
                + endlessView("entitystore_columns", columns: ["table_name", "name", "kind", "nullable", "position"]))
        },
        Mutation(name: "entitystore_tables replaced by an endless recursive view") { db, _ in
            try db.execute("ALTER TABLE entitystore_tables RENAME TO hostile_tables; "
                + endlessView("entitystore_tables", columns: ["name", "entity_type", "id_kind", "row_count", "position"]))
        },
        Mutation(name: "entitystore_meta replaced by an endless recursive view") { db, _ in
            try db.execute("ALTER TABLE entitystore_meta RENAME TO hostile_meta; " + endlessView("entitystore_meta", columns: ["key", "value"]))
        },
        Mutation(name: "an entity table replaced by an endless recursive view") { db, t in
            let columns = try db.prepare("SELECT name FROM pragma_table_info(?)").rows([.text(t.table)]).compactMap { row -> String? in
                if case let .text(name) = row[0] { return name } else { return nil }
            }
            try db.execute("DROP TABLE \(t.quotedTable); " + endlessView(t.table, columns: columns))
        },
        Mutation(name: "a generated column of 900 MB per row that the metadata does not list") { db, t in
            try db.execute("ALTER TABLE \(t.quotedTable) ADD COLUMN hostile_blob BLOB GENERATED ALWAYS AS (zeroblob(900000000)) VIRTUAL")
        },
        Mutation(name: "a generated column of 900 MB per row that the metadata lists") { db, t in
            try db.execute("ALTER TABLE \(t.quotedTable) ADD COLUMN hostile_blob BLOB GENERATED ALWAYS AS (zeroblob(900000000)) VIRTUAL")
            try db.prepare("INSERT INTO entitystore_columns (table_name, name, kind, nullable, position) VALUES (?, 'hostile_blob', 'blob', 1, 999)").run([.text(t.table)])
        },
        Mutation(name: "a NULL id") { db, t in
            try withoutConstraints(db, t.table)
            try db.execute("UPDATE \(t.quotedTable) SET \"id\" = NULL WHERE rowid = (SELECT min(rowid) FROM \(t.quotedTable))")
        },
        Mutation(name: "a duplicated id") { db, t in
            try withoutConstraints(db, t.table)
            try db.execute("UPDATE \(t.quotedTable) SET \"id\" = (SELECT min(\"id\") FROM \(t.quotedTable)) WHERE rowid = (SELECT max(rowid) FROM \(t.quotedTable))")
        },
        Mutation(name: "a duplicated entitystore_tables row") { db, t in
            try withoutConstraints(db, "entitystore_tables")
            try db.prepare("INSERT INTO entitystore_tables SELECT name, entity_type, id_kind, row_count, 1000 FROM entitystore_tables WHERE name = ?")
                .run([.text(t.table)])
        },
        Mutation(name: "the same table listed twice, in two letter cases") { db, t in
            try db.prepare("INSERT INTO entitystore_tables SELECT upper(name), entity_type, id_kind, row_count, 1000 FROM entitystore_tables WHERE name = ?")
                .run([.text(t.table)])
        },
        Mutation(name: "JSON nested 100,000 levels deep") { db, t in
            let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
            try db.execute("ALTER TABLE \(t.quotedTable) ADD COLUMN hostile_json TEXT")
            try db.prepare("UPDATE \(t.quotedTable) SET hostile_json = ?").run([.text(deep)])
            try db.prepare("INSERT INTO entitystore_columns (table_name, name, kind, nullable, position) VALUES (?, 'hostile_json', 'json', 1, 998)").run([.text(t.table)])
        },
        Mutation(name: "JSON nested 100,000 levels deep in a listed nested column") { db, t in
            let deep = String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)
            let json = try db.prepare("SELECT table_name, name FROM entitystore_columns WHERE kind = 'json' LIMIT 1").rows()
            if let row = json.first, case let .text(table) = row[0], case let .text(column) = row[1] {
                try db.prepare("UPDATE \(quote(table)) SET \(quote(column)) = ?").run([.text(deep)])
            } else {
                try db.prepare("UPDATE \(t.quotedTable) SET \(quote(t.column)) = ?").run([.text(deep)])
            }
        },
        Mutation(name: "two rows with the same key under a declared unique index") { db, t in
            let (table, name, field) = t.uniqueIndex ?? (t.table, "hostile_unique", t.column)
            if t.uniqueIndex == nil {
                try db.prepare("INSERT INTO entitystore_indexes VALUES (?, ?, 'unique', ?)").run([.text(table), .text(name), .text(field)])
            }
            try db.execute("DROP INDEX IF EXISTS \(quote("entitystore_index_\(table)_\(name)"))")
            try db.execute("UPDATE \(quote(table)) SET \(quote(field)) = (SELECT \(quote(field)) FROM \(quote(table)) LIMIT 1)")
        },
        Mutation(name: "a column of an unknown kind") { db, t in
            try db.prepare("UPDATE entitystore_columns SET kind = 'hostile' WHERE table_name = ? AND name = ?").run([.text(t.table), .text(t.column)])
        },
        Mutation(name: "a column listed twice in two letter cases") { db, t in
            try db.prepare("INSERT INTO entitystore_columns (table_name, name, kind, nullable, position) SELECT table_name, upper(name), kind, nullable, 997 FROM entitystore_columns WHERE table_name = ? AND name = ?")
                .run([.text(t.table), .text(t.column)])
        },
        Mutation(name: "a trigger") { db, t in
            try db.execute("""
                CREATE TRIGGER hostile AFTER UPDATE ON \(t.quotedTable) BEGIN
                INSERT INTO \(t.quotedTable) (\"id\") WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n + 1000000 FROM r;
                END
                """)
        },
        Mutation(name: "an entity table that is a virtual table") { db, t in
            try db.execute("DROP TABLE \(t.quotedTable); CREATE VIRTUAL TABLE \(t.quotedTable) USING fts5(\"id\", \(quote(t.column)))")
        },
        Mutation(name: "an index on a field no row has") { db, t in
            try db.prepare("INSERT INTO entitystore_indexes VALUES (?, 'hostile_ghost', 'unique', 'hostile_ghost_field')").run([.text(t.table)])
        },
        Mutation(name: "a relation to a table the file lacks") { db, t in
            try db.prepare("INSERT OR REPLACE INTO entitystore_relations VALUES (?, ?, 'hostile_nowhere', 'cascade')").run([.text(t.table), .text(t.column)])
        },
        Mutation(name: "a table name with quotes, a newline, a tab and a semicolon") { db, t in
            let odd = "we\"ird 'name'\n\t;DROP TABLE x ✨"
            try db.execute("ALTER TABLE \(t.quotedTable) RENAME TO \(quote(odd))")
            for (table, column) in [("entitystore_tables", "name"), ("entitystore_columns", "table_name"), ("entitystore_indexes", "table_name"), ("entitystore_relations", "table_name"), ("entitystore_relations", "target_table")] {
                try db.prepare("UPDATE \(table) SET \(column) = ? WHERE \(column) = ?").run([.text(odd), .text(t.table)])
            }
        },
        Mutation(name: "a format version of Int32.max") { db, _ in
            try db.execute("PRAGMA user_version = 2147483647")
        },
        Mutation(name: "a negative format version") { db, _ in
            try db.execute("PRAGMA user_version = -1")
        },
        Mutation(name: "an id kind that contradicts the stored ids") { db, t in
            try db.prepare("UPDATE entitystore_tables SET id_kind = 'blob' WHERE name = ?").run([.text(t.table)])
        },
        Mutation(name: "an app schema version that is not a number") { db, _ in
            try db.execute("INSERT OR REPLACE INTO entitystore_meta VALUES ('app_schema_version', '99999999999999999999999')")
        },
        Mutation(name: "a metadata table missing") { db, _ in
            try db.execute("DROP TABLE entitystore_indexes")
        },
        Mutation(name: "a listed table missing") { db, t in
            try db.execute("DROP TABLE \(t.quotedTable)")
        },
        Mutation(name: "a real value in an integer id column") { db, t in
            try withoutConstraints(db, t.table)
            try db.execute("UPDATE \(t.quotedTable) SET \"id\" = 1.5 WHERE rowid = (SELECT min(rowid) FROM \(t.quotedTable))")
        },
    ]
}

/// Why a hostile file could not be made from the source given.
package struct HostileSnapshotError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

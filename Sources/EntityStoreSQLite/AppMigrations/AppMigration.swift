import EntityStoreCodec

/// One forward-only step of an app's own schema, run on restore when the snapshot's app
/// schema version is older: SQL, or a closure over the snapshot's database.
///
/// Each step runs in its own transaction together with the version it records; steps
/// never run twice. Use them to reshape stored rows when the Swift types change (rename
/// a column, fill a new non-optional field ...).
///
/// After each step, still inside its transaction, the snapshot's metadata is brought in
/// line with the tables as the step left them (read with `pragma table_info`): dropped
/// tables and columns leave the metadata, with their indexes and relations; a renamed
/// column keeps its kind, and the indexes and relations on it follow it; an added column
/// or table gets a kind from its declared SQL type and its values (`BOOLEAN` 0/1 is
/// `bool`, `DATE`/`DATETIME`/`TIMESTAMP` text is `date`, `UUID` text is `uuid`, `JSON`
/// text is `json`; otherwise integers are `integer`, numbers `double`, text `string`,
/// blobs `blob`); and row counts follow inserts and deletes. A column whose values no kind
/// describes (text and numbers mixed, say), or a table without an `id` column, fails
/// the step with ``SnapshotError/invalidData(table:detail:)``, and it is rolled back.
public struct AppMigration: Sendable {
    /// The app schema version this step brings the file to.
    public let version: Int
    /// A name for logs and the `entitystore_app_migrations` table.
    public let name: String
    let body: @Sendable (AppMigrationDatabase) throws -> Void

    /// A step that runs `body` on the snapshot's database.
    public init(version: Int, name: String, _ body: @escaping @Sendable (AppMigrationDatabase) throws -> Void) {
        self.version = version
        self.name = name
        self.body = body
    }

    /// A step that runs an SQL script.
    public static func sql(version: Int, name: String, _ script: String) -> AppMigration {
        AppMigration(version: version, name: name) { database in try database.execute(script) }
    }
}

/// The snapshot's database as an app migration sees it.
public struct AppMigrationDatabase {
    let connection: SQLiteConnection
    let renames = ColumnRenames()

    /// Runs one or more SQL statements.
    /// - Complexity: that of the statements.
    public func execute(_ sql: String) throws {
        try connection.execute(sql)
    }

    /// Runs one query with `arguments` bound to its parameters (`?`, `?1` ..., in order)
    /// and returns every row's values.
    /// - Throws: ``SQLiteError``, also when the number of arguments is not the number of
    ///   parameters.
    /// - Complexity: that of the query, plus O(rows × columns) to collect the result.
    public func rows(_ sql: String, _ arguments: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        try connection.prepare(sql).rows(arguments)
    }

    /// Renames column `column` of `table` to `name` (`ALTER TABLE … RENAME COLUMN`), and
    /// records the rename so the column keeps its kind and its indexes and relations
    /// follow it. A plain `ALTER TABLE … RENAME COLUMN` in ``execute(_:)`` is recognized
    /// only when a declared index covers the column; otherwise it reads as a dropped
    /// column and a new one.
    /// - Complexity: that of SQLite's rename (it rewrites the schema, not the rows).
    public func renameColumn(_ column: String, in table: String, to name: String) throws {
        try connection.execute(
            "ALTER TABLE \(quoteIdentifier(table)) RENAME COLUMN \(quoteIdentifier(column)) TO \(quoteIdentifier(name))")
        renames.record(table: table, from: column, to: name)
    }
}

/// The column renames of one app migration step, composed (a → b then b → c is a → c).
final class ColumnRenames {
    private(set) var byTable: [String: [String: String]] = [:]

    func record(table: String, from old: String, to new: String) {
        var renames = byTable[table] ?? [:]
        if let original = renames.first(where: { $0.value == old })?.key {
            renames[original] = new
        } else {
            renames[old] = new
        }
        byTable[table] = renames
    }
}

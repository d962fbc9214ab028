/// One forward-only step of an app's own schema, run on restore when the snapshot's app
/// schema version is older: SQL, or a closure over the snapshot's database.
///
/// Each step runs in its own transaction together with the version it records; steps
/// never run twice. Use them to reshape stored rows when the Swift types change (rename
/// a column, fill a new non-optional field ...).
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

    /// Runs one or more SQL statements.
    public func execute(_ sql: String) throws {
        try connection.execute(sql)
    }

    /// Runs a query and returns every row's values.
    public func rows(_ sql: String, _ arguments: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        let statement = try connection.prepare(sql)
        try statement.bind(arguments)
        return try statement.rows()
    }
}

/// Runs the app's migrations that a snapshot has not seen, each in its own transaction
/// with the version it records and the metadata brought in line with the tables the step
/// left (``MigratedMetadata``).
struct AppMigrator {
    let options: SnapshotOptions

    func migrate(_ connection: SQLiteConnection) throws(SnapshotError) {
        let path = connection.path
        do {
            let rows = try connection.prepare("SELECT value FROM entitystore_meta WHERE key = 'app_schema_version'").rows()
            var current = 0
            if case let .text(value)? = rows.first?.first { current = Int(value) ?? 0 }
            for migration in options.migrations.sorted(by: { $0.version < $1.version })
            where migration.version > current && migration.version <= options.appSchemaVersion {
                try connection.transaction(.immediate) {
                    let before = try SQLTableShapes.read(connection)
                    let changes = connection.totalChanges
                    let database = AppMigrationDatabase(connection: connection)
                    try migration.body(database)
                    try MigratedMetadata(
                        connection: connection, migration: migration, before: before,
                        rowsChanged: connection.totalChanges != changes, declaredRenames: database.renames.byTable
                    ).reconcile()
                    try connection.prepare("INSERT OR REPLACE INTO entitystore_app_migrations (version, name) VALUES (?, ?)")
                        .run([.integer(Int64(migration.version)), .text(migration.name)])
                    try connection.prepare("INSERT OR REPLACE INTO entitystore_meta (key, value) VALUES ('app_schema_version', ?)")
                        .run([.text(String(migration.version))])
                }
                current = migration.version
            }
            if current < options.appSchemaVersion {
                try connection.prepare("INSERT OR REPLACE INTO entitystore_meta (key, value) VALUES ('app_schema_version', ?)")
                    .run([.text(String(options.appSchemaVersion))])
            }
        } catch let error as SnapshotError {
            throw error
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch {
            throw .invalidData(table: "entitystore_app_migrations", detail: "app migration failed: \(error)")
        }
    }
}

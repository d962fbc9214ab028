internal import EntityStoreMigrations

/// Brings a snapshot file to the current format version by applying the bundled
/// migrations (`Migrations/NNNN_name.sql`) it has not seen yet, each followed by its
/// code step, if it has one (``FormatCodeSteps``).
///
/// The format version lives in the `user_version` header field. Each migration runs
/// in its own transaction together with the `user_version` update, so a file is
/// always at exactly one complete version, even after a crash.
package struct FormatMigrator: Sendable {
    /// Creates a migrator for the bundled migrations.
    package init() {}

    /// The highest bundled format version: the version every migrated file ends at.
    package static var currentVersion: Int {
        (try? FormatMigrations.bundled.get())?.last?.version ?? 0
    }

    /// Migrates the database of `connection` to ``currentVersion``.
    ///
    /// A fresh (empty) database gets every migration and the EntityStore
    /// `application_id`; an up-to-date file is left untouched.
    /// - Throws: ``SnapshotError/newerFormat(found:supported:)`` for a file from a
    ///   newer library (left untouched), ``SnapshotError/wrongApplicationID(found:expected:)``
    ///   or ``SnapshotError/notASnapshot(path:reason:)`` for other SQLite databases,
    ///   ``SnapshotError/corrupt(path:message:)`` for damaged files, and
    ///   ``SnapshotError/sqlite(_:)`` for other failures (the failing migration is rolled back).
    /// - Complexity: O(1) for an up-to-date file; otherwise that of the pending migrations.
    package func migrate(_ connection: SQLiteConnection) throws(SnapshotError) {
        let migrations: [FormatMigrations.Migration]
        switch FormatMigrations.bundled {
        case .success(let list): migrations = list
        case .failure(let error): throw .invalidFormatMigrations(reason: error.description)
        }
        let supported = migrations.last?.version ?? 0
        let path = connection.path

        let found: Int
        do {
            found = Int(try connection.userVersion)
            try checkIdentity(of: connection, version: found, supported: supported)
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch let error as SnapshotError {
            throw error
        } catch {
            throw .sqlite(.misuse(String(describing: error)))
        }

        for migration in migrations where migration.version > found {
            do {
                try connection.transaction(.immediate) {
                    // Another connection may have migrated the file since it was read.
                    let before = Int(try connection.userVersion)
                    guard before == migration.version - 1 else {
                        throw SnapshotError.notASnapshot(
                            path: path,
                            reason: "format version changed to \(before) while migrating to \(migration.version)"
                        )
                    }
                    try connection.execute(migration.sql)
                    try FormatCodeSteps.run(afterVersion: migration.version, on: connection)
                    if migration.version == 1 {
                        try connection.setApplicationID(entityStoreApplicationID)
                    }
                    try connection.setUserVersion(Int32(migration.version))
                }
            } catch let error as SQLiteError {
                throw SnapshotError(error, path: path)
            } catch let error as SnapshotError {
                throw error
            } catch {
                throw .sqlite(.misuse(String(describing: error)))
            }
        }
    }

    /// Refuses files this library must not migrate: newer formats, other applications'
    /// files, and non-empty databases without a format version.
    private func checkIdentity(of connection: SQLiteConnection, version: Int, supported: Int) throws {
        let path = connection.path
        let applicationID = try connection.applicationID
        if applicationID != 0, applicationID != entityStoreApplicationID {
            throw SnapshotError.wrongApplicationID(found: applicationID, expected: entityStoreApplicationID)
        }
        if version > supported {
            throw SnapshotError.newerFormat(found: version, supported: supported)
        }
        if version < 0 {
            throw SnapshotError.notASnapshot(path: path, reason: "negative format version \(version)")
        }
        if version == 0 {
            let schema = try connection.prepare("SELECT count(*) FROM sqlite_schema")
            if try schema.step(), schema.int64(at: 0) > 0 {
                throw SnapshotError.notASnapshot(path: path, reason: "it holds tables but no EntityStore format version")
            }
        } else if applicationID == 0 {
            throw SnapshotError.notASnapshot(path: path, reason: "format version \(version) without the EntityStore application_id")
        }
    }
}

import EntityStore

extension EntityState {
    /// Writes this state to a snapshot file at `path`, atomically: the rows go to a
    /// temporary file in the same directory, which is flushed and renamed over `path`.
    /// The previous file at `path` is intact until that rename.
    /// - Throws: ``SnapshotError`` (unwritable directory, disk full, an entity that cannot
    ///   be stored ...); nothing is left behind on failure.
    ///   ``SnapshotError/fileInUse(path:)`` if an open ``SnapshotFile`` of this process
    ///   keeps `path` (its saves would be replaced by this state).
    /// - Complexity: O(n) in the rows of every table.
    @discardableResult
    public func writeSnapshot(to path: String, options: SnapshotOptions = SnapshotOptions()) throws(SnapshotError) -> SnapshotSummary {
        guard !OpenSnapshotFiles.isKept(path) else { throw .fileInUse(path: path) }
        return try SnapshotWriter(state: self, options: options).write(to: path)
    }

    /// Reads the snapshot at `path` into a new state for `schema`, without a store.
    /// - Complexity: O(n log n) in the rows of every table (indexes are rebuilt).
    public static func readSnapshot(
        from path: String, schema: Schema, options: SnapshotOptions = SnapshotOptions()
    ) throws(SnapshotError) -> EntityState {
        try SnapshotReader(path: path, options: options).read(schema: schema)
    }
}

extension EntityStore {
    /// Writes a consistent point-in-time copy of the store to `path`, atomically.
    ///
    /// It works from the immutable current state, so writers keep committing while it
    /// runs; the snapshot holds exactly the state at the call. A table of 4,096 rows or
    /// more is encoded on a second thread while this one steps SQLite.
    /// - Throws: ``SnapshotError``, ``SnapshotError/fileInUse(path:)`` if an open
    ///   ``SnapshotFile`` of this process keeps `path`.
    /// - Complexity: O(n) in the rows of every table; commits are not blocked.
    @discardableResult
    public func snapshot(to path: String, options: SnapshotOptions = SnapshotOptions()) throws(SnapshotError) -> SnapshotSummary {
        try state.writeSnapshot(to: path, options: options)
    }

    /// Replaces every table with the snapshot at `path`.
    ///
    /// The file is read and validated completely into a new state (format and app
    /// migrations first, then metadata, then every row against the Swift types) and only
    /// then swapped in, as one commit: on any error the store is untouched. A file whose
    /// app schema version is above `options.appSchemaVersion` (0 by default) is refused
    /// unless `options.acceptsNewerAppSchema` is set.
    /// - Complexity: O(n log n) in the rows of every table.
    @discardableResult
    public func restore(from path: String, options: SnapshotOptions = SnapshotOptions()) throws -> SnapshotSummary {
        let start = ContinuousClock.now
        let restored = try EntityState.readSnapshot(from: path, schema: schema, options: options)
        let revision = try replaceAll(with: restored, name: "restore")
        return SnapshotSummary(
            path: path, revision: revision, tables: restored.tableNames.map { .init(name: $0, rows: restored.count(ofTable: $0) ?? 0) },
            fileSize: FileSystem.size(of: path), duration: ContinuousClock.now - start)
    }

    /// A store of dynamic records holding any snapshot, with the tables, indexes and
    /// relations its metadata declares: no Swift types needed.
    ///
    /// With the default options it reads a file of any app schema version; with an
    /// ``SnapshotOptions/appSchemaVersion`` above 0 it refuses newer ones, as a typed
    /// restore does.
    /// - Complexity: O(n log n) in the rows of every table.
    public static func restoringDynamic(from path: String, options: SnapshotOptions = SnapshotOptions()) throws -> EntityStore {
        try restoringDynamic(from: path, options: options, leavingFileUnchanged: false)
    }

    /// ``restoringDynamic(from:options:)``; with `leavingFileUnchanged`, a file that needs
    /// migrations is read through an upgraded private copy and never written: what
    /// read-only tools need.
    package static func restoringDynamic(
        from path: String, options: SnapshotOptions, leavingFileUnchanged: Bool
    ) throws -> EntityStore {
        let reader = SnapshotReader(path: path, options: options, isDynamic: true, leavesFileUnchanged: leavingFileUnchanged)
        let opened = try reader.open()
        let schema = try opened.1.snapshotSchema()
        let state = try reader.read(schema: schema, opened: opened)
        let store = EntityStore(schema: schema)
        try store.replaceAll(with: state, name: "restore")
        return store
    }
}

/// Snapshot inspection that needs no store.
public enum Snapshot {
    /// The metadata of the snapshot at `path` (format version, tables, columns, indexes,
    /// relations); the file is not changed, so an older format reports its own version.
    public static func metadata(at path: String) throws(SnapshotError) -> StoreMetadata {
        guard FileSystem.exists(path) else { throw .fileNotFound(path: path) }
        if let kind = FileSystem.nonRegularKind(path) { throw .notASnapshot(path: path, reason: "it is \(kind)") }
        do {
            let connection = try SQLiteConnection.openSnapshotForReading(path)
            return try StoreMetadata.read(connection)
        } catch let error as SnapshotError {
            throw error
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch {
            throw .notASnapshot(path: path, reason: String(describing: error))
        }
    }

    /// The dynamic-record schema that mirrors a snapshot's metadata.
    @available(*, deprecated, message: "use the metadata's own dynamicSchema()")
    public static func dynamicSchema(for metadata: StoreMetadata) throws -> Schema {
        try metadata.snapshotSchema()
    }

    /// Upgrades the snapshot at `path` to the current format in place; each step is
    /// atomic. Returns the format versions before and after.
    public static func migrate(at path: String) throws(SnapshotError) -> (from: Int, to: Int) {
        guard FileSystem.exists(path) else { throw .fileNotFound(path: path) }
        do {
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            let before = try SnapshotIdentity.check(connection)
            // Before the upgrade writes to it: a write would run the file's triggers.
            try SnapshotStructure.checkFile(connection)
            try FormatMigrator().migrate(connection)
            return (before, FormatMigrator.currentVersion)
        } catch let error as SnapshotError {
            throw error
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch {
            throw .notASnapshot(path: path, reason: String(describing: error))
        }
    }

    /// The newest snapshot format version this library reads and writes.
    public static var formatVersion: Int { FormatMigrator.currentVersion }
}

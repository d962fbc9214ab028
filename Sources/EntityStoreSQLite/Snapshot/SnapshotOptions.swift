/// How a snapshot is written and read.
public struct SnapshotOptions: Sendable {
    /// The app's own schema version, recorded on write; a restore runs the app
    /// ``migrations`` whose version is above the file's.
    ///
    /// A restore refuses a file whose app schema version is above this one
    /// (``SnapshotError/newerAppSchema(found:supported:)``): a newer app wrote it, and its
    /// rows may not fit this app's types. That includes the default, 0, which accepts only
    /// files written without an app schema version (0): an app that versions its files
    /// must say which version it knows, and an app that never does cannot read them by
    /// accident. Set ``acceptsNewerAppSchema`` to read such files anyway.
    /// (`EntityStore.restoringDynamic` reads files of any app schema version when this is
    /// 0: dynamic records have no app types a newer app could break.)
    public var appSchemaVersion: Int
    /// The app's forward-only migrations, in any order; each runs in its own transaction.
    public var migrations: [AppMigration]
    /// Whether a restore reads a file whose app schema version is above
    /// ``appSchemaVersion`` (written by a newer app) instead of refusing it. Off by
    /// default; its rows are then decoded as they are, and a failure to decode them is
    /// reported like any other mismatch.
    public var acceptsNewerAppSchema: Bool
    /// Called as rows are written or read (about every 10,000 rows and at the end of each table).
    public var progress: (@Sendable (SnapshotProgress) -> Void)?
    /// The column order of dynamic tables, by table name: the fields listed come first, in
    /// this order, and the others after them by name (the default for every field). A
    /// listed field that no record has is a column of NULLs, read back as missing.
    public var fieldOrder: [String: [String]] = [:]
    /// The fields of dynamic tables that hold dates, by table name: their values, the
    /// format's date text (what dynamic readers give for a `date` column), are written as
    /// `date` columns, which a typed app reads as `Date`. A value that is not a date's
    /// text fails the write.
    public var dateFields: [String: Set<String>] = [:]
    /// Whether a write records when it happened (`created_at` in `entitystore_meta`). Off,
    /// the file depends on the state alone: the same state writes the same bytes.
    public var recordsCreationTime = true

    /// Options with an app schema version, app migrations, whether to read files of newer
    /// app schema versions, and a progress callback.
    public init(
        appSchemaVersion: Int = 0, migrations: [AppMigration] = [], acceptsNewerAppSchema: Bool = false,
        progress: (@Sendable (SnapshotProgress) -> Void)? = nil
    ) {
        self.appSchemaVersion = appSchemaVersion
        self.migrations = migrations
        self.acceptsNewerAppSchema = acceptsNewerAppSchema
        self.progress = progress
    }
}

/// Where a snapshot write or read has got to.
public struct SnapshotProgress: Sendable, Equatable {
    /// The table being written or read.
    public let table: String
    /// Rows of that table done so far.
    public let tableRows: Int
    /// Rows done so far over all tables.
    public let rowsDone: Int
    /// Rows in all, over all tables.
    public let totalRows: Int
}

/// What a snapshot write, restore or save did.
public struct SnapshotSummary: Sendable, Equatable {
    /// The snapshot file.
    public let path: String
    /// The store revision of the state written or read: the one state the file holds
    /// after a snapshot or a save (for a restore, the revision the restored state took).
    public let revision: UInt64
    /// Row counts by table, in schema order.
    public let tables: [TableCount]
    /// The file's size in bytes after the operation.
    public let fileSize: Int
    /// Wall time of the operation.
    public let duration: Duration

    /// Rows over all tables.
    public var rowCount: Int { tables.reduce(0) { $0 + $1.rows } }

    /// One table's row count.
    public struct TableCount: Sendable, Equatable {
        /// The table's name.
        public let name: String
        /// Its rows written, read, or (for an incremental save) upserted plus deleted.
        public let rows: Int
    }
}

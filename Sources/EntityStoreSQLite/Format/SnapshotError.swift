/// Why a snapshot file could not be written, read or brought up to date.
public enum SnapshotError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No file exists at `path`.
    case fileNotFound(path: String)
    /// The file at `path` is an SQLite database but not an EntityStore snapshot.
    case notASnapshot(path: String, reason: String)
    /// The file's `application_id` header marks it as another application's format.
    case wrongApplicationID(found: Int32, expected: Int32)
    /// The file was written by a newer version of the library, in a format this one cannot read.
    case newerFormat(found: Int, supported: Int)
    /// The file at `path` is damaged; `message` is SQLite's explanation.
    case corrupt(path: String, message: String)
    /// The bundled format migrations are inconsistent (a packaging error, not a file problem).
    case invalidFormatMigrations(reason: String)
    /// Any other SQLite failure (I/O error, permission ...).
    case sqlite(SQLiteError)
    /// SQLite found no room to write the file at `path` (`SQLITE_FULL`): the disk is
    /// full, or the database reached its size limit.
    case diskFull(path: String, SQLiteError)
    /// A table's stored data is not what its metadata declares (wrong type, duplicate ID,
    /// invalid JSON ...).
    case invalidData(table: String, detail: String)
    /// The snapshot does not fit the Swift types or schema asked to restore it: a missing
    /// column for a non-optional field, a table the schema does not declare ...
    case schemaMismatch(table: String, detail: String)
    /// An entity could not be turned into a row.
    case encodingFailed(table: String, detail: String)
    /// A file-system operation failed (unwritable directory, rename, fsync ...).
    case io(path: String, message: String)
    /// The file's app schema version is newer than the app's: written by a newer app.
    case newerAppSchema(found: Int, supported: Int)
    /// A ``SnapshotFile`` of this process keeps the file at `path`: a snapshot written over
    /// it would replace saves that file has made (or will make) with another state.
    case fileInUse(path: String)

    /// The error with a table's name where it was written without one ("?").
    func naming(table: String) -> SnapshotError {
        if case .encodingFailed("?", let detail) = self { return .encodingFailed(table: table, detail: detail) }
        return self
    }

    /// Classifies an SQLite failure on the file at `path`: a file that does not start with
    /// SQLite's header is ``notASnapshot(path:reason:)``, other damage
    /// ``corrupt(path:message:)``, no room ``diskFull(path:_:)``.
    package init(_ error: SQLiteError, path: String) {
        self = if error.code == SQLiteError.notADatabase, !FileSystem.hasSQLiteHeader(path) {
            .notASnapshot(path: path, reason: "it is not an SQLite database")
        } else if error.isCorrupt {
            .corrupt(path: path, message: error.message)
        } else if error.isFull {
            .diskFull(path: path, error)
        } else {
            .sqlite(error)
        }
    }

    /// A sentence that names the file or the versions involved and what to do.
    public var description: String {
        switch self {
        case .fileNotFound(let path):
            "no snapshot file at '\(path)'"
        case .notASnapshot(let path, let reason):
            "'\(path)' is not an EntityStore snapshot: \(reason)"
        case .wrongApplicationID(let found, let expected):
            "the file belongs to another application (application_id \(found), expected \(expected))"
        case .newerFormat(let found, let supported):
            "the snapshot uses format version \(found), but this version of EntityStore reads versions up to \(supported); upgrade EntityStore to open it"
        case .corrupt(let path, let message):
            "the snapshot '\(path)' is damaged: \(message)"
        case .invalidFormatMigrations(let reason):
            "the bundled snapshot format migrations are invalid: \(reason)"
        case .sqlite(let error):
            error.description
        case .diskFull(let path, let error):
            "'\(path)': the disk is full, or the database reached its size limit (\(error.description))"
        case .invalidData(let table, let detail):
            "table '\(table)': \(detail)"
        case .schemaMismatch(let table, let detail):
            "table '\(table)' does not match the schema: \(detail)"
        case .encodingFailed(let table, let detail):
            "table '\(table)': cannot store an entity: \(detail)"
        case .io(let path, let message):
            "'\(path)': \(message)"
        case .newerAppSchema(let found, let supported):
            "the snapshot's app schema version is \(found), but this app knows versions up to \(supported)"
        case .fileInUse(let path):
            "'\(path)' is kept by an open SnapshotFile: save through it, or close it before writing another snapshot there"
        }
    }
}

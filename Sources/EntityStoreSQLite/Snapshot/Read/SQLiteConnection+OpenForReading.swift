extension SQLiteConnection {
    /// Opens the snapshot at `path` for reading: the one way every reader (restore,
    /// metadata, verify) opens a file.
    ///
    /// A writer killed mid-transaction leaves its undo information beside the file (a hot
    /// rollback journal, or a write-ahead log whose index must be rebuilt). SQLite applies
    /// it when the file is next opened, but a read-only connection is not allowed to, and
    /// fails with `SQLITE_READONLY`. Then a read-write connection opens the file once,
    /// which rolls the journal back (or recovers the log) exactly as any SQLite writer
    /// would, leaving the last committed state, and the file is opened read-only again.
    /// - Throws: the read-only error, with an explanation, if the file cannot be opened
    ///   for writing to recover it (no permission on the file or its directory).
    static func openSnapshotForReading(_ path: String) throws(SQLiteError) -> SQLiteConnection {
        do {
            return try SQLiteConnection(path: path, mode: .readOnly)
        } catch let error where error.isReadOnly {
            do {
                try SQLiteConnection(path: path, mode: .readWrite).close()
            } catch {
                throw SQLiteError(
                    extendedCode: error.extendedCode,
                    message: "the file was left mid-write by a writer that stopped, and recovering it needs write access to the file and its directory (\(error.message))")
            }
            return try SQLiteConnection(path: path, mode: .readOnly)
        }
    }
}

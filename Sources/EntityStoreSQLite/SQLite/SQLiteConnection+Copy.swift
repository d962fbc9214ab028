internal import CSQLite

extension SQLiteConnection {
    /// A copy of `source`'s database that nothing else can see: SQLite's private
    /// temporary database (the empty file name), filled page by page with the online
    /// backup API. Writes to the copy never reach the source file.
    ///
    /// The copy lives in an anonymous file of the temporary directory that SQLite unlinks
    /// as soon as it creates it (and its journal likewise), so it takes disk space rather
    /// than memory beyond SQLite's page cache, and no process end, not even `SIGKILL`,
    /// can leave it behind. It cannot be opened a second time (``isPrivateCopy``); its
    /// ``path`` is the source's, for errors.
    /// - Throws: the ``SQLiteError`` of the copy (a full temporary directory, an I/O error).
    /// - Complexity: O(pages of the source).
    package static func privateCopy(of source: SQLiteConnection) throws(SQLiteError) -> SQLiteConnection {
        let copy = try SQLiteConnection(opening: "", mode: .readWrite, name: source.path)
        let target = try copy.handle.open()
        let origin = try source.handle.open()
        guard let backup = sqlite3_backup_init(target, "main", origin, "main") else {
            throw copy.handle.error(sqlite3_errcode(target), sql: nil)
        }
        let stepped = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE, finished == SQLITE_OK else {
            throw copy.handle.error(finished != SQLITE_OK ? finished : stepped, sql: nil)
        }
        return copy
    }
}

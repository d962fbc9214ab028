extension Snapshot {
    /// Writes a compact copy of the snapshot file at `source` to `destination`, with its
    /// write-ahead log folded in and in rollback-journal mode: one self-contained file, as
    /// a fixture or an attachment wants it. `destination` must not exist (SQLite refuses
    /// to overwrite a file); the source is only read.
    /// - Throws: ``SnapshotError`` naming the path SQLite could not read or write; a
    ///   failed copy removes what it wrote.
    /// - Complexity: O(file size).
    public static func compactCopy(of source: String, to destination: String) throws(SnapshotError) {
        do {
            let reader = try SQLiteConnection(path: source, mode: .readOnly)
            // The name is bound, not spliced into the statement: any path is a plain value.
            _ = try reader.prepare("VACUUM INTO ?").rows([.text(destination)])
            try reader.close()
        } catch {
            throw SnapshotError(error, path: source)
        }
        do {
            let copy = try SQLiteConnection(path: destination, mode: .readWrite)
            try copy.setPragma("journal_mode", "DELETE")
            try copy.close()
        } catch {
            FileSystem.remove(file: destination)
            throw SnapshotError(error, path: destination)
        }
    }
}

import EntityStore
import EntityStoreCodec
import Foundation

/// Writes a whole `EntityState` into a new snapshot file, atomically.
///
/// The rows go into a temporary file beside the target, in one transaction with prepared
/// statements; then SQL indexes are created, the file is flushed (fsync), renamed over
/// the target and the directory is flushed. Until the rename the previous file at the
/// path is intact and complete (see ``settleTarget(_:)``); a failure removes the
/// temporary file.
struct SnapshotWriter {
    /// The journal mode the new file starts in.
    enum JournalMode {
        /// A rollback journal: a single self-contained file at rest (the default).
        case rollback
        /// Write-ahead log, for a file that incremental saves follow: it needs no mode
        /// switch (a write of its own) when a ``SnapshotFile`` opens it.
        case writeAheadLog
    }

    let state: EntityState
    let options: SnapshotOptions
    var journalMode: JournalMode = .rollback

    func write(to path: String) throws(SnapshotError) -> SnapshotSummary {
        let start = ContinuousClock.now
        let directory = FileSystem.directory(of: path)
        guard FileSystem.isDirectory(directory) else {
            throw .io(path: path, message: "the directory '\(directory)' does not exist")
        }
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw .io(path: path, message: "the directory '\(directory)' is not writable")
        }
        if FileSystem.isDirectory(path) { throw .io(path: path, message: "the path is a directory") }
        try Self.checkTableNames(state.tableNames)
        let temporary = FileSystem.temporaryPath(beside: path)
        do {
            let counts = try writeFile(at: temporary)
            try FileSystem.sync(temporary)
            try Self.settleTarget(path)
            try FileSystem.rename(temporary, over: path)
            try FileSystem.sync(directory)
            return SnapshotSummary(
                path: path, revision: state.revision, tables: counts, fileSize: FileSystem.size(of: path),
                duration: ContinuousClock.now - start)
        } catch {
            FileSystem.remove(temporary)
            throw error
        }
    }

    /// Makes the file at `path` complete on its own, so that the new file can be renamed
    /// over it, and leaves nothing beside it that SQLite would apply to the new file.
    ///
    /// SQLite applies whatever log it finds beside a database when it opens it: a
    /// rollback journal is rolled back into it, a write-ahead log replayed. One left
    /// beside the old file (by a writer that was killed, or by an open ``SnapshotFile``)
    /// would corrupt the new one; deleting it first would lose the old file's last saves,
    /// or leave it half-written, if the process died before the rename. So the old file
    /// is recovered first, through SQLite (a hot journal rolled back, the log
    /// checkpointed), and only then are the emptied logs removed: whenever this process
    /// stops, the path holds the old complete state or the new one.
    static func settleTarget(_ path: String) throws(SnapshotError) {
        let sidecars = ["-journal", "-wal", "-shm"].map { path + $0 }
        guard sidecars.contains(where: FileSystem.exists) else { return }
        if FileSystem.exists(path) {
            do {
                // Opening reads the schema, which rolls a hot journal back and recovers a log.
                let connection = try SQLiteConnection(path: path, mode: .readWrite)
                if try !connection.checkpointCompletely() {
                    throw SnapshotError.io(
                        path: path, message: "another connection is using the file, so it cannot be replaced safely now")
                }
                try connection.close()
            } catch let error as SQLiteError where error.isCorrupt {
                // Not a database SQLite can open: its logs cannot belong to it, nothing to keep.
            } catch let error as SQLiteError {
                throw SnapshotError(error, path: path)
            } catch let error as SnapshotError {
                throw error
            } catch {
                throw .io(path: path, message: String(describing: error))
            }
        }
        for sidecar in sidecars { FileSystem.remove(file: sidecar) }
        if let survivor = sidecars.first(where: FileSystem.exists) {
            throw .io(path: path, message: "cannot remove '\(survivor)', which SQLite would apply to the new snapshot")
        }
    }

    /// Refuses table names a snapshot cannot hold: its own metadata tables' prefix,
    /// SQLite's reserved prefix, and names that differ only in case (SQLite ignores it).
    static func checkTableNames(_ names: [String]) throws(SnapshotError) {
        var seen: [String: String] = [:]
        for name in names {
            let folded = name.lowercased()
            if folded.hasPrefix("entitystore_") || folded.hasPrefix("sqlite_") {
                throw .encodingFailed(table: name, detail: "table names starting with 'entitystore_' or 'sqlite_' are reserved for the snapshot file itself")
            }
            if let other = seen[folded] {
                throw .encodingFailed(table: name, detail: "tables '\(other)' and '\(name)' differ only in case, which SQLite table names cannot tell apart")
            }
            seen[folded] = name
        }
    }

    private func writeFile(at path: String) throws(SnapshotError) -> [SnapshotSummary.TableCount] {
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
            // Small pages: an incremental save rewrites every page holding a changed row,
            // and rows changed at random each sit on their own page, so the bytes a save
            // writes scale with the page size. 1 KiB pages cost a full snapshot a few
            // percent (in size and time) and cut an incremental save's writes fourfold.
            try connection.setPragma("page_size", "1024")
            // A fresh temporary file needs no journal: if anything fails it is deleted.
            try connection.setPragma("journal_mode", "OFF")
            try connection.setPragma("synchronous", "OFF")
            try connection.setPragma("locking_mode", "EXCLUSIVE")
            try connection.setPragma("cache_size", "-65536")
        } catch {
            throw SnapshotError(error, path: path)
        }
        try FormatMigrator().migrate(connection)
        var counts: [SnapshotSummary.TableCount] = []
        do {
            try connection.transaction(.exclusive) {
                let total = state.tableNames.reduce(0) { $0 + (state.count(ofTable: $1) ?? 0) }
                var done = 0
                for (position, table) in state.schema.tables.enumerated() {
                    let layout = try writeTable(table, connection: connection) { tableRows in
                        options.progress?(SnapshotProgress(
                            table: table.name, tableRows: tableRows, rowsDone: done + tableRows, totalRows: total))
                    }
                    let rows = state.count(ofTable: table.name) ?? 0
                    done += rows
                    try MetadataWriter(connection: connection).recordTable(table, layout: layout, rows: rows, position: position)
                    counts.append(.init(name: table.name, rows: rows))
                }
                try MetadataWriter(connection: connection).recordMeta(
                    appSchemaVersion: options.appSchemaVersion, recordsCreationTime: options.recordsCreationTime)
            }
            // Built after the bulk load: one sort per index instead of a b-tree insert per row.
            try connection.transaction(.exclusive) {
                for table in state.schema.tables { try MetadataWriter(connection: connection).createSQLIndexes(for: table) }
            }
            if journalMode == .writeAheadLog {
                // The header now says WAL; the log itself is empty and removed at close.
                try connection.setPragma("journal_mode", "WAL")
            }
            try connection.close()
        } catch let error as SnapshotError {
            throw error
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch {
            throw .io(path: path, message: String(describing: error))
        }
        return counts
    }

    private func writeTable(
        _ table: any AnyTable, connection: SQLiteConnection, progress: (Int) -> Void
    ) throws(SnapshotError) -> TableLayout {
        guard let typed = table as? any TypedTable else {
            throw .schemaMismatch(table: table.name, detail: "not a typed table")
        }
        return try writeRows(of: typed, connection: connection, progress: progress)
    }

    private func writeRows<T: TypedTable>(
        of table: T, connection: SQLiteConnection, progress: (Int) -> Void
    ) throws(SnapshotError) -> TableLayout {
        let view = state[table.typed]
        let name = table.name
        var writer = TableRowWriter(table: name, connection: connection)
        if let dynamic = view as? TableView<DynamicRecord> {
            let kinds = DynamicKinds(rows: dynamic, preferredOrder: options.fieldOrder[name] ?? [], dateFields: options.dateFields[name] ?? [])
            try writer.declare(kinds.columns)
            try RowPipeline.write(rows: dynamic.count, table: name, with: &writer, progress: progress) { emit in
                for record in dynamic {
                    let fields: RowPipeline.Fields
                    do { fields = try kinds.fields(of: record) } catch let error as SnapshotError {
                        throw error.naming(table: name)
                    } catch {
                        let detail = (error as? DynamicKinds.Mismatch)?.detail.map { ": \($0)" } ?? ""
                        throw SnapshotError.encodingFailed(table: name, detail: "record \(record.id) does not fit the columns chosen for it" + detail)
                    }
                    try emit(fields)
                }
            }
        } else {
            // The table's own loop runs specialized for its entity type.
            let forEach = table.typed.bulk.forEach
            try RowPipeline.write(rows: view.count, table: name, with: &writer, progress: progress) { emit in
                let encoder = RowEncoder(dialect: .sqlite)
                try forEach(view) { entity in
                    do { try encoder.encode(entity) } catch {
                        throw SnapshotError.encodingFailed(table: name, detail: "entity \(entity.id): \(error)")
                    }
                    try emit(encoder.fields)
                }
            }
        }
        try writer.finish(idKind: nil)
        progress(writer.rowsWritten)
        return writer.layout
    }
}

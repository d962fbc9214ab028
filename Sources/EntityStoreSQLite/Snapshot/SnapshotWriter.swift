import EntityStore
import Foundation

/// Writes a whole `EntityState` into a new snapshot file, atomically.
///
/// The rows go into a temporary file beside the target, in one transaction with prepared
/// statements; then SQL indexes are created, the file is flushed (fsync), renamed over
/// the target and the directory is flushed. Until the rename the previous file at the
/// path is intact; a failure removes the temporary file.
struct SnapshotWriter {
    let state: EntityState
    let options: SnapshotOptions

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
            // A write-ahead log beside the old file (left by a saving process that
            // stopped) would be replayed by SQLite into the new file on its next open:
            // it goes first. Until the rename the old file is still whole, as of its last
            // checkpoint.
            FileSystem.removeSidecars(of: path)
            try FileSystem.rename(temporary, over: path)
            try FileSystem.sync(directory)
            return SnapshotSummary(
                path: path, tables: counts, fileSize: FileSystem.size(of: path), duration: ContinuousClock.now - start)
        } catch {
            FileSystem.remove(temporary)
            throw error
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
                try MetadataWriter(connection: connection).recordMeta(appSchemaVersion: options.appSchemaVersion)
            }
            // Built after the bulk load: one sort per index instead of a b-tree insert per row.
            try connection.transaction(.exclusive) {
                for table in state.schema.tables { try MetadataWriter(connection: connection).createSQLIndexes(for: table) }
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
        var writer = TableRowWriter(table: table.name, connection: connection)
        if let dynamic = view as? TableView<DynamicRecord> {
            let kinds = DynamicKinds(rows: dynamic)
            for record in dynamic {
                try writer.write(kinds.fields(of: record))
                if writer.rowsWritten % 10_000 == 0 { progress(writer.rowsWritten) }
            }
            try writer.finish(idKind: nil)
        } else {
            let encoder = RowEncoder()
            do {
                // The table's own loop runs specialized for its entity type.
                try table.typed.bulk.forEach(view) { entity in
                    do { try encoder.encode(entity) } catch {
                        throw SnapshotError.encodingFailed(table: table.name, detail: "entity \(entity.id): \(error)")
                    }
                    try writer.write(encoder.fields)
                    if writer.rowsWritten % 10_000 == 0 { progress(writer.rowsWritten) }
                }
            } catch let error as SnapshotError {
                throw error
            } catch {
                throw .encodingFailed(table: table.name, detail: String(describing: error))
            }
            try writer.finish(idKind: nil)
        }
        progress(writer.rowsWritten)
        return writer.layout
    }
}

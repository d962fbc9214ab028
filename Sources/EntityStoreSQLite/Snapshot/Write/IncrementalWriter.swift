import EntityStore
import EntityStoreCodec

/// Applies a list of change sets to an existing snapshot file in one transaction.
struct IncrementalWriter {
    /// The change cannot be written in place; the caller writes a full snapshot.
    struct NeedsFullSnapshot: Error {}

    let state: EntityState
    /// An open read-write connection to the snapshot file.
    let connection: SQLiteConnection
    let changeSets: [ChangeSet]

    var path: String { connection.path }

    func write() throws -> [SnapshotSummary.TableCount] {
        let metadata = try StoreMetadata.read(connection)
        guard metadata.formatVersion == Snapshot.formatVersion,
              metadata.tables.map(\.name) == state.tableNames
        else { throw NeedsFullSnapshot() }
        var counts: [SnapshotSummary.TableCount] = []
        do {
            try connection.transaction(.immediate) {
                for table in state.schema.tables {
                    guard let typed = table as? any TypedTable, let stored = metadata.table(named: table.name) else { continue }
                    let written = try apply(typed, stored: stored, connection: connection)
                    counts.append(.init(name: table.name, rows: written))
                }
            }
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        }
        return counts
    }

    /// Upserts and deletes the changed rows of one table; returns how many rows it wrote.
    private func apply<T: TypedTable>(
        _ table: T, stored: StoreMetadata.Table, connection: SQLiteConnection
    ) throws -> Int {
        // What the file holds for each touched ID: the value before its first change since
        // the last save (the file matched the store then), or nil if that change inserted it.
        var touched: [T.Element.ID] = []
        var inFile: [T.Element.ID: T.Element?] = [:]
        for changeSet in changeSets {
            let changes = changeSet[table.typed]
            for id in changes.inserted where inFile[id] == nil {
                inFile[id] = .some(nil)
                touched.append(id)
            }
            for (id, old) in changes.updated where inFile[id] == nil {
                inFile[id] = .some(old)
                touched.append(id)
            }
            for (id, old) in changes.removed where inFile[id] == nil {
                inFile[id] = .some(old)
                touched.append(id)
            }
        }
        guard !touched.isEmpty else { return 0 }
        let view = state[table.typed]
        let layout = TableLayout(
            table: table.name,
            columns: stored.columns.map {
                .init(name: $0.name, kind: $0.kind == .null ? nil : $0.kind, nullable: $0.nullable, nulls: $0.nulls)
            },
            idKind: stored.idKind == .null ? nil : stored.idKind)
        var writer = TableRowWriter(layout: layout, connection: connection)
        let delete = try connection.prepare("DELETE FROM \(quoteIdentifier(table.name)) WHERE \"id\" = ?")
        let encoder = RowEncoder(dialect: .sqlite)
        let dynamicKinds = DynamicKinds(columns: stored.columns)
        var written = 0
        func fields(of entity: T.Element) throws -> [(name: String, value: EncodedValue)] {
            if let record = entity as? DynamicRecord {
                // A value that does not fit its column as the file has it (another kind, a
                // null where NULL means missing ...) cannot be stored in place.
                do { return try dynamicKinds.fields(of: record) } catch is DynamicKinds.Mismatch { throw NeedsFullSnapshot() }
            }
            try encoder.encode(entity)
            return encoder.fields
        }
        for id in touched {
            let stored = inFile[id] ?? nil
            guard let entity = view.find(id) else {
                // Gone now: delete the row if the file has it.
                guard let stored, let idValue = try fields(of: stored).first(where: { $0.name == "id" })?.value.value else { continue }
                try delete.run([SQLiteValue(idValue)])
                written += 1
                continue
            }
            do {
                let current = try fields(of: entity)
                if let stored {
                    try writer.update(current, from: try fields(of: stored))
                } else {
                    try writer.write(current)
                }
            } catch let error as SnapshotError {
                if case .encodingFailed = error { throw NeedsFullSnapshot() }
                throw error
            }
            written += 1
        }
        let metadataWriter = MetadataWriter(connection: connection)
        try metadataWriter.recordColumns(writer.layout)
        try metadataWriter.recordRowCount(table: table.name, rows: view.count)
        return written
    }
}

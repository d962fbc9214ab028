/// Refuses files whose structure no snapshot writer produces, before anything is read
/// from them: a snapshot comes from outside, and reading a view, a virtual table or a
/// generated column runs whatever SQL the file's author put there (a recursive view
/// never ends; a generated `zeroblob(900000000)` allocates 900 MB per row).
///
/// Every table a reader touches (the metadata tables and each listed entity table) must
/// be an ordinary table without hidden or generated columns, and the file must hold no
/// triggers (a migration's writes would run them). Then the time and memory of a read
/// are bounded by the file's own content.
enum SnapshotStructure {
    /// The metadata tables every format version has.
    static let metadataTables = [
        "entitystore_meta", "entitystore_tables", "entitystore_columns", "entitystore_indexes", "entitystore_relations",
    ]

    /// Checks the file's triggers and metadata tables.
    /// - Complexity: O(objects in the file's schema).
    static func checkFile(_ connection: SQLiteConnection) throws(SnapshotError) {
        let path = connection.path
        do {
            if let trigger = try connection.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' LIMIT 1").rows().first?.first {
                throw SnapshotError.notASnapshot(path: path, reason: "it contains a trigger (\(describe(trigger))), which snapshots never have")
            }
            for table in metadataTables {
                _ = try columns(ofOrdinaryTable: table, connection: connection) { detail in
                    SnapshotError.notASnapshot(path: path, reason: "\(table) \(detail)")
                }
            }
        } catch let error as SnapshotError {
            throw error
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch {
            throw .notASnapshot(path: path, reason: String(describing: error))
        }
    }

    /// The columns of the entity table `name`, after checking it is an ordinary table.
    static func columns(ofEntityTable name: String, connection: SQLiteConnection) throws(SnapshotError) -> [String] {
        do {
            return try columns(ofOrdinaryTable: name, connection: connection) { detail in
                SnapshotError.invalidData(table: name, detail: "listed in the metadata, but \(detail)")
            }
        } catch let error as SnapshotError {
            throw error
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: connection.path)
        } catch {
            throw .invalidData(table: name, detail: String(describing: error))
        }
    }

    /// The column names of the table `name`; `refuse` makes the error for anything else.
    private static func columns(
        ofOrdinaryTable name: String, connection: SQLiteConnection, refuse: (String) -> SnapshotError
    ) throws -> [String] {
        let kinds = try connection.prepare("SELECT type FROM pragma_table_list WHERE schema = 'main' AND name = ? COLLATE NOCASE")
            .rows([.text(name)])
        guard let kind = kinds.first?.first else { throw refuse("is missing from the file") }
        guard kinds.count == 1, kind == .text("table") else {
            throw refuse("is \(kind == .text("view") ? "a view" : kind == .text("virtual") ? "a virtual table" : "not an ordinary table"), not a table")
        }
        var names: [String] = []
        for row in try connection.prepare("SELECT name, hidden FROM pragma_table_xinfo(?)").rows([.text(name)]) {
            guard case let .text(column) = row[0] else { throw refuse("has a column without a name") }
            if row[1] != .integer(0) { throw refuse("has a generated or hidden column '\(column)'") }
            names.append(column)
        }
        return names
    }

    /// A short, printable rendering of a value read from a hostile file.
    static func describe(_ value: SQLiteValue?) -> String {
        guard case let .text(text)? = value else { return "unnamed" }
        let printable = text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : String($0) }.joined()
        return "'\(printable.prefix(80))'"
    }
}

import EntityStoreCodec

/// Format 3's code step: in dynamic tables, every JSON column whose values are of one
/// scalar kind plus `null` becomes a column of that kind, with NULL for `null`, and the
/// metadata says what its NULLs mean (``NullMeaning``).
///
/// A column that held both `null` (the text `'null'`) and missing fields (NULL) becomes
/// an `either` column: the rows that lacked the field list it in the table's hidden
/// ``NullMeaning/absentFieldsColumn``. Columns of mixed kinds or nested values stay JSON.
/// A restore gives the same records before and after the upgrade.
enum SQLTrueColumnsUpgrade {
    /// Converts the JSON columns of the dynamic tables the metadata lists.
    /// - Throws: ``SnapshotError/invalidData(table:detail:)`` for a JSON column holding
    ///   text that is not JSON; ``SQLiteError`` otherwise.
    /// - Complexity: O(n) per converted table: one scan per JSON column, and one copy of
    ///   the table's rows when a column converts.
    static func run(_ connection: SQLiteConnection) throws {
        let tables = try connection.prepare("SELECT name FROM entitystore_tables WHERE entity_type = 'DynamicRecord' ORDER BY position")
            .rows().compactMap { row -> String? in if case .text(let name) = row[0] { name } else { nil } }
        for table in tables where try connection.tableExists(table) {
            try upgrade(table, connection)
        }
    }

    /// A column's new kind and meaning of NULL.
    private struct Conversion {
        let column: String
        let kind: ColumnKind
        let nulls: NullMeaning
    }

    private static func upgrade(_ table: String, _ connection: SQLiteConnection) throws {
        let quotedTable = quoteIdentifier(table)
        let physical = Set(try connection.prepare("SELECT name FROM pragma_table_info(?)").rows([.text(table)])
            .compactMap { row -> String? in if case .text(let name) = row[0] { name } else { nil } })
        var listed: [(name: String, kind: ColumnKind)] = []
        for row in try connection.prepare("SELECT name, kind FROM entitystore_columns WHERE table_name = ? ORDER BY position")
            .rows([.text(table)]) {
            guard case .text(let name) = row[0], case .text(let kindName) = row[1], let kind = ColumnKind(rawValue: kindName),
                  physical.contains(name)
            else { continue }
            listed.append((name, kind))
        }
        var conversions: [Conversion] = []
        for (name, kind) in listed where kind == .json && name != "id" && name != NullMeaning.absentFieldsColumn {
            if let conversion = try conversion(of: name, in: quotedTable, table: table, connection) { conversions.append(conversion) }
        }
        guard !conversions.isEmpty else { return }
        let converted = Dictionary(uniqueKeysWithValues: conversions.map { ($0.column, $0) })
        let either = conversions.filter { $0.nulls == .either }
        var columns = listed
        if !either.isEmpty, !physical.contains(NullMeaning.absentFieldsColumn) {
            let hidden = quoteIdentifier(NullMeaning.absentFieldsColumn)
            try connection.execute("ALTER TABLE \(quotedTable) ADD COLUMN \(hidden) TEXT")
            // Before the values convert, NULL still tells a missing field from a null.
            for conversion in either {
                try connection.prepare("""
                    UPDATE \(quotedTable) SET \(hidden) = json_insert(coalesce(\(hidden), '[]'), '$[#]', ?) \
                    WHERE \(quoteIdentifier(conversion.column)) IS NULL
                    """).run([.text(conversion.column)])
            }
            let position = try connection.prepare("SELECT coalesce(max(position), -1) + 1 FROM entitystore_columns WHERE table_name = ?")
                .rows([.text(table)]).first?.first ?? .integer(0)
            try connection.prepare("""
                INSERT INTO entitystore_columns (table_name, name, kind, nullable, position, nulls) VALUES (?, ?, 'json', 1, ?, 'absent')
                """).run([.text(table), .text(NullMeaning.absentFieldsColumn), position])
            columns.append((NullMeaning.absentFieldsColumn, .json))
        }
        // SQLite cannot change a column's declared type: the table is copied into a new one.
        let idKind: ColumnKind = try connection.prepare("SELECT id_kind FROM entitystore_tables WHERE name = ?").rows([.text(table)])
            .first.flatMap { row in if case .text(let kind) = row[0] { ColumnKind(rawValue: kind) } else { nil } } ?? .integer
        let layout = TableLayout(
            table: "entitystore_upgrade",
            columns: columns.map { column in
                TableLayout.Column(name: column.name, kind: converted[column.name]?.kind ?? column.kind, nullable: true)
            },
            idKind: idKind)
        let indexes = try connection.prepare("SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL")
            .rows([.text(table)]).compactMap { row -> String? in if case .text(let sql) = row[0] { sql } else { nil } }
        let names = columns.map { quoteIdentifier($0.name) }.joined(separator: ", ")
        let values = columns.map { column in
            converted[column.name] != nil ? "json_extract(\(quoteIdentifier(column.name)), '$')" : quoteIdentifier(column.name)
        }.joined(separator: ", ")
        try connection.execute("DROP TABLE IF EXISTS \"entitystore_upgrade\"")
        try connection.execute(layout.createSQL)
        try connection.execute("INSERT INTO \"entitystore_upgrade\" (\(names)) SELECT \(values) FROM \(quotedTable) ORDER BY \"id\"")
        try connection.execute("DROP TABLE \(quotedTable)")
        try connection.execute("ALTER TABLE \"entitystore_upgrade\" RENAME TO \(quotedTable)")
        for sql in indexes { try connection.execute(sql) }
        let update = try connection.prepare("UPDATE entitystore_columns SET kind = ?, nulls = ? WHERE table_name = ? AND name = ?")
        for conversion in conversions {
            try update.run([.text(conversion.kind.rawValue), .text(conversion.nulls.rawValue), .text(table), .text(conversion.column)])
        }
    }

    /// The conversion of one JSON column, or nil if it keeps JSON (mixed kinds, nested
    /// values, or no value at all).
    private static func conversion(
        of column: String, in quotedTable: String, table: String, _ connection: SQLiteConnection
    ) throws -> Conversion? {
        let quoted = quoteIdentifier(column)
        let types: Set<String>
        do {
            types = Set(try connection.prepare("SELECT DISTINCT json_type(\(quoted)) FROM \(quotedTable) WHERE \(quoted) IS NOT NULL")
                .rows().compactMap { row -> String? in if case .text(let type) = row[0] { type } else { nil } })
        } catch {
            throw SnapshotError.invalidData(table: table, detail: "column '\(column)' holds text that is not JSON (\(error.message))")
        }
        let hasNull = types.contains("null")
        let kinds = types.subtracting(["null"])
        let kind: ColumnKind
        switch kinds {
        case []:
            guard hasNull else { return nil }
            kind = .null
        case ["integer"]: kind = .integer
        case ["real"]: kind = .double
        case ["integer", "real"]: kind = .number
        case ["text"]: kind = .string
        case ["true"], ["false"], ["true", "false"]: kind = .bool
        default: return nil
        }
        guard hasNull else { return Conversion(column: column, kind: kind, nulls: .absent) }
        let missing = try !connection.prepare("SELECT 1 FROM \(quotedTable) WHERE \(quoted) IS NULL LIMIT 1").rows().isEmpty
        return Conversion(column: column, kind: kind, nulls: missing ? .either : .null)
    }
}

/// The columns of a snapshot's entity tables as SQLite sees them (`pragma table_info`):
/// what an app migration step may change behind the metadata's back.
struct SQLTableShapes: Equatable {
    /// One column of an SQL table.
    struct Column: Equatable {
        /// Its position in the table (`cid`).
        let position: Int
        let name: String
        /// The type it was declared with ("" for none).
        let declaredType: String
    }

    /// The columns of every table that is neither SQLite's (`sqlite_…`) nor the snapshot's
    /// own (`entitystore_…`), by table name, in position order.
    private(set) var tables: [String: [Column]] = [:]

    /// Reads the shapes of the entity tables of the database of `connection`.
    /// - Complexity: O(tables + columns).
    static func read(_ connection: SQLiteConnection) throws(SQLiteError) -> SQLTableShapes {
        var shapes = SQLTableShapes()
        let names = try connection.prepare("""
            SELECT name FROM sqlite_schema WHERE type = 'table' \
            AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'entitystore\\_%' ESCAPE '\\'
            """).rows()
        let info = try connection.prepare("SELECT cid, name, type FROM pragma_table_info(?) ORDER BY cid")
        for row in names {
            guard case let .text(table)? = row.first else { continue }
            shapes.tables[table] = try info.rows([.text(table)]).compactMap { row in
                guard case let .integer(position) = row[0], case let .text(name) = row[1] else { return nil }
                let type: String
                if case let .text(declared) = row[2] { type = declared } else { type = "" }
                return Column(position: Int(position), name: name, declaredType: type)
            }
        }
        return shapes
    }

    /// The name under which `table` exists here (SQLite compares table names without
    /// regard to ASCII case), if it does.
    func actualName(of table: String) -> String? {
        if tables[table] != nil { return table }
        let folded = table.lowercased()
        return tables.keys.first { $0.lowercased() == folded }
    }

    /// The columns of `table`, if it exists.
    func columns(of table: String) -> [Column]? {
        actualName(of: table).flatMap { tables[$0] }
    }
}

import EntityStoreCodec

/// The columns of one snapshot table: names in order, kinds, nullability. Grows as rows
/// reveal fields (an optional field that was nil in every earlier row).
struct TableLayout {
    struct Column {
        let name: String
        var kind: ColumnKind?
        var nullable: Bool
        /// What NULL means in the column.
        var nulls: NullMeaning = .absent
    }

    let table: String
    private(set) var columns: [Column] = []
    private(set) var positions: [String: Int] = [:]
    /// The position of each column by its lowercased name, to find a case clash with one
    /// probe (a row of 10,000 new fields compared each with every column before it).
    private var positionsByFoldedName: [String: Int] = [:]
    /// How values of the `id` column are stored.
    var idKind: ColumnKind?

    init(table: String) {
        self.table = table
    }

    /// The position of `name`, adding the column if new. `rowsBefore` > 0 makes a new
    /// column nullable (earlier rows lack it). O(1) expected.
    mutating func position(of name: String, rowsBefore: Int) throws(SnapshotError) -> (position: Int, isNew: Bool) {
        if let position = positions[name] { return (position, false) }
        if name.isEmpty { throw .encodingFailed(table: table, detail: "a field has an empty name, which cannot be a column") }
        // SQLite compares column names without regard to ASCII case.
        let folded = name.lowercased()
        if let clash = positionsByFoldedName[folded] {
            throw .encodingFailed(
                table: table,
                detail: "fields '\(columns[clash].name)' and '\(name)' differ only in case, which SQLite column names cannot tell apart")
        }
        columns.append(Column(name: name, kind: nil, nullable: rowsBefore > 0))
        positions[name] = columns.count - 1
        positionsByFoldedName[folded] = columns.count - 1
        return (columns.count - 1, true)
    }

    /// Records a value's kind for the column at `position`.
    /// - Throws: if the column already holds another kind.
    mutating func note(_ value: EncodedValue, at position: Int) throws(SnapshotError) {
        guard let kind = value.kind else {
            columns[position].nullable = true
            return
        }
        switch columns[position].kind {
        case nil: columns[position].kind = kind
        case kind?: break
        case let other?:
            throw .encodingFailed(
                table: table,
                detail: "field '\(columns[position].name)' holds \(kind.rawValue) values in one row and \(other.rawValue) in another")
        }
    }

    mutating func markNullable(_ position: Int) {
        columns[position].nullable = true
    }

    /// Sets what NULL means in the column `name`, if the layout has it.
    mutating func setNulls(_ nulls: NullMeaning, of name: String) {
        if let position = positions[name] { columns[position].nulls = nulls }
    }

    /// Restores a layout from the snapshot's metadata.
    init(table: String, columns: [Column], idKind: ColumnKind?) {
        self.table = table
        self.columns = columns
        self.idKind = idKind
        for (position, column) in columns.enumerated() {
            positions[column.name] = position
            positionsByFoldedName[column.name.lowercased()] = position
        }
    }

    /// `CREATE TABLE` for the current columns; `id` is the primary key.
    var createSQL: String {
        var definitions: [String] = []
        for column in columns {
            let type = (column.kind ?? .null).declaredType
            if column.name == "id" {
                definitions.append(idKind == .integer ? "\"id\" INTEGER PRIMARY KEY" : "\"id\" \(type) PRIMARY KEY NOT NULL")
            } else {
                definitions.append("\(quoteIdentifier(column.name))\(type.isEmpty ? "" : " " + type)")
            }
        }
        return "CREATE TABLE \(quoteIdentifier(table)) (\(definitions.joined(separator: ", ")))"
    }

    /// `ALTER TABLE ... ADD COLUMN` for the column at `position`.
    func addColumnSQL(_ position: Int) -> String {
        let column = columns[position]
        let type = (column.kind ?? .null).declaredType
        return "ALTER TABLE \(quoteIdentifier(table)) ADD COLUMN \(quoteIdentifier(column.name))\(type.isEmpty ? "" : " " + type)"
    }

    /// `INSERT OR REPLACE` of every column, in order.
    /// `UPDATE` of the columns at `positions` (bound first, in order) of the row whose
    /// `id` is bound last.
    func updateSQL(columns positions: [Int]) -> String {
        let assignments = positions.map { "\(quoteIdentifier(columns[$0].name)) = ?" }.joined(separator: ", ")
        return "UPDATE \(quoteIdentifier(table)) SET \(assignments) WHERE \(quoteIdentifier("id")) = ?"
    }

    var insertSQL: String {
        let names = columns.map { quoteIdentifier($0.name) }.joined(separator: ", ")
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return "INSERT OR REPLACE INTO \(quoteIdentifier(table)) (\(names)) VALUES (\(marks))"
    }
}

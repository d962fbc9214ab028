import EntityStoreCodec

/// Writes rows of one table: creates the table on the first row, adds columns as new
/// fields appear, and reuses one prepared statement for every row.
struct TableRowWriter {
    /// Lays the rows out; ``layout`` is its layout.
    private var arranger: RowArranger
    private let connection: SQLiteConnection
    private var insert: SQLiteStatement?
    /// `UPDATE` statements by the columns they set, so a save builds each SQL text once.
    private var updateSQL: [[Int]: String] = [:]
    private(set) var rowsWritten = 0
    private var created: Bool

    /// The table's columns as the rows so far need them.
    var layout: TableLayout {
        get { arranger.layout }
        _modify { yield &arranger.layout }
    }

    /// A writer for a new table (created on the first row).
    init(table: String, connection: SQLiteConnection) {
        self.arranger = RowArranger(layout: TableLayout(table: table))
        self.connection = connection
        self.created = false
    }

    /// A writer for an existing table with a known layout (incremental saves).
    init(layout: TableLayout, connection: SQLiteConnection) {
        // The table may hold rows already: a column a save adds is NULL in them.
        self.arranger = RowArranger(layout: layout, rowsBefore: 1)
        self.connection = connection
        self.created = true
    }

    /// Declares columns in order before the first row, with their kinds and what NULL
    /// means in each, so the table's columns (order and declared types) do not depend on
    /// which fields the first rows have.
    mutating func declare(_ columns: [(name: String, kind: ColumnKind?, nulls: NullMeaning)]) throws(SnapshotError) {
        for (name, kind, nulls) in columns {
            let (position, _) = try layout.position(of: name, rowsBefore: 0)
            if let kind { try layout.note(EncodedValue(value: .null, kind: kind), at: position) }
            layout.setNulls(nulls, of: name)
        }
    }

    /// Writes one row given as named fields; `id` must be among them and not null.
    mutating func write(_ fields: [(name: String, value: EncodedValue)]) throws(SnapshotError) {
        let newColumns = try arranger.arrange(fields)
        try insert(arranger.values, newColumns: newColumns)
    }

    /// Inserts one row given in column order, first creating the table or adding
    /// `newColumns` to it, as ``layout`` describes them.
    mutating func insert(_ row: some Collection<SQLiteValue>, newColumns: [Int]) throws(SnapshotError) {
        if (!created || !newColumns.isEmpty) && layout.columns.count > connection.columnLimit {
            // Refused before any statement: SQLite would refuse the same table only after
            // adding columns one `ALTER TABLE` at a time, each re-reading all the others
            // (seconds for a hostile record of a few thousand fields). Its own words, which
            // callers recognize.
            let message = "too many columns on \(layout.table)"
            throw SnapshotError(SQLiteError(extendedCode: SQLiteError.error, message: message), path: connection.path)
        }
        do {
            if !created {
                try connection.execute(layout.createSQL)
                created = true
                insert = nil
            } else if !newColumns.isEmpty {
                for position in newColumns { try connection.execute(layout.addColumnSQL(position)) }
                insert = nil
            }
            if insert == nil { insert = try connection.prepare(layout.insertSQL) }
            guard let insert else { return }
            var index: Int32 = 1
            for value in row {
                try insert.bind(value, at: index)
                index += 1
            }
            _ = try insert.step()
            try insert.reset()
        } catch {
            throw SnapshotError(error, path: connection.path)
        }
        rowsWritten += 1
    }

    /// Takes `layout`, which a ``RowArranger`` on another thread grew, as this writer's:
    /// the next ``insert(_:newColumns:)`` creates or extends the table to match it.
    mutating func adopt(_ layout: TableLayout) {
        arranger.layout = layout
    }

    /// Rewrites a row the table holds as `old`, setting only the columns whose stored
    /// values differ: an unchanged indexed column then leaves its SQL index untouched, so
    /// a save writes the fewest pages. Falls back to ``write(_:)`` (a whole-row replace)
    /// when a field needs a new column or the row turns out to be missing.
    mutating func update(
        _ fields: [(name: String, value: EncodedValue)], from old: [(name: String, value: EncodedValue)]
    ) throws(SnapshotError) {
        guard created, let id = fields.first(where: { $0.name == "id" })?.value, id.kind != nil,
              fields.allSatisfy({ layout.positions[$0.name] != nil })
        else { return try write(fields) }
        var current = Array(repeating: SQLiteValue.null, count: layout.columns.count)
        var seen = Array(repeating: false, count: layout.columns.count)
        for (name, value) in fields {
            guard let position = layout.positions[name] else { continue }
            try layout.note(value, at: position)
            current[position] = SQLiteValue(value.value)
            seen[position] = true
        }
        for index in seen.indices where !seen[index] { layout.markNullable(index) }
        var previous = Array(repeating: SQLiteValue.null, count: layout.columns.count)
        for (name, value) in old {
            if let position = layout.positions[name] { previous[position] = SQLiteValue(value.value) }
        }
        let changed = current.indices.filter { !Self.isSameStored(current[$0], previous[$0]) }
        guard !changed.isEmpty else { return }
        let updatedRows: Int
        do {
            let sql = updateSQL[changed] ?? layout.updateSQL(columns: changed)
            updateSQL[changed] = sql
            let statement = try connection.cachedStatement(sql)
            for (offset, position) in changed.enumerated() { try statement.bind(current[position], at: Int32(offset + 1)) }
            try statement.bind(SQLiteValue(id.value), at: Int32(changed.count + 1))
            _ = try statement.step()
            try statement.reset()
            updatedRows = connection.changes
        } catch {
            throw SnapshotError(error, path: connection.path)
        }
        if updatedRows == 0 { return try write(fields) }
        rowsWritten += 1
        arranger.countRow()
    }

    /// Whether two values are stored identically: reals by bit pattern, so `-0.0` and
    /// `0.0` (equal as numbers) count as different.
    static func isSameStored(_ lhs: SQLiteValue, _ rhs: SQLiteValue) -> Bool {
        if case let .real(left) = lhs, case let .real(right) = rhs { return left.bitPattern == right.bitPattern }
        return lhs == rhs
    }

    /// Creates the table with only an `id` column if no row ever created it.
    mutating func finish(idKind: ColumnKind?) throws(SnapshotError) {
        guard !created else { return }
        layout.idKind = idKind
        _ = try layout.position(of: "id", rowsBefore: 0)
        if let idKind { try layout.note(EncodedValue(value: .null, kind: idKind), at: 0) }
        do { try connection.execute(layout.createSQL) } catch { throw SnapshotError(error, path: connection.path) }
        created = true
    }
}

/// The layout half of writing rows, which touches no file: maps each row's fields to
/// column positions (adding columns for new names, noting each value's kind) and puts the
/// row's values in column order.
struct RowArranger: Sendable {
    var layout: TableLayout
    /// The values of the row arranged last, in column order.
    private(set) var values: [SQLiteValue] = []
    private var seen: [Bool] = []
    /// The previous row's field names with their column positions: rows of one type name
    /// their fields in the same order, so the n-th field is checked against the previous
    /// row's n-th (comparing a string with itself, which is cheap) before any hashing.
    private var plan: [(name: String, position: Int)] = []
    /// The column position of each field of the row being arranged.
    private var rowPositions: [Int] = []
    /// Rows arranged so far: a column that appears after the first row is nullable.
    private var rows = 0

    /// An arranger for rows after `rowsBefore` rows already laid out (a column that
    /// appears after the first row is nullable).
    init(layout: TableLayout, rowsBefore: Int = 0) {
        self.layout = layout
        self.rows = rowsBefore
    }

    /// Arranges one row given as named fields; `id` must be among them and not null.
    /// Returns the positions of the columns it added.
    mutating func arrange(_ fields: [(name: String, value: EncodedValue)]) throws(SnapshotError) -> [Int] {
        guard let id = fields.first(where: { $0.name == "id" })?.value, id.kind != nil else {
            throw .encodingFailed(table: layout.table, detail: "an entity encodes no non-null 'id' field")
        }
        if layout.idKind == nil { layout.idKind = id.kind }
        var newColumns: [Int] = []
        rowPositions.removeAll(keepingCapacity: true)
        for (offset, (name, value)) in fields.enumerated() {
            let position: Int
            if offset < plan.count, plan[offset].name == name {
                position = plan[offset].position
            } else {
                let (found, isNew) = try layout.position(of: name, rowsBefore: rows)
                if isNew { newColumns.append(found) }
                if offset < plan.count { plan[offset] = (name, found) } else { plan.append((name, found)) }
                position = found
            }
            try layout.note(value, at: position)
            rowPositions.append(position)
        }
        if values.count != layout.columns.count {
            values = Array(repeating: .null, count: layout.columns.count)
            seen = Array(repeating: false, count: layout.columns.count)
        }
        for index in values.indices {
            values[index] = .null
            seen[index] = false
        }
        for (offset, field) in fields.enumerated() {
            values[rowPositions[offset]] = SQLiteValue(field.value.value)
            seen[rowPositions[offset]] = true
        }
        for index in seen.indices where !seen[index] { layout.markNullable(index) }
        rows += 1
        return newColumns
    }

    /// Counts a row written without ``arrange(_:)`` (an update in place).
    mutating func countRow() {
        rows += 1
    }
}

#if PostgreSQL
import EntityStore
import EntityStoreCodec
import Foundation

/// The columns of one stored table: `id` first, then the fields, growing as rows reveal
/// fields (an optional field that was nil in every earlier row).
struct WriteLayout: Sendable {
    struct Column: Sendable {
        var name: String
        var kind: ColumnKind?
        var nullable: Bool
    }

    /// A change to the table a row needs before it can be stored.
    enum Change: Equatable {
        /// A new column at this position.
        case add(Int)
        /// A column that held only NULLs (typed TEXT) takes the type of its first value.
        case retype(Int)
    }

    let table: String
    private(set) var columns: [Column]
    private(set) var index: [String: Int]
    private(set) var rows = 0
    private var seen: [Int] = []
    /// Field orders seen, by field count, with their columns' positions: rows of a typed
    /// table encode their fields in one order (less the nil optionals), so a row is placed
    /// by comparing names with a known order, without hashing them.
    private var orders: [Int: (names: [String], positions: [Int])] = [:]

    init(table: String) {
        self.table = table
        self.columns = [Column(name: "id", kind: nil, nullable: false)]
        self.index = ["id": 0]
    }

    init(table: String, columns: [Column]) {
        self.table = table
        self.columns = columns
        var index: [String: Int] = [:]
        for (position, column) in columns.enumerated() { index[column.name] = position }
        self.index = index
    }

    /// Takes in one row's fields, returning the changes the table needs for it (none when
    /// it fits). O(fields).
    /// - Throws: for a field that held another kind in an earlier row, or a name
    ///   PostgreSQL cannot hold.
    mutating func absorb(_ fields: [(name: String, value: EncodedValue)]) throws(PostgresStoreError) -> [Change] {
        if let order = orders[fields.count], fits(fields, order) {
            // A known order: the same columns as an earlier row (so the missing ones are
            // nullable already), each value of its column's kind.
            rows += 1
            return []
        }
        let changes = try absorbSlowly(fields)
        let names = fields.map(\.name)
        if Set(names).count == names.count, orders.count < 16 {
            orders[fields.count] = (names, names.map { index[$0] ?? 0 })
        }
        return changes
    }

    /// Whether `fields` has the names of `order`, in its order, with values that fit. O(fields).
    private mutating func fits(_ fields: [(name: String, value: EncodedValue)], _ order: (names: [String], positions: [Int])) -> Bool {
        for (offset, field) in fields.enumerated() {
            guard field.name == order.names[offset] else { return false }
            let position = order.positions[offset]
            if let kind = field.value.kind {
                guard columns[position].kind == kind else { return false }
            } else {
                guard position != 0 else { return false }
                columns[position].nullable = true
            }
        }
        return true
    }

    private mutating func absorbSlowly(_ fields: [(name: String, value: EncodedValue)]) throws(PostgresStoreError) -> [Change] {
        var changes: [Change] = []
        if seen.count < columns.count { seen.append(contentsOf: repeatElement(-1, count: columns.count - seen.count)) }
        for (name, value) in fields {
            if let position = index[name] {
                seen[position] = rows
                guard let kind = value.kind else {
                    if position == 0 { throw .encodingFailed(table: table, detail: "an entity has a null id") }
                    columns[position].nullable = true
                    continue
                }
                switch columns[position].kind {
                case nil:
                    columns[position].kind = kind
                    if !changes.contains(.add(position)) { changes.append(.retype(position)) }
                case kind?: break
                case let other?:
                    throw .encodingFailed(
                        table: table, detail: "field '\(name)' holds \(kind.rawValue) values in one row and \(other.rawValue) in another")
                }
            } else {
                try SQL.checkIdentifier(name, what: "field", table: table)
                if name.hasPrefix("entitystore_") {
                    throw .encodingFailed(table: table, detail: "field names starting with 'entitystore_' are reserved for the store's own columns")
                }
                columns.append(Column(name: name, kind: value.kind, nullable: rows > 0 || value.kind == nil))
                index[name] = columns.count - 1
                seen.append(rows)
                changes.append(.add(columns.count - 1))
            }
        }
        if index["id"].map({ seen[$0] }) != rows {
            throw .encodingFailed(table: table, detail: "an entity encodes no 'id' field")
        }
        for position in columns.indices where seen[position] != rows { columns[position].nullable = true }
        rows += 1
        return changes
    }

    /// The row's values in column order (NULL for fields it lacks).
    func values(_ fields: [(name: String, value: EncodedValue)], into row: inout [StoredValue]) {
        row.removeAll(keepingCapacity: true)
        row.append(contentsOf: repeatElement(StoredValue.null, count: columns.count))
        if let order = orders[fields.count] {
            var ordered = true
            for (offset, field) in fields.enumerated() where field.name != order.names[offset] {
                ordered = false
                break
            }
            if ordered {
                for (offset, field) in fields.enumerated() { row[order.positions[offset]] = field.value.value }
                return
            }
        }
        for (name, value) in fields {
            if let position = index[name] { row[position] = value.value }
        }
    }

    /// The SQL type of the column at `position` (TEXT while it only held NULLs).
    func sqlType(_ position: Int) -> String {
        (columns[position].kind ?? .null).sqlType
    }
}

/// Chooses one kind per field of a dynamic table from every record, as the SQLite
/// snapshot does: integers `integer`, doubles `double`, both `number`, booleans `bool`,
/// strings `string` (`date` for the fields named as dates); anything else, and any field
/// holding `null` (so that `null` and a missing field stay distinct: SQL NULL is
/// "missing"), `json`.
struct DynamicKinds {
    let layout: WriteLayout
    let kinds: [String: ColumnKind]

    /// The kinds for `records`; `dateFields` hold dates as their text (``DynamicDates``),
    /// which no JSON kind tells. O(n × fields).
    init(records: TableView<DynamicRecord>, table: String, dateFields: Set<String> = []) throws(PostgresStoreError) {
        let scan = DynamicFieldScan(records)
        guard scan.idKinds.count <= 1 else {
            throw .encodingFailed(table: table, detail: "a dynamic table's IDs must all be integers or all strings")
        }
        var kinds: [String: ColumnKind] = [:]
        var columns = [WriteLayout.Column(name: "id", kind: scan.idKinds.first, nullable: false)]
        for (name, field) in scan.fields.sorted(by: { $0.key < $1.key }) {
            try SQL.checkIdentifier(name, what: "field", table: table)
            if name == "id" || name.hasPrefix("entitystore_") {
                throw .encodingFailed(table: table, detail: "field name '\(name)' is reserved")
            }
            // A field that holds null is JSONB, which spells null itself (see DynamicFieldScan).
            let kind: ColumnKind = field.hasNull ? .json : dateFields.contains(name) ? .date : field.sharedKind ?? .json
            kinds[name] = kind
            columns.append(.init(name: name, kind: kind, nullable: true))
        }
        self.kinds = kinds
        self.layout = WriteLayout(table: table, columns: columns)
    }

    /// The fields of `record` in the chosen kinds.
    /// - Throws: for a value of a date field that is not a date's text.
    func fields(of record: DynamicRecord) throws(PostgresStoreError) -> [(name: String, value: EncodedValue)] {
        var fields: [(name: String, value: EncodedValue)] = []
        fields.reserveCapacity(record.fields.count + 1)
        switch record.id {
        case let .integer(value): fields.append(("id", EncodedValue(value: .integer(value), kind: .integer)))
        case let .string(value): fields.append(("id", EncodedValue(value: .text(value), kind: .string)))
        }
        for (name, value) in record.fields {
            let kind = kinds[name] ?? .json
            guard kind == .date else {
                fields.append((name, Self.encode(value, as: kind)))
                continue
            }
            guard let date = DynamicDates.encode(value) else {
                throw .encodingFailed(
                    table: layout.table, detail: "field '\(name)' of record \(record.id) holds \(value.serialized().prefix(80)), not a date")
            }
            fields.append((name, date))
        }
        return fields
    }

    static func encode(_ value: JSONValue, as kind: ColumnKind) -> EncodedValue {
        switch (kind, value) {
        case (.json, _): return EncodedValue(value: .text(value.serialized()), kind: .json)
        case let (.number, .integer(number)): return EncodedValue(value: .text(String(number)), kind: .number)
        case let (.number, .double(number)):
            return EncodedValue(value: DecimalText.numberText(number).map { .text($0) } ?? .null, kind: .number)
        default: return RowEncoder.encode(value)
        }
    }
}

/// The metadata tables of a stored store, as in the SQLite snapshot format, plus the
/// change log that sync uses.
enum MetadataTables {
    /// The snapshot format version whose contract the layout follows.
    static let formatVersion = 3

    static func create(in schema: String, _ session: PostgresSession) throws {
        let statements = [
            "CREATE TABLE \(SQL.qualified(schema, "entitystore_meta")) (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            """
            CREATE TABLE \(SQL.qualified(schema, "entitystore_tables")) (name TEXT PRIMARY KEY, entity_type TEXT NOT NULL, \
            id_kind TEXT NOT NULL, row_count BIGINT NOT NULL, position INTEGER NOT NULL)
            """,
            """
            CREATE TABLE \(SQL.qualified(schema, "entitystore_columns")) (table_name TEXT NOT NULL, name TEXT NOT NULL, \
            kind TEXT NOT NULL, nullable BOOLEAN NOT NULL, position INTEGER NOT NULL, nulls TEXT NOT NULL DEFAULT 'absent', \
            PRIMARY KEY (table_name, name))
            """,
            """
            CREATE TABLE \(SQL.qualified(schema, "entitystore_indexes")) (table_name TEXT NOT NULL, name TEXT NOT NULL, \
            kind TEXT NOT NULL, field TEXT NOT NULL, PRIMARY KEY (table_name, name))
            """,
            """
            CREATE TABLE \(SQL.qualified(schema, "entitystore_relations")) (table_name TEXT NOT NULL, field TEXT NOT NULL, \
            target_table TEXT NOT NULL, delete_rule TEXT NOT NULL, PRIMARY KEY (table_name, field))
            """,
            "CREATE TABLE \(SQL.qualified(schema, "entitystore_app_migrations")) (version INTEGER PRIMARY KEY, name TEXT NOT NULL)",
            """
            CREATE TABLE \(SQL.qualified(schema, "entitystore_changes")) (position BIGINT NOT NULL, table_name TEXT NOT NULL, \
            row_id TEXT NOT NULL, origin TEXT NOT NULL)
            """,
            "CREATE INDEX \(SQL.quote("entitystore_changes_position")) ON \(SQL.qualified(schema, "entitystore_changes")) (position)",
            rowIndexSQL(schema),
        ]
        try session.executeScript(statements.joined(separator: ";\n"))
    }

    /// The change log's index by row, through which a push finds the later changes to the
    /// rows it writes (its conflict check) without reading every change since its base.
    static func rowIndexSQL(_ schema: String) -> String {
        """
        CREATE INDEX IF NOT EXISTS \(SQL.quote(rowIndexName)) ON \(SQL.qualified(schema, "entitystore_changes")) \
        (table_name, row_id, position)
        """
    }

    static let rowIndexName = "entitystore_changes_row"

    /// Creates the row index in a store made before it existed; O(1) when it exists, else
    /// O(change log) once, if the build ends within `buildLimit` (the build holds pushes
    /// off meanwhile; a server backend goes on building after its client gave up, so the
    /// server itself gives up at the limit).
    /// - Throws: a server error when it gave up: a transaction writing the change log held
    ///   it past ``rowIndexLockWait`` (the build's `SHARE` lock waits for every such
    ///   transaction, and every push queues behind that wait), or the build outlasted
    ///   `buildLimit` (a long log: the index is then for an administrator to create,
    ///   `CONCURRENTLY`).
    static func ensureRowIndex(in schema: String, buildLimit: Duration, _ session: PostgresSession) throws {
        let exists = try session.execute("SELECT to_regclass($1) IS NOT NULL", [.text(SQL.qualified(schema, rowIndexName))])
        if exists.bool(0, 0) != true {
            // One query: an implicit transaction, to which SET LOCAL is bounded.
            try session.executeScript("""
                SET LOCAL lock_timeout = '\(rowIndexLockWait.milliseconds)ms'; \
                SET LOCAL statement_timeout = '\(max(1, buildLimit.milliseconds))ms'; \
                \(rowIndexSQL(schema))
                """)
        }
    }

    static let rowIndexLockWait: Duration = .milliseconds(200)

    /// Records one table's row, columns, indexes and relations.
    static func record(
        _ table: any AnyTable, layout: WriteLayout, rows: Int, position: Int, in schema: String, _ session: PostgresSession
    ) throws {
        try session.execute(
            "INSERT INTO \(SQL.qualified(schema, "entitystore_tables")) (name, entity_type, id_kind, row_count, position) VALUES ($1, $2, $3, $4::int8, $5::int8)",
            [.text(table.name), .text(table.entityTypeName), .text((layout.columns[0].kind ?? .null).rawValue), .integer(Int64(rows)), .integer(Int64(position))])
        try recordColumns(table.name, layout.columns, from: 0, in: schema, session)
        let indexes = table.indexDescriptions
        if !indexes.isEmpty {
            try session.execute(
                """
                INSERT INTO \(SQL.qualified(schema, "entitystore_indexes")) (table_name, name, kind, field) \
                SELECT $1, n, k, f FROM unnest($2::text[], $3::text[], $4::text[]) AS u(n, k, f)
                """,
                [.text(table.name), .texts(indexes.map(\.name)), .texts(indexes.map(\.kind.rawValue)), .texts(indexes.map(\.field))])
        }
        let relations = table.relations
        if !relations.isEmpty {
            try session.execute(
                """
                INSERT INTO \(SQL.qualified(schema, "entitystore_relations")) (table_name, field, target_table, delete_rule) \
                SELECT $1, f, t, r FROM unnest($2::text[], $3::text[], $4::text[]) AS u(f, t, r)
                """,
                [.text(table.name), .texts(relations.map(\.field)), .texts(relations.map(\.targetTable)), .texts(relations.map(\.deleteRule.rawValue))])
        }
    }

    /// Records the columns from `first` on.
    static func recordColumns(
        _ table: String, _ columns: [WriteLayout.Column], from first: Int, in schema: String, _ session: PostgresSession
    ) throws {
        guard first < columns.count else { return }
        let slice = columns[first...]
        try session.execute(
            """
            INSERT INTO \(SQL.qualified(schema, "entitystore_columns")) (table_name, name, kind, nullable, position) \
            SELECT $1, n, k, b, p FROM unnest($2::text[], $3::text[], $4::bool[], $5::int8[]) AS u(n, k, b, p)
            """,
            [
                .text(table), .texts(slice.map(\.name)), .texts(slice.map { ($0.kind ?? .null).rawValue }),
                .texts(slice.map { $0.nullable ? "t" : "f" }), .integers(slice.indices.map { Int64($0) }),
            ])
    }

    /// Creates the SQL index of each declared index on a top-level field that is a column.
    static func createIndexes(for table: any AnyTable, layout: WriteLayout, in schema: String, _ session: PostgresSession) throws {
        for index in table.indexDescriptions where layout.index[index.field] != nil && index.field != "id" {
            let unique = index.kind == .unique ? "UNIQUE " : ""
            try session.execute(
                "CREATE \(unique)INDEX \(SQL.quote(SQL.indexName(table: table.name, index: index.name))) ON \(SQL.qualified(schema, table.name)) (\(SQL.quote(index.field)))")
        }
    }
}
#endif

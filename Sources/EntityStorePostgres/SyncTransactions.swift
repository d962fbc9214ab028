#if PostgreSQL
import EntityStore
import EntityStoreCodec
import Foundation

/// The rows of one table a push writes: the current values of changed rows, and the IDs
/// of removed ones.
protocol PushBatch: Sendable {
    var tableName: String { get }
    var ids: IDSet { get }
    var removalCount: Int { get }
    /// The position each upserted row's local value is based on, in upsert order.
    var upsertBases: [Int64] { get }
    /// The position each removal is based on, in removal order.
    var removalBases: [Int64] { get }
    /// The fields of each row to write, encoded for the server's column kinds.
    func upsertFields(layout: WriteLayout) throws(PostgresStoreError) -> [[(name: String, value: EncodedValue)]]
    /// The stored form of each removed ID.
    func removalIDs() throws(PostgresStoreError) -> [EncodedValue]
}

struct TypedPushBatch<T: TypedTable>: PushBatch {
    let table: T
    let upserts: [T.Element]
    let removals: [T.Element.ID]
    let ids: IDSet
    let upsertBases: [Int64]
    let removalBases: [Int64]

    var tableName: String { table.name }
    var removalCount: Int { removals.count }

    func upsertFields(layout: WriteLayout) throws(PostgresStoreError) -> [[(name: String, value: EncodedValue)]] {
        let encoder = RowEncoder(dialect: .postgres)
        var rows: [[(name: String, value: EncodedValue)]] = []
        rows.reserveCapacity(upserts.count)
        for entity in upserts {
            if let record = entity as? DynamicRecord {
                rows.append(try Self.fields(of: record, layout: layout))
            } else {
                rows.append(try RowFields<T.Element>.of(entity, encoder: encoder, dynamic: nil, table: table.name))
            }
        }
        return rows
    }

    func removalIDs() throws(PostgresStoreError) -> [EncodedValue] {
        var result: [EncodedValue] = []
        for id in removals {
            do { result.append(try RowEncoder.encodeID(id, dialect: .postgres)) } catch {
                throw .encodingFailed(table: table.name, detail: "id \(id): \(error)")
            }
        }
        return result
    }

    /// A dynamic record's fields in the kinds the server's columns have (new fields take
    /// their value's kind, `json` for `null`).
    private static func fields(of record: DynamicRecord, layout: WriteLayout) throws(PostgresStoreError) -> [(name: String, value: EncodedValue)] {
        var fields: [(name: String, value: EncodedValue)] = []
        switch record.id {
        case let .integer(value): fields.append(("id", EncodedValue(value: .integer(value), kind: .integer)))
        case let .string(value): fields.append(("id", EncodedValue(value: .text(value), kind: .string)))
        }
        for (name, value) in record.fields {
            guard let position = layout.index[name], let kind = layout.columns[position].kind, kind != .null else {
                fields.append((name, value.isNull ? DynamicKinds.encode(value, as: .json) : RowEncoder.encode(value)))
                continue
            }
            let encoded: EncodedValue?
            switch (kind, value) {
            case (.json, _), (.number, .integer), (.number, .double), (.integer, .integer), (.double, .double), (.bool, .bool), (.string, .string):
                encoded = DynamicKinds.encode(value, as: kind)
            // A date as dynamic readers give it: its text.
            case (.date, _): encoded = DynamicDates.encode(value)
            default: encoded = nil
            }
            guard let encoded else {
                throw .encodingFailed(
                    table: layout.table,
                    detail: "field '\(name)' of record \(record.id) does not fit its stored kind \(kind.rawValue); push a full snapshot to change kinds")
            }
            fields.append((name, encoded))
        }
        return fields
    }
}

/// IDs of one table's entities, type-erased.
struct IDSet: @unchecked Sendable {
    // `@unchecked Sendable` is safe: only `Entity.ID` values go in (see the callers), and
    // `Entity` requires its ID to be `Sendable`; the set itself is an immutable value.
    let ids: Set<AnyHashable>
    init(_ ids: Set<AnyHashable>) { self.ids = ids }
}

/// The text of a stored ID, as the change log records it.
func idText(_ value: EncodedValue) -> String {
    switch value.value {
    case let .integer(number): return String(number)
    case let .text(text): return text
    case let .double(number): return String(number)
    case let .bool(flag): return flag ? "true" : "false"
    case .bytes, .null: return ""
    }
}

/// `$n::type[]` binding a list of IDs of one kind.
func bindIDs(_ ids: [EncodedValue], kind: ColumnKind, into binds: inout [PostgresParameter]) -> String {
    switch kind {
    case .integer:
        binds.append(.integers(ids.compactMap { if case let .integer(number) = $0.value { return number } else { return Int64(idText($0)) } }))
        return "$\(binds.count)::int8[]"
    case .uuid:
        binds.append(.texts(ids.map(idText)))
        return "$\(binds.count)::text[]::uuid[]"
    default:
        binds.append(.texts(ids.map(idText)))
        return "$\(binds.count)::text[]"
    }
}

/// One push, inside its transaction: lock the log head, check for conflicts, write.
struct PushTransaction {
    /// Up to this many rows of a table go in one INSERT with bound values; more go through
    /// a temporary table loaded with COPY.
    static let rowsPerStatement = 200

    let schema: String
    let origin: String
    let position: Int64
    let mine: Set<Int64>

    func run(_ batches: [any PushBatch], _ session: PostgresSession) throws -> (Int64, Int, Int64) {
        let meta = SQL.qualified(schema, "entitystore_meta")
        // The row lock orders pushes: positions follow commit order.
        var values: [String: String] = [:]
        do {
            // Only the head row is locked (every writer locks it first: no deadlock).
            let rows = try session.execute(
                "SELECT h.value, (SELECT s.value FROM \(meta) s WHERE s.key = 'log_start') FROM \(meta) h WHERE h.key = 'log_head' FOR UPDATE OF h")
            for row in 0..<rows.count {
                values["log_head"] = try rows.requiredString(row, 0)
                values["log_start"] = rows.string(row, 1)
            }
        } catch let error where ["42P01", "3F000"].contains(PostgresStoreError.sqlState(of: error)) {
            throw PostgresStoreError.notAStore(schema: schema, reason: "it has no entitystore_meta table (push a snapshot first)")
        }
        let head = values["log_head"].flatMap { Int64($0) } ?? 0
        let logStart = values["log_start"].flatMap { Int64($0) } ?? 0

        // Server-side layouts of the tables touched, in one query.
        let names = batches.map(\.tableName)
        var idKinds: [String: ColumnKind] = [:]
        var columns: [String: [WriteLayout.Column]] = [:]
        let layoutRows = try session.execute(
            """
            SELECT t.name, t.id_kind, c.name, c.kind, c.nullable FROM \(SQL.qualified(schema, "entitystore_tables")) t \
            LEFT JOIN \(SQL.qualified(schema, "entitystore_columns")) c ON c.table_name = t.name \
            WHERE t.name = ANY($1::text[]) ORDER BY t.name, c.position
            """,
            [.texts(names)])
        for row in 0..<layoutRows.count {
            let (table, idKind, name, kind, nullable) = (
                try layoutRows.requiredString(row, 0), try layoutRows.requiredString(row, 1), layoutRows.string(row, 2),
                layoutRows.string(row, 3), layoutRows.bool(row, 4))
            idKinds[table] = ColumnKind(rawValue: idKind) ?? .null
            if let name, let kind, name != "id" {
                let parsed = ColumnKind(rawValue: kind)
                columns[table, default: []].append(.init(name: name, kind: parsed == .null ? nil : parsed, nullable: nullable ?? true))
            }
        }

        // Encode, and list every row written.
        var prepared: [(batch: any PushBatch, layout: WriteLayout, firstNew: Int, changes: [WriteLayout.Change], rows: [[(name: String, value: EncodedValue)]], removals: [EncodedValue])] = []
        var conflictTables: [String] = []
        var conflictIDs: [String] = []
        var conflictBases: [Int64] = []
        for batch in batches {
            guard let idKind = idKinds[batch.tableName] else {
                throw PostgresStoreError.schemaMismatch(table: batch.tableName, detail: "the store in schema '\(schema)' has no such table; push a full snapshot")
            }
            let known = [WriteLayout.Column(name: "id", kind: idKind == .null ? nil : idKind, nullable: false)] + (columns[batch.tableName] ?? [])
            var layout = WriteLayout(table: batch.tableName, columns: known)
            let rows = try batch.upsertFields(layout: layout)
            var changes: [WriteLayout.Change] = []
            for fields in rows {
                for change in try layout.absorb(fields) where !changes.contains(change) { changes.append(change) }
            }
            let removals = try batch.removalIDs()
            for (index, fields) in rows.enumerated() {
                if let id = fields.first(where: { $0.name == "id" }) {
                    conflictTables.append(batch.tableName)
                    conflictIDs.append(idText(id.value))
                    conflictBases.append(index < batch.upsertBases.count ? batch.upsertBases[index] : position)
                }
            }
            for (index, id) in removals.enumerated() {
                conflictTables.append(batch.tableName)
                conflictIDs.append(idText(id))
                conflictBases.append(index < batch.removalBases.count ? batch.removalBases[index] : position)
            }
            prepared.append((batch, layout, known.count, changes, rows, removals))
        }

        // Optimistic concurrency: any change to each row by others after the position its
        // local value is based on? A base pruned from the log cannot be checked.
        let unknowable = conflictBases.indices.filter { conflictBases[$0] < logStart }
        if !unknowable.isEmpty {
            throw PostgresStoreError.conflict(unknowable.map {
                PostgresConflict(table: conflictTables[$0], id: conflictIDs[$0], expectedRevision: conflictBases[$0], serverRevision: logStart)
            })
        }
        let conflicts = try session.execute(
            """
            SELECT c.table_name, c.row_id, max(c.position), min(p.b) FROM \(SQL.qualified(schema, "entitystore_changes")) c \
            JOIN unnest($1::text[], $2::text[], $3::int8[]) AS p(t, r, b) ON c.table_name = p.t AND c.row_id = p.r \
            WHERE c.position > $5::int8 AND c.position > p.b AND NOT (c.position = ANY($4::int8[])) \
            GROUP BY c.table_name, c.row_id ORDER BY 1, 2
            """, [.texts(conflictTables), .texts(conflictIDs), .integers(conflictBases), .integers(Array(mine)),
                  .integer(conflictBases.min() ?? position)])
        if !conflicts.isEmpty {
            var found: [PostgresConflict] = []
            for row in 0..<conflicts.count {
                found.append(PostgresConflict(
                    table: try conflicts.requiredString(row, 0), id: try conflicts.requiredString(row, 1),
                    expectedRevision: conflicts.int64(row, 3) ?? position, serverRevision: try conflicts.requiredInt64(row, 2)))
            }
            throw PostgresStoreError.conflict(found)
        }

        let newPosition = head + 1
        var written = 0
        for (index, item) in prepared.enumerated() {
            written += try write(item.batch, layout: item.layout, firstNew: item.firstNew, changes: item.changes, rows: item.rows,
                                       removals: item.removals, temporary: "entitystore_push_\(index)", revision: newPosition, session)
        }
        // The change log, the new head and the notification, in one statement.
        try session.execute(
            """
            WITH logged AS (INSERT INTO \(SQL.qualified(schema, "entitystore_changes")) (position, table_name, row_id, origin) \
            SELECT $1::int8, t, r, $4 FROM unnest($2::text[], $3::text[]) AS u(t, r)), \
            moved AS (UPDATE \(meta) SET value = $1::int8::text WHERE key = 'log_head') \
            SELECT pg_notify($5, $1::int8::text)
            """,
            [.integer(newPosition), .texts(conflictTables), .texts(conflictIDs), .text(origin), .text(SQL.channel(for: schema))])
        return (newPosition, written, head)
    }

    /// Writes one table's rows: new columns first, then the rows through a temporary
    /// table loaded with COPY and merged with `INSERT ... ON CONFLICT`, then removals.
    private func write(
        _ batch: any PushBatch, layout: WriteLayout, firstNew: Int, changes: [WriteLayout.Change],
        rows: [[(name: String, value: EncodedValue)]], removals: [EncodedValue], temporary: String, revision: Int64,
        _ session: PostgresSession
    ) throws -> Int {
        let table = SQL.qualified(schema, batch.tableName)
        for change in changes {
            switch change {
            case let .add(position):
                let column = layout.columns[position]
                try session.execute("ALTER TABLE \(table) ADD COLUMN \(SQL.quote(column.name)) \(layout.sqlType(position))")
            case let .retype(position):
                let column = layout.columns[position]
                let using = position == 0 ? "\(SQL.quote("id"))::text::\(layout.sqlType(position))" : "NULL"
                try session.execute("ALTER TABLE \(table) ALTER COLUMN \(SQL.quote(column.name)) TYPE \(layout.sqlType(position)) USING \(using)")
                if position == 0 {
                    try session.execute(
                        "UPDATE \(SQL.qualified(schema, "entitystore_tables")) SET id_kind = $1 WHERE name = $2",
                        [.text((column.kind ?? .null).rawValue), .text(batch.tableName)])
                }
                try session.execute(
                    "UPDATE \(SQL.qualified(schema, "entitystore_columns")) SET kind = $1 WHERE table_name = $2 AND name = $3",
                    [.text((column.kind ?? .null).rawValue), .text(batch.tableName), .text(column.name)])
            }
        }
        if firstNew < layout.columns.count {
            try MetadataTables.recordColumns(batch.tableName, layout.columns, from: firstNew, in: schema, session)
        }
        var delta: Int64 = 0
        let targets = layout.columns.map { SQL.quote($0.name) } + ["\"entitystore_revision\""]
        let updates = targets.dropFirst().map { "\($0) = EXCLUDED.\($0)" }
        let parameters = (layout.columns.count + 1) * rows.count
        if !rows.isEmpty && rows.count <= Self.rowsPerStatement && parameters < 30_000 {
            // A few rows: one INSERT with bound values, no temporary table.
            var binds: [PostgresParameter] = []
            binds.reserveCapacity(parameters)
            var tuples: [String] = []
            var values: [StoredValue] = []
            for fields in rows {
                layout.values(fields, into: &values)
                var marks: [String] = []
                for (position, value) in values.enumerated() {
                    binds.append(PostgresParameter(value))
                    marks.append("$\(binds.count)::\(layout.sqlType(position))")
                }
                binds.append(.integer(revision))
                marks.append("$\(binds.count)::int8")
                tuples.append("(" + marks.joined(separator: ", ") + ")")
            }
            let inserted = try session.execute(
                """
                WITH up AS (INSERT INTO \(table) (\(targets.joined(separator: ", "))) VALUES \(tuples.joined(separator: ", ")) \
                ON CONFLICT ("id") DO UPDATE SET \(updates.joined(separator: ", ")) RETURNING (xmax = 0) AS inserted) \
                SELECT count(*) FILTER (WHERE inserted) FROM up
                """, binds)
            delta += inserted.int64(0, 0) ?? 0
        } else if !rows.isEmpty {
            func columnName(_ position: Int) -> String { "entitystore_c\(position)" }
            var definitions = layout.columns.indices.map { "\(SQL.quote(columnName($0))) \(layout.sqlType($0))" }
            definitions.append("\"entitystore_revision\" BIGINT")
            try session.execute("CREATE TEMPORARY TABLE \(SQL.quote(temporary)) (\(definitions.joined(separator: ", "))) ON COMMIT DROP")
            let copyColumns = (layout.columns.indices.map(columnName) + ["entitystore_revision"]).map(SQL.quote)
            var next = rows.startIndex
            var values: [StoredValue] = []
            try session.copyIn("COPY \(SQL.quote(temporary)) (\(copyColumns.joined(separator: ", "))) FROM STDIN") {
                guard next < rows.endIndex else { return nil }
                var buffer: [UInt8] = []
                while next < rows.endIndex && buffer.count < PostgresSnapshotWriter.bytesPerMessage {
                    layout.values(rows[next], into: &values)
                    CopyText.appendRow(values, revision: revision, to: &buffer)
                    next += 1
                }
                return buffer
            }
            let sources = layout.columns.indices.map { SQL.quote(columnName($0)) } + ["\"entitystore_revision\""]
            let inserted = try session.execute(
                """
                WITH up AS (INSERT INTO \(table) (\(targets.joined(separator: ", "))) SELECT \(sources.joined(separator: ", ")) FROM \(SQL.quote(temporary)) \
                ON CONFLICT ("id") DO UPDATE SET \(updates.joined(separator: ", ")) RETURNING (xmax = 0) AS inserted) \
                SELECT count(*) FILTER (WHERE inserted) FROM up
                """)
            delta += inserted.int64(0, 0) ?? 0
        }
        if !removals.isEmpty {
            var binds: [PostgresParameter] = []
            let list = bindIDs(removals, kind: layout.columns[0].kind ?? .string, into: &binds)
            let deleted = try session.execute(
                "WITH d AS (DELETE FROM \(table) WHERE \"id\" = ANY(\(list)) RETURNING 1) SELECT count(*) FROM d", binds)
            delta -= deleted.int64(0, 0) ?? 0
        }
        if delta != 0 {
            try session.execute(
                "UPDATE \(SQL.qualified(schema, "entitystore_tables")) SET row_count = row_count + $1::int8 WHERE name = $2",
                [.integer(delta), .text(batch.tableName)])
        }
        return rows.count + removals.count
    }
}

/// What a pull found: the changed rows up to a position, or the need to reload.
enum PullOutcome: Sendable {
    case changes(head: Int64, tables: [any PulledTable])
    case reload(String)
}

/// One table's pulled rows, applied to the store on the pull's commit.
protocol PulledTable: Sendable {
    var tableName: String { get }
    var ids: IDSet { get }
    /// Upserts the rows that differ, removes the removed ones, except those `holdingBack`
    /// names (rows changed locally and not pushed); returns how many changed.
    func apply(to transaction: Transaction, holdingBack: [AnyHashable: Int64]) throws -> Int
}

struct TypedPulledTable<T: TypedTable>: PulledTable {
    let table: T
    let rows: [T.Element]
    let removals: [T.Element.ID]
    let ids: IDSet
    var tableName: String { table.name }

    func apply(to transaction: Transaction, holdingBack: [AnyHashable: Int64]) throws -> Int {
        let writer = transaction[table.typed]
        var changed = 0
        for entity in rows where holdingBack[AnyHashable(entity.id)] == nil && !ValueIdentity.same(writer.find(entity.id), entity) {
            _ = try writer.upsert(entity)
            changed += 1
        }
        for id in removals where holdingBack[AnyHashable(id)] == nil {
            if try writer.remove(id) { changed += 1 }
        }
        return changed
    }
}

/// One pull, inside a read-only repeatable-read transaction.
struct PullTransaction {
    let target: PostgresTarget
    let schema: Schema
    let position: Int64
    let mine: Set<Int64>

    func run(_ session: PostgresSession) throws -> PullOutcome {
        let stored = target.schema
        let meta = SQL.qualified(stored, "entitystore_meta")
        var values: [String: String] = [:]
        do {
            let rows = try session.execute("SELECT key, value FROM \(meta) WHERE key IN ('log_head', 'log_start')")
            for row in 0..<rows.count { values[try rows.requiredString(row, 0)] = try rows.requiredString(row, 1) }
        } catch let error where ["42P01", "3F000"].contains(PostgresStoreError.sqlState(of: error)) {
            throw PostgresStoreError.notAStore(schema: stored, reason: "it has no entitystore_meta table")
        }
        // No head: a full snapshot replaced the store while this pull waited for its lock
        // (its snapshot predates the new tables, which look empty): reload.
        guard let headText = values["log_head"] else { return .reload("the store was replaced by a full snapshot") }
        let head = Int64(headText) ?? 0
        let logStart = values["log_start"].flatMap { Int64($0) } ?? 0
        if logStart > position {
            return .reload(position == logStart - 1 && head == logStart
                ? "the store was replaced by a full snapshot or repaired"
                : "position \(position) is no longer in the change log (it starts after \(logStart))")
        }
        guard head > position else { return .changes(head: head, tables: []) }
        var changed: [String: [String]] = [:]
        let changes = try session.execute(
            """
            SELECT table_name, row_id FROM \(SQL.qualified(stored, "entitystore_changes")) WHERE position > $1::int8 AND position <= $2::int8 \
            GROUP BY table_name, row_id HAVING NOT (max(position) = ANY($3::int8[]))
            """, [.integer(position), .integer(head), .integers(Array(mine))])
        for row in 0..<changes.count {
            changed[try changes.requiredString(row, 0), default: []].append(try changes.requiredString(row, 1))
        }
        guard !changed.isEmpty else { return .changes(head: head, tables: []) }
        let layouts = try Self.layouts(of: Array(changed.keys), schema: stored, session)
        var tables: [any PulledTable] = []
        for table in schema.tables {
            guard let ids = changed[table.name], let typed = table as? any TypedTable else { continue }
            guard let storedTable = layouts[table.name] else {
                throw PostgresStoreError.schemaMismatch(table: table.name, detail: "the store in PostgreSQL has no such table")
            }
            tables.append(try fetch(typed, ids: ids, stored: storedTable, session))
        }
        return .changes(head: head, tables: tables)
    }

    /// The current rows of the tables and IDs of `ids` (as the change log names them), for
    /// rows to take the server's values of; an ID the server lacks becomes a removal.
    func current(_ ids: [String: [String]], _ session: PostgresSession) throws -> [any PulledTable] {
        let layouts = try Self.layouts(of: Array(ids.keys), schema: target.schema, session)
        var tables: [any PulledTable] = []
        for table in schema.tables {
            guard let wanted = ids[table.name], let typed = table as? any TypedTable, let stored = layouts[table.name] else { continue }
            tables.append(try fetch(typed, ids: wanted, stored: stored, session))
        }
        return tables
    }

    /// The id kind and columns of the named tables, in one query.
    static func layouts(of names: [String], schema: String, _ session: PostgresSession) throws -> [String: PostgresStoreMetadata.StoredTable] {
        var idKinds: [String: ColumnKind] = [:]
        var columns: [String: [(name: String, kind: ColumnKind)]] = [:]
        let rows = try session.execute(
            """
            SELECT t.name, t.id_kind, c.name, c.kind FROM \(SQL.qualified(schema, "entitystore_tables")) t \
            LEFT JOIN \(SQL.qualified(schema, "entitystore_columns")) c ON c.table_name = t.name \
            WHERE t.name = ANY($1::text[]) ORDER BY t.name, c.position
            """,
            [.texts(names)])
        for row in 0..<rows.count {
            let (table, idKind, name, kind) = (try rows.requiredString(row, 0), try rows.requiredString(row, 1), rows.string(row, 2), rows.string(row, 3))
            guard let parsedID = ColumnKind(rawValue: idKind) else {
                throw PostgresStoreError.invalidData(table: table, detail: "unknown id kind '\(idKind)'")
            }
            idKinds[table] = parsedID
            if columns[table] == nil { columns[table] = [] }
            if let name, let kind, name != "id" {
                guard let parsed = ColumnKind(rawValue: kind) else {
                    throw PostgresStoreError.invalidData(table: table, detail: "column '\(name)' has the unknown kind '\(kind)'")
                }
                columns[table]?.append((name, parsed))
            }
        }
        var result: [String: PostgresStoreMetadata.StoredTable] = [:]
        for (name, idKind) in idKinds {
            result[name] = PostgresStoreMetadata.StoredTable(
                name: name, entityType: "", idKind: idKind, rowCount: 0, columns: columns[name] ?? [], indexes: [], relations: [])
        }
        return result
    }

    private func fetch<T: TypedTable>(
        _ table: T, ids: [String], stored: PostgresStoreMetadata.StoredTable, _ session: PostgresSession
    ) throws -> any PulledTable {
        var names = ["id"]
        var kinds = [stored.idKind]
        var selected = [SQL.quote("id") + (stored.idKind.selectsAsText ? "::text" : "")]
        for column in stored.columns {
            names.append(column.name)
            kinds.append(column.kind)
            selected.append(SQL.quote(column.name) + (column.kind.selectsAsText ? "::text" : ""))
        }
        let layout = RowLayout(table: stored.name, names: names, kinds: kinds)
        var binds: [PostgresParameter] = []
        let idValues = ids.map { text in
            EncodedValue(value: stored.idKind == .integer ? (Int64(text).map { .integer($0) } ?? .text(text)) : .text(text), kind: stored.idKind)
        }
        let list = bindIDs(idValues, kind: stored.idKind, into: &binds)
        let rows = try session.execute(
            "SELECT \(selected.joined(separator: ", ")) FROM \(SQL.qualified(target.schema, stored.name)) WHERE \"id\" = ANY(\(list))", binds)
        let cells = StoredRow()
        let decoder = RowDecoder(source: cells, layout: layout, dialect: .postgres)
        defer { decoder.finish() }
        var entities: [T.Element] = []
        var found = Set<String>()
        for row in 0..<rows.count {
            cells.values.removeAll(keepingCapacity: true)
            for column in 0..<rows.columnCount { cells.values.append(try rows.value(row, column, table: stored.name)) }
            let entity: T.Element
            if T.Element.self == DynamicRecord.self, let record = try TypedFeed<T>.record(cells, layout: layout) as? T.Element {
                entity = record
            } else {
                do { entity = try T.Element(from: decoder) } catch let error as DecodingError {
                    throw PostgresStoreError.schemaMismatch(table: stored.name, detail: describe(error))
                } catch let error as InvalidStoredValue {
                    throw PostgresStoreError.invalidData(table: error.table, detail: error.detail)
                }
            }
            found.insert(idText((try? RowEncoder.encodeID(entity.id, dialect: .postgres)) ?? EncodedValue(value: .null, kind: nil)))
            entities.append(entity)
        }
        var removals: [T.Element.ID] = []
        let idCell = StoredRow()
        let idDecoder = RowDecoder(source: idCell, layout: RowLayout(table: stored.name, names: ["id"], kinds: [stored.idKind]), dialect: .postgres)
        for (text, value) in zip(ids, idValues) where !found.contains(text) && !found.contains(text.uppercased()) {
            do {
                idCell.values = [value.value]
                removals.append(try idDecoder.decodeColumn(T.Element.ID.self, at: 0))
            } catch {
                throw PostgresStoreError.invalidData(table: stored.name, detail: "the change log names the id '\(text)', which is not a \(T.Element.ID.self)")
            }
        }
        var all = Set<AnyHashable>()
        for entity in entities { all.insert(AnyHashable(entity.id)) }
        for id in removals { all.insert(AnyHashable(id)) }
        return TypedPulledTable(table: table, rows: entities, removals: removals, ids: IDSet(all))
    }
}
#endif

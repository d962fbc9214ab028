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
    /// The change-log text of each upserted row's ID, encoded on its own, in upsert order
    /// (nil if one does not encode).
    func upsertIDTexts() -> [String]?
    /// The IDs (as the change log writes them) of the rows it writes outside `selection`:
    /// every row of a table the selection leaves out, and the upserted rows that do not
    /// match the table's condition.
    func idsOutside(_ selection: PostgresSelection) -> [String]
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

    func idsOutside(_ selection: PostgresSelection) -> [String] {
        var ids = ScopeGuard.outsideIDs(upserts, table: table.name, selection: selection)
        if !selection.includes(table.name) { ids += removals.map { ScopeGuard.text(of: $0) } }
        return ids
    }

    func upsertIDTexts() -> [String]? {
        var texts: [String] = []
        texts.reserveCapacity(upserts.count)
        for entity in upserts {
            if let record = entity as? DynamicRecord {
                switch record.id {
                case let .integer(value): texts.append(String(value))
                case let .string(value): texts.append(value)
                }
            } else {
                guard let encoded = try? RowEncoder.encodeID(entity.id, dialect: .postgres) else { return nil }
                texts.append(idText(encoded))
            }
        }
        return texts
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
    /// Up to this many rows, a push's statements are prepared (``PostgresSession/Statement/reusable``):
    /// the interactive pushes of a row or two, whose statement texts repeat.
    static let reusableRows = 2

    let schema: String
    let origin: String
    let position: Int64
    let mine: Set<Int64>

    /// Pushes `batches` in two round trips, so the head row stays locked for little more
    /// than one: the lock, the layouts and the conflict check (on the IDs known before the
    /// lock), then the writes, the change log, the head and the notification, sent with
    /// the caller's `COMMIT` (queued, see ``PostgresSession/enqueue(_:_:)``).
    func run(_ batches: [any PushBatch], _ session: PostgresSession) throws -> (Int64, Int, Int64) {
        let meta = SQL.qualified(schema, "entitystore_meta")
        // Before the lock: the rows to check, as their IDs encode on their own (checked
        // against the encoded rows below).
        let predicted = Self.predictedKeys(batches, position: position)
        let names = batches.map(\.tableName)
        var statements: [PostgresSession.Statement] = [
            // The row lock orders pushes: positions follow commit order. Only the head row
            // is locked (every writer locks it first: no deadlock).
            .init(
                "SELECT h.value, (SELECT s.value FROM \(meta) s WHERE s.key = 'log_start') FROM \(meta) h WHERE h.key = 'log_head' FOR UPDATE OF h",
                reusable: true),
            // Server-side layouts of the tables touched, read under the lock.
            // The names one by one, so the prepared statement keeps one plan (as the
            // conflict check's rows).
            .init("""
            SELECT t.name, t.id_kind, c.name, c.kind, c.nullable FROM \(SQL.qualified(schema, "entitystore_tables")) t \
            LEFT JOIN \(SQL.qualified(schema, "entitystore_columns")) c ON c.table_name = t.name \
            WHERE t.name IN (\(names.indices.map { "$\($0 + 1)::text" }.joined(separator: ", "))) ORDER BY t.name, c.position
            """, names.map { .text($0) }, reusable: names.count <= Self.reusableRows),
        ]
        if let predicted { statements.append(conflictCheck(predicted)) }
        let results: [PostgresRows]
        do {
            results = try session.execute(pipeline: statements)
        } catch let error where ["42P01", "3F000"].contains(PostgresStoreError.sqlState(of: error)) {
            throw PostgresStoreError.notAStore(schema: schema, reason: "it has no entitystore_meta table (push a snapshot first)")
        }
        var values: [String: String] = [:]
        let lockRows = results[0]
        for row in 0..<lockRows.count {
            values["log_head"] = try lockRows.requiredString(row, 0)
            values["log_start"] = lockRows.string(row, 1)
        }
        let head = values["log_head"].flatMap { Int64($0) } ?? 0
        let logStart = values["log_start"].flatMap { Int64($0) } ?? 0

        var idKinds: [String: ColumnKind] = [:]
        var columns: [String: [WriteLayout.Column]] = [:]
        let layoutRows = results[1]
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
        var keys = ConflictKeys()
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
                    keys.append(batch.tableName, idText(id.value), index < batch.upsertBases.count ? batch.upsertBases[index] : position)
                }
            }
            for (index, id) in removals.enumerated() {
                keys.append(batch.tableName, idText(id), index < batch.removalBases.count ? batch.removalBases[index] : position)
            }
            prepared.append((batch, layout, known.count, changes, rows, removals))
        }

        // Optimistic concurrency: any change to each row by others after the position its
        // local value is based on? A base pruned from the log cannot be checked.
        let unknowable = keys.bases.indices.filter { keys.bases[$0] < logStart }
        if !unknowable.isEmpty {
            throw PostgresStoreError.conflict(unknowable.map {
                PostgresConflict(table: keys.tables[$0], id: keys.ids[$0], expectedRevision: keys.bases[$0], serverRevision: logStart)
            })
        }
        // The check already made holds if it named exactly these rows (it always does
        // unless an entity encodes its ID otherwise than its `id` field); else check again.
        let check = conflictCheck(keys)
        let conflicts = predicted == keys ? results[2] : try session.execute(pipeline: [check])[0]
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
        // The change log, the new head and the notification, in one statement, queued:
        // it goes with the writes and the caller's COMMIT.
        session.enqueue(
            """
            WITH logged AS (INSERT INTO \(SQL.qualified(schema, "entitystore_changes")) (position, table_name, row_id, origin) \
            SELECT $1::int8, t, r, $4 FROM unnest($2::text[], $3::text[]) AS u(t, r)), \
            moved AS (UPDATE \(meta) SET value = $1::int8::text WHERE key = 'log_head') \
            SELECT pg_notify($5, $1::int8::text)
            """,
            [.integer(newPosition), .texts(keys.tables), .texts(keys.ids), .text(origin), .text(SQL.channel(for: schema))],
            reusable: true)
        return (newPosition, written, head)
    }

    /// The rows a push checks for conflicts: table, ID text and base, in order.
    struct ConflictKeys: Equatable {
        var tables: [String] = []
        var ids: [String] = []
        var bases: [Int64] = []

        mutating func append(_ table: String, _ id: String, _ base: Int64) {
            tables.append(table)
            ids.append(id)
            bases.append(base)
        }
    }

    /// The conflict keys as the batches' IDs encode on their own, without the layouts (nil
    /// when one does not encode: the encoding of the rows reports it).
    static func predictedKeys(_ batches: [any PushBatch], position: Int64) -> ConflictKeys? {
        var keys = ConflictKeys()
        for batch in batches {
            guard let upserts = batch.upsertIDTexts(), let removals = try? batch.removalIDs() else { return nil }
            for (index, id) in upserts.enumerated() {
                keys.append(batch.tableName, id, index < batch.upsertBases.count ? batch.upsertBases[index] : position)
            }
            for (index, id) in removals.enumerated() {
                keys.append(batch.tableName, idText(id), index < batch.removalBases.count ? batch.removalBases[index] : position)
            }
        }
        return keys
    }

    /// The statement listing, for each row of `keys`, the latest change by others after its
    /// base. The few rows of an interactive push are listed one by one, so the server keeps
    /// one plan for the prepared statement (its cost does not hang on an array's unknown
    /// length); a large push sends arrays, planned for their actual lengths.
    private func conflictCheck(_ keys: ConflictKeys) -> PostgresSession.Statement {
        let log = SQL.qualified(schema, "entitystore_changes")
        let others = "NOT (c.position = ANY($1::int8[]))"
        var parameters: [PostgresParameter] = [.integers(Array(mine)), .integer(keys.bases.min() ?? position)]
        let rows: String
        let reusable = keys.ids.count <= Self.reusableRows
        if reusable {
            var tuples: [String] = []
            for index in keys.ids.indices {
                parameters += [.text(keys.tables[index]), .text(keys.ids[index]), .integer(keys.bases[index])]
                let first = parameters.count - 2
                tuples.append("($\(first)::text, $\(first + 1)::text, $\(first + 2)::int8)")
            }
            rows = "(VALUES \(tuples.joined(separator: ", ")))"
        } else {
            parameters += [.texts(keys.tables), .texts(keys.ids), .integers(keys.bases)]
            rows = "unnest($3::text[], $4::text[], $5::int8[])"
        }
        return .init("""
        SELECT c.table_name, c.row_id, max(c.position), min(p.b) FROM \(log) c \
        JOIN \(rows) AS p(t, r, b) ON c.table_name = p.t AND c.row_id = p.r \
        WHERE c.position > $2::int8 AND c.position > p.b AND \(others) \
        GROUP BY c.table_name, c.row_id ORDER BY 1, 2
        """, parameters, reusable: reusable)
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
                session.enqueue("ALTER TABLE \(table) ADD COLUMN \(SQL.quote(column.name)) \(layout.sqlType(position))")
            case let .retype(position):
                let column = layout.columns[position]
                let using = position == 0 ? "\(SQL.quote("id"))::text::\(layout.sqlType(position))" : "NULL"
                session.enqueue("ALTER TABLE \(table) ALTER COLUMN \(SQL.quote(column.name)) TYPE \(layout.sqlType(position)) USING \(using)")
                if position == 0 {
                    session.enqueue(
                        "UPDATE \(SQL.qualified(schema, "entitystore_tables")) SET id_kind = $1 WHERE name = $2",
                        [.text((column.kind ?? .null).rawValue), .text(batch.tableName)])
                }
                session.enqueue(
                    "UPDATE \(SQL.qualified(schema, "entitystore_columns")) SET kind = $1 WHERE table_name = $2 AND name = $3",
                    [.text((column.kind ?? .null).rawValue), .text(batch.tableName), .text(column.name)])
            }
        }
        if firstNew < layout.columns.count {
            try MetadataTables.recordColumns(batch.tableName, layout.columns, from: firstNew, in: schema, session)
        }
        // Each write counts the rows it added or removed into the table's row count in the
        // same statement (queued: it goes with the rest of the push and its COMMIT).
        let tables = SQL.qualified(schema, "entitystore_tables")
        func counting(_ rows: String, sign: String, name: Int) -> String {
            "n AS (SELECT count(*) AS n FROM \(rows)) UPDATE \(tables) SET row_count = row_count \(sign) n.n FROM n WHERE name = $\(name) AND n.n <> 0"
        }
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
            binds.append(.text(batch.tableName))
            session.enqueue(
                """
                WITH up AS (INSERT INTO \(table) (\(targets.joined(separator: ", "))) VALUES \(tuples.joined(separator: ", ")) \
                ON CONFLICT ("id") DO UPDATE SET \(updates.joined(separator: ", ")) RETURNING (xmax = 0) AS inserted), \
                \(counting("up WHERE inserted", sign: "+", name: binds.count))
                """, binds, reusable: rows.count <= Self.reusableRows)
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
            session.enqueue(
                """
                WITH up AS (INSERT INTO \(table) (\(targets.joined(separator: ", "))) SELECT \(sources.joined(separator: ", ")) FROM \(SQL.quote(temporary)) \
                ON CONFLICT ("id") DO UPDATE SET \(updates.joined(separator: ", ")) RETURNING (xmax = 0) AS inserted), \
                \(counting("up WHERE inserted", sign: "+", name: 1))
                """, [.text(batch.tableName)])
        }
        if !removals.isEmpty {
            var binds: [PostgresParameter] = []
            let list = bindIDs(removals, kind: layout.columns[0].kind ?? .string, into: &binds)
            binds.append(.text(batch.tableName))
            session.enqueue(
                "WITH d AS (DELETE FROM \(table) WHERE \"id\" = ANY(\(list)) RETURNING 1), \(counting("d", sign: "-", name: binds.count))", binds,
                reusable: removals.count <= Self.reusableRows)
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

/// One pull, inside a read-only repeatable-read transaction, in two round trips: the
/// head, the changes since the position and the layouts of their tables, then the rows.
struct PullTransaction {
    let target: PostgresTarget
    let schema: Schema
    let position: Int64
    let mine: Set<Int64>
    /// What the replica holds: changes to other tables are not read, and a changed row of
    /// a conditioned table is read only if it matches now (else it is a removal).
    var selection: PostgresSelection = .all

    /// Reads what changed since `position`. With `commit`, the transaction's `COMMIT` goes
    /// with the last statements (the caller must not commit again).
    func run(_ session: PostgresSession, commit: Bool = false) throws -> PullOutcome {
        let stored = target.schema
        let meta = SQL.qualified(stored, "entitystore_meta")
        let log = SQL.qualified(stored, "entitystore_changes")
        // The head, bounded in SQL so a text that is no number reads as none (as below).
        let headValue = "(SELECT CASE WHEN value ~ '^-?[0-9]{1,18}$' THEN value::int8 END FROM \(meta) WHERE key = 'log_head')"
        // One round trip, one snapshot: the head and the log's start, every row changed
        // since the position up to the head (less the replica's own pushes), and the
        // layouts of the tables changed.
        // A replica of some tables reads only their changes (through the same index).
        let tables = selection.tables.map { Array($0) }
        func onlyTables(_ parameter: Int) -> String { tables == nil ? "" : " AND table_name = ANY($\(parameter)::text[])" }
        let first: [PostgresRows]
        do {
            first = try session.execute(pipeline: [
                .init("SELECT key, value FROM \(meta) WHERE key IN ('log_head', 'log_start')", reusable: true),
                .init("""
                SELECT table_name, row_id FROM \(log) WHERE position > $1::int8 AND position <= \(headValue)\(onlyTables(3)) \
                GROUP BY table_name, row_id HAVING NOT (max(position) = ANY($2::int8[]))
                """, [.integer(position), .integers(Array(mine))] + (tables.map { [.texts($0)] } ?? []), reusable: true),
                .init(Self.layoutsSQL(
                    schema: stored,
                    names: "SELECT DISTINCT table_name FROM \(log) WHERE position > $1::int8 AND position <= \(headValue)\(onlyTables(2))"),
                 [.integer(position)] + (tables.map { [.texts($0)] } ?? []), reusable: true),
            ])
        } catch let error where ["42P01", "3F000"].contains(PostgresStoreError.sqlState(of: error)) {
            throw PostgresStoreError.notAStore(schema: stored, reason: "it has no entitystore_meta table")
        }
        switch try plan(first[0], first[1], layouts: first[2]) {
        case let .done(outcome):
            if commit { try session.execute("COMMIT") }
            return outcome
        case let .fetch(head, fetches):
            return .changes(head: head, tables: try fetch(fetches, session, commit: commit))
        }
    }

    /// What a pull does after its first round trip.
    private enum Plan {
        case done(PullOutcome)
        case fetch(head: Int64, [Fetch])
    }

    /// What the first round trip found: an outcome, or the rows to fetch.
    private func plan(_ metaRows: PostgresRows, _ changeRows: PostgresRows, layouts layoutRows: PostgresRows) throws -> Plan {
        var values: [String: String] = [:]
        for row in 0..<metaRows.count { values[try metaRows.requiredString(row, 0)] = try metaRows.requiredString(row, 1) }
        // No head: a full snapshot replaced the store while this pull waited for its lock
        // (its snapshot predates the new tables, which look empty): reload.
        guard let headText = values["log_head"] else { return .done(.reload("the store was replaced by a full snapshot")) }
        let head = Int64(headText) ?? 0
        let logStart = values["log_start"].flatMap { Int64($0) } ?? 0
        if logStart > position {
            return .done(.reload(position == logStart - 1 && head == logStart
                ? "the store was replaced by a full snapshot or repaired"
                : "position \(position) is no longer in the change log (it starts after \(logStart))"))
        }
        guard head > position else { return .done(.changes(head: head, tables: [])) }
        var changed: [String: [String]] = [:]
        for row in 0..<changeRows.count {
            changed[try changeRows.requiredString(row, 0), default: []].append(try changeRows.requiredString(row, 1))
        }
        guard !changed.isEmpty else { return .done(.changes(head: head, tables: [])) }
        let layouts = try Self.layouts(from: layoutRows)
        var fetches: [Fetch] = []
        for table in schema.tables where selection.includes(table.name) {
            guard let ids = changed[table.name], let typed = table as? any TypedTable else { continue }
            guard let storedTable = layouts[table.name] else {
                throw PostgresStoreError.schemaMismatch(table: table.name, detail: "the store in PostgreSQL has no such table")
            }
            fetches.append(try Fetch(typed, ids: ids, stored: storedTable, schema: target.schema, condition: selection.conditions[table.name]))
        }
        return .fetch(head: head, fetches)
    }

    /// Fetches the rows of `fetches` in one round trip, with `COMMIT` if `commit`.
    private func fetch(_ fetches: [Fetch], _ session: PostgresSession, commit: Bool) throws -> [any PulledTable] {
        var statements = fetches.map { PostgresSession.Statement($0.sql, $0.parameters, reusable: $0.reusable) }
        if commit { statements.append(.init("COMMIT")) }
        guard !statements.isEmpty else { return [] }
        let results = try session.execute(pipeline: statements)
        return try zip(fetches, results).map { fetch, rows in try fetch.decode(rows) }
    }
    /// The current rows of the tables and IDs of `ids` (as the change log names them), for
    /// rows to take the server's values of; an ID the server lacks becomes a removal.
    func current(_ ids: [String: [String]], _ session: PostgresSession) throws -> [any PulledTable] {
        let layouts = try Self.layouts(of: Array(ids.keys), schema: target.schema, session)
        var fetches: [Fetch] = []
        for table in schema.tables where selection.includes(table.name) {
            guard let wanted = ids[table.name], let typed = table as? any TypedTable, let stored = layouts[table.name] else { continue }
            fetches.append(try Fetch(typed, ids: wanted, stored: stored, schema: target.schema, condition: selection.conditions[table.name]))
        }
        return try fetch(fetches, session, commit: false)
    }

    /// The statement reading the id kind and columns of the tables `names` selects (SQL
    /// giving a list of names).
    static func layoutsSQL(schema: String, names: String) -> String {
        """
        SELECT t.name, t.id_kind, c.name, c.kind, c.nullable FROM \(SQL.qualified(schema, "entitystore_tables")) t \
        LEFT JOIN \(SQL.qualified(schema, "entitystore_columns")) c ON c.table_name = t.name \
        WHERE t.name IN (\(names)) ORDER BY t.name, c.position
        """
    }

    /// The id kind and columns of the named tables, in one query.
    static func layouts(of names: [String], schema: String, _ session: PostgresSession) throws -> [String: StoreMetadata.Table] {
        try layouts(from: session.execute(layoutsSQL(schema: schema, names: "SELECT unnest($1::text[])"), [.texts(names)]))
    }

    /// The layouts in the rows of a ``layoutsSQL(schema:names:)`` statement.
    static func layouts(from rows: PostgresRows) throws -> [String: StoreMetadata.Table] {
        var idKinds: [String: String] = [:]
        var listed = StoreMetadata.Rows()
        // What a pull reads by: the type, row count, indexes and relations are not read.
        var result: [String: StoreMetadata.Table] = [:]
        do {
            for row in 0..<rows.count {
                let table = try rows.requiredString(row, 0)
                idKinds[table] = try rows.requiredString(row, 1)
                if let name = rows.string(row, 2), let kind = rows.string(row, 3) {
                    try listed.column(table: table, name: name, kind: kind, nullable: rows.bool(row, 4) ?? true, nulls: "absent")
                }
            }
            for (name, idKind) in idKinds {
                result[name] = try listed.table(name: name, entityType: "", idKind: idKind, rowCount: 0)
            }
        } catch let error as InvalidStoredValue {
            throw PostgresStoreError.invalidData(table: error.table, detail: error.detail)
        }
        return result
    }

}

/// One table's changed rows to read in a pull: the statement, and how to decode its rows.
/// With a condition it reads only the rows that match it now: a changed ID it does not
/// return (removed, or moved out of the selection) becomes a removal.
private struct Fetch {
    let sql: String
    let parameters: [PostgresParameter]
    /// Whether the statement is prepared: a few IDs, listed one by one, as a follower's
    /// pulls of an interactive push read them.
    let reusable: Bool
    let decode: (PostgresRows) throws -> any PulledTable

    init<T: TypedTable>(
        _ table: T, ids: [String], stored: StoreMetadata.Table, schema: String, condition: PostgresCondition? = nil
    ) throws(PostgresStoreError) {
        let layout = stored.readLayout
        var binds: [PostgresParameter] = []
        let idValues = ids.map { text in
            EncodedValue(value: stored.idKind == .integer ? (Int64(text).map { .integer($0) } ?? .text(text)) : .text(text), kind: stored.idKind)
        }
        // A few IDs one by one: the prepared statement then keeps one plan. Its text names
        // the columns' kinds, so a column whose type changed gets a statement of its own
        // (the server refuses to run a prepared statement whose result columns changed).
        // (An integer ID that does not parse, which the change log cannot hold unless
        // written by hand, goes through the array, which leaves it out.)
        func integer(_ value: EncodedValue) -> Int64? {
            if case let .integer(number) = value.value { return number } else { return Int64(idText(value)) }
        }
        reusable = idValues.count <= PushTransaction.reusableRows && (stored.idKind != .integer || idValues.allSatisfy { integer($0) != nil })
        let list: String
        if reusable {
            list = idValues.map { value in
                switch stored.idKind {
                case .integer:
                    binds.append(.integer(integer(value) ?? 0))
                    return "$\(binds.count)::int8"
                case .uuid:
                    binds.append(.text(idText(value)))
                    return "$\(binds.count)::text::uuid"
                default:
                    binds.append(.text(idText(value)))
                    return "$\(binds.count)::text"
                }
            }.joined(separator: ", ")
        } else {
            list = "ANY(" + bindIDs(idValues, kind: stored.idKind, into: &binds) + ")"
        }
        var filter = ""
        if let condition {
            let kind = condition.field == "id" ? stored.idKind : stored.columns.first(where: { $0.name == condition.field })?.kind
            guard let kind else { throw .invalidSelection("'\(stored.name).\(condition.field)' is not a stored column") }
            filter = " AND " + condition.sql(kind: kind, binds: &binds)
        }
        let kinds = reusable ? " /* kinds: \(layout.kinds.compactMap { $0?.rawValue }.joined(separator: ",")) */" : ""
        sql = "SELECT \(stored.selectList) FROM \(SQL.qualified(schema, stored.name)) WHERE \"id\" \(reusable ? "IN (\(list))" : "= \(list)")\(filter)\(kinds)"
        parameters = binds
        decode = { rows in try Self.decode(table, rows: rows, ids: ids, idValues: idValues, stored: stored, layout: layout) }
    }

    private static func decode<T: TypedTable>(
        _ table: T, rows: PostgresRows, ids: [String], idValues: [EncodedValue], stored: StoreMetadata.Table, layout: RowLayout
    ) throws -> any PulledTable {
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

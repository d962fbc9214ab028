import EntityStore
import EntityStoreCodec
import Foundation

/// Brings a snapshot's metadata (`entitystore_tables`, `_columns`, `_indexes`,
/// `_relations`) in line with its SQL tables after an app migration step changed them.
///
/// Run inside the step's transaction, with the table shapes read before the step:
/// - a table that is gone leaves the metadata, with its columns, indexes and relations
///   (and the relations that target it);
/// - a column that is gone leaves it, with the indexes and relations on it;
/// - a renamed column keeps its kind and nullability, and the indexes and relations on it
///   follow it. A rename is recognized by the SQL index on the column (SQLite renames the
///   column in it) or by ``AppMigrationDatabase/renameColumn(_:in:to:)``; any other
///   rename is a drop and an add;
/// - an added column (or a column of an added table) gets a kind from its declared type and
///   values, and a column whose values no longer fit its kind gets a new one;
/// - row counts follow inserts and deletes.
/// Anything it cannot describe fails the step with ``SnapshotError/invalidData(table:detail:)``.
struct MigratedMetadata {
    let connection: SQLiteConnection
    let migration: AppMigration
    /// The SQL tables before the step.
    let before: SQLTableShapes
    /// Whether the step inserted, updated or deleted rows (not only schema changes).
    let rowsChanged: Bool
    /// The columns the step renamed through ``AppMigrationDatabase/renameColumn(_:in:to:)``:
    /// table, then old name to new name.
    let declaredRenames: [String: [String: String]]

    /// - Complexity: O(tables + columns) when the step changed no rows; otherwise one scan
    ///   of every table with columns to check, and of every column whose kind is inferred.
    func reconcile() throws {
        let after = try SQLTableShapes.read(connection)
        var listed: [String: Int] = [:]
        for row in try connection.prepare("SELECT name, position FROM entitystore_tables").rows() {
            if case let .text(name) = row[0], case let .integer(position) = row[1] { listed[name] = Int(position) }
        }
        for table in listed.keys.sorted() {
            guard let columns = after.columns(of: table) else {
                try forget(table: table)
                continue
            }
            let previous = before.columns(of: table)
            if previous == columns && !rowsChanged { continue }
            try reconcile(table: table, columns: columns, previous: previous ?? [])
        }
        let known = Set(listed.keys.map { $0.lowercased() })
        var position = (listed.values.max() ?? -1) + 1
        for table in after.tables.keys.sorted() where !known.contains(table.lowercased()) {
            try register(table: table, columns: after.tables[table] ?? [], position: position)
            position += 1
        }
    }

    // MARK: Tables

    /// Removes every trace of a dropped table from the metadata.
    private func forget(table: String) throws {
        for sql in [
            "DELETE FROM entitystore_columns WHERE table_name = ?",
            "DELETE FROM entitystore_indexes WHERE table_name = ?",
            "DELETE FROM entitystore_relations WHERE table_name = ? OR target_table = ?1",
            "DELETE FROM entitystore_tables WHERE name = ?",
        ] {
            try connection.prepare(sql).run([.text(table)])
        }
    }

    /// Describes a table the step created.
    private func register(table: String, columns: [SQLTableShapes.Column], position: Int) throws {
        guard columns.contains(where: { $0.name == "id" }) else {
            throw failure(table, "it created the table, which has no 'id' column, so it cannot hold entities; drop it or give it an 'id' primary key")
        }
        let scan = try ColumnScan(connection: connection, table: table, columns: columns.map(\.name))
        let described = try columns.map { column in try infer(table, column, scan) }
        let idKind = described.first { $0.name == "id" }?.kind ?? .null
        try connection.prepare("""
            INSERT INTO entitystore_tables (name, entity_type, id_kind, row_count, position) VALUES (?, ?, ?, ?, ?)
            """).run([
                .text(table), .text("created by app migration \(migration.version)"), .text(idKind.rawValue),
                .integer(Int64(scan.rowCount)), .integer(Int64(position)),
            ])
        try record(described, of: table)
    }

    // MARK: Columns

    /// Reconciles the columns, indexes, relations and row count of a table the metadata
    /// lists and the file still has.
    private func reconcile(table: String, columns: [SQLTableShapes.Column], previous: [SQLTableShapes.Column]) throws {
        guard columns.contains(where: { $0.name == "id" }) else {
            throw failure(table, "it left the table without an 'id' column")
        }
        var listed: [String: (kind: ColumnKind?, nullable: Bool)] = [:]
        for row in try connection.prepare("SELECT name, kind, nullable FROM entitystore_columns WHERE table_name = ?").rows([.text(table)]) {
            guard case let .text(name) = row[0] else { continue }
            var kind: ColumnKind?
            if case let .text(kindName) = row[1] { kind = ColumnKind(rawValue: kindName) }
            var nullable = true
            if case let .integer(flag) = row[2] { nullable = flag != 0 }
            listed[name] = (kind, nullable)
        }
        let names = Set(columns.map(\.name))
        let previousNames = Set(previous.map(\.name))
        let indexes = try indexRows(of: table)
        let renames = try self.renames(table: table, columns: columns, previous: previous, indexes: indexes)
        let renamedFrom = Dictionary(uniqueKeysWithValues: renames.map { ($0.value, $0.key) })

        // One scan of the table for the storage classes of the columns whose values may
        // have changed: every column after row changes, else renamed and new ones.
        let scanned = columns.map(\.name).filter { name in
            rowsChanged || listed[name] == nil || renamedFrom[name] != nil
        }
        let scan = try ColumnScan(connection: connection, table: table, columns: scanned)
        var described: [StoreMetadata.Column] = []
        for column in columns {
            let source = listed[column.name] ?? renamedFrom[column.name].flatMap { listed[$0] }
            if let source, let kind = source.kind {
                guard let classes = scan.classes[column.name] else {
                    described.append(StoreMetadata.Column(name: column.name, kind: kind, nullable: source.nullable))
                    continue
                }
                if classes.subtracting(["null"]).isSubset(of: kind.storageClasses) {
                    described.append(StoreMetadata.Column(name: column.name, kind: kind, nullable: source.nullable || classes.contains("null")))
                    continue
                }
            }
            described.append(try infer(table, column, scan))
        }
        try record(described, of: table)
        if let idKind = described.first(where: { $0.name == "id" })?.kind {
            try connection.prepare("UPDATE entitystore_tables SET id_kind = ? WHERE name = ?").run([.text(idKind.rawValue), .text(table)])
        }
        if rowsChanged {
            try connection.prepare("UPDATE entitystore_tables SET row_count = ? WHERE name = ?")
                .run([.integer(Int64(scan.rowCount)), .text(table)])
        }

        // Indexes and relations follow renamed fields and leave with dropped ones.
        for index in indexes {
            let field: String?
            if let covered = try sqlIndexColumn(table: table, index: index.name), names.contains(covered) {
                field = covered
            } else if let renamed = renames[index.field] {
                field = renamed
            } else if previousNames.contains(index.field) && !names.contains(index.field) {
                field = nil
            } else {
                continue
            }
            if let field {
                guard field != index.field else { continue }
                try connection.prepare("UPDATE entitystore_indexes SET field = ? WHERE table_name = ? AND name = ?")
                    .run([.text(field), .text(table), .text(index.name)])
            } else {
                try connection.prepare("DELETE FROM entitystore_indexes WHERE table_name = ? AND name = ?")
                    .run([.text(table), .text(index.name)])
            }
        }
        for row in try connection.prepare("SELECT field FROM entitystore_relations WHERE table_name = ?").rows([.text(table)]) {
            guard case let .text(field)? = row.first else { continue }
            if let renamed = renames[field] {
                try connection.prepare("UPDATE entitystore_relations SET field = ? WHERE table_name = ? AND field = ?")
                    .run([.text(renamed), .text(table), .text(field)])
            } else if previousNames.contains(field) && !names.contains(field) {
                try connection.prepare("DELETE FROM entitystore_relations WHERE table_name = ? AND field = ?")
                    .run([.text(table), .text(field)])
            }
        }
    }

    /// The columns the step renamed, old name to new name.
    private func renames(
        table: String, columns: [SQLTableShapes.Column], previous: [SQLTableShapes.Column],
        indexes: [(name: String, field: String)]
    ) throws -> [String: String] {
        let names = Set(columns.map(\.name))
        let previousNames = Set(previous.map(\.name))
        let gone = previous.filter { !names.contains($0.name) }
        let added = columns.filter { !previousNames.contains($0.name) }
        guard !gone.isEmpty, !added.isEmpty else { return [:] }
        var renames: [String: String] = [:]
        var taken: Set<String> = []
        // SQLite renames a column in the indexes on it, so an index that covered a gone
        // column and now covers a new one tells the rename for sure.
        for index in indexes where gone.contains(where: { $0.name == index.field }) && renames[index.field] == nil {
            if let covered = try sqlIndexColumn(table: table, index: index.name),
               added.contains(where: { $0.name == covered }), !taken.contains(covered) {
                renames[index.field] = covered
                taken.insert(covered)
            }
        }
        // Renames the step declared through `AppMigrationDatabase.renameColumn`.
        for (old, new) in declaredRenames[table] ?? [:]
        where renames[old] == nil && gone.contains(where: { $0.name == old }) && added.contains(where: { $0.name == new }) && !taken.contains(new) {
            renames[old] = new
            taken.insert(new)
        }
        // Any other dropped column and added one are a drop and an add: a column's shape
        // (position, declared type) cannot tell a rename from them.
        return renames
    }

    /// The kind of a column from its declared type and values.
    private func infer(_ table: String, _ column: SQLTableShapes.Column, _ scan: ColumnScan) throws -> StoreMetadata.Column {
        let classes = try scan.classes[column.name] ?? ColumnScan(connection: connection, table: table, columns: [column.name]).classes[column.name] ?? []
        let stored = classes.subtracting(["null"])
        let nullable = classes.contains("null")
        if let hinted = Self.kind(declaredAs: column.declaredType) {
            guard stored.isSubset(of: hinted.storageClasses) else {
                throw failure(table, "column '\(column.name)' is declared \(column.declaredType) but holds \(Self.list(stored)) values")
            }
            if let problem = try invalidValue(table: table, column: column.name, kind: hinted) {
                throw failure(table, "column '\(column.name)' is declared \(column.declaredType) but holds \(problem)")
            }
            return StoreMetadata.Column(name: column.name, kind: hinted, nullable: nullable)
        }
        let kind: ColumnKind
        switch stored {
        case []: kind = .null
        case ["integer"]: kind = .integer
        case ["real"], ["real", "integer"]: kind = .double
        case ["text"]: kind = .string
        case ["blob"]: kind = .blob
        default:
            throw failure(table, """
                column '\(column.name)' holds \(Self.list(stored)) values, which no column kind describes; \
                store one kind of value in it, or declare its type (BOOLEAN, INTEGER, REAL, TEXT, BLOB, DATETIME, UUID, JSON)
                """)
        }
        return StoreMetadata.Column(name: column.name, kind: kind, nullable: nullable)
    }

    /// The kind a declared SQL type asks for, by SQLite's substring rules extended with the
    /// kinds SQLite has no type for; nil for no type or `NUMERIC`.
    static func kind(declaredAs type: String) -> ColumnKind? {
        let type = type.uppercased()
        if type.contains("BOOL") { return .bool }
        if type.contains("DATE") || type.contains("TIME") { return .date }
        if type.contains("UUID") { return .uuid }
        if type.contains("JSON") { return .json }
        if type.contains("INT") { return .integer }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return .string }
        if type.contains("BLOB") { return .blob }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return .double }
        return nil
    }

    /// A value of the column that its kind does not allow (beyond the storage class), if any.
    private func invalidValue(table: String, column: String, kind: ColumnKind) throws -> String? {
        let name = quoteIdentifier(column)
        let from = quoteIdentifier(table)
        switch kind {
        case .bool:
            let wrong = try connection.prepare("SELECT \(name) FROM \(from) WHERE \(name) IS NOT NULL AND \(name) NOT IN (0, 1) LIMIT 1").rows()
            return wrong.first.map { "\(Self.show($0[0])), which is not 0 or 1" }
        case .json:
            let wrong = try connection.prepare("SELECT \(name) FROM \(from) WHERE \(name) IS NOT NULL AND NOT json_valid(\(name)) LIMIT 1").rows()
            return wrong.first.map { "\(Self.show($0[0])), which is not JSON" }
        case .date, .uuid:
            var problem: String?
            try connection.prepare("SELECT \(name) FROM \(from) WHERE \(name) IS NOT NULL").forEachRow { row in
                guard problem == nil else { return }
                let text = row.text(at: 0)
                if kind == .date {
                    do throws(DateTextError) { _ = try DateText.date(parsing: text) } catch { problem = error.description }
                } else if UUID(uuidString: text) == nil {
                    problem = "'\(text)', which is not a UUID"
                }
            }
            return problem
        case .integer, .double, .number, .string, .blob, .null:
            return nil
        }
    }

    /// Rewrites the column list of a table, in position order.
    private func record(_ columns: [StoreMetadata.Column], of table: String) throws {
        try connection.prepare("DELETE FROM entitystore_columns WHERE table_name = ?").run([.text(table)])
        let insert = try connection.prepare(
            "INSERT INTO entitystore_columns (table_name, name, kind, nullable, position) VALUES (?, ?, ?, ?, ?)")
        for (position, column) in columns.enumerated() {
            try insert.run([
                .text(table), .text(column.name), .text(column.kind.rawValue), .integer(column.nullable ? 1 : 0),
                .integer(Int64(position)),
            ])
        }
    }

    // MARK: Indexes

    private func indexRows(of table: String) throws -> [(name: String, field: String)] {
        try connection.prepare("SELECT name, field FROM entitystore_indexes WHERE table_name = ?").rows([.text(table)])
            .compactMap { row in
                guard case let .text(name) = row[0], case let .text(field) = row[1] else { return nil }
                return (name, field)
            }
    }

    /// The one column the SQL index of a declared index covers, if that index exists.
    private func sqlIndexColumn(table: String, index: String) throws -> String? {
        let columns = try connection.prepare("SELECT name FROM pragma_index_info(?)")
            .rows([.text("entitystore_index_\(table)_\(index)")])
        guard columns.count == 1, case let .text(name)? = columns[0].first else { return nil }
        return name
    }

    // MARK: Errors

    private func failure(_ table: String, _ detail: String) -> SnapshotError {
        .invalidData(table: table, detail: "app migration \(migration.version) '\(migration.name)': \(detail)")
    }

    private static func list(_ classes: Set<String>) -> String {
        classes.sorted().joined(separator: " and ")
    }

    private static func show(_ value: SQLiteValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): "'\(text.prefix(64))'"
        case .blob(let bytes): "a blob of \(bytes.count) bytes"
        }
    }
}

/// The storage classes (`typeof`) each column of a table holds, and its row count, from one
/// scan of the table.
private struct ColumnScan {
    private(set) var classes: [String: Set<String>] = [:]
    private(set) var rowCount = 0

    init(connection: SQLiteConnection, table: String, columns: [String]) throws {
        let aggregates = ["count(*)"] + columns.map { "group_concat(DISTINCT typeof(\(quoteIdentifier($0))))" }
        let row = try connection.prepare("SELECT \(aggregates.joined(separator: ", ")) FROM \(quoteIdentifier(table))").rows().first ?? []
        if case let .integer(count)? = row.first { rowCount = Int(count) }
        for (offset, column) in columns.enumerated() {
            guard offset + 1 < row.count else { break }
            if case let .text(list) = row[offset + 1] {
                classes[column] = Set(list.split(separator: ",").map(String.init))
            } else {
                classes[column] = []
            }
        }
    }
}

extension ColumnKind {
    /// The storage classes (`typeof`) a value of this kind may have, besides NULL; the
    /// verifier checks the same.
    var storageClasses: Set<String> {
        switch self {
        case .integer, .bool: ["integer"]
        case .double, .number: ["real", "integer"]
        case .date, .string, .uuid, .json: ["text"]
        case .blob: ["blob"]
        case .null: []
        }
    }
}

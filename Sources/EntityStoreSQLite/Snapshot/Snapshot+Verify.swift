import EntityStore
import EntityStoreCodec

/// The outcome of checking a snapshot file: every problem found, none means sound.
public struct VerificationReport: Sendable, Equatable {
    /// The file checked.
    public let path: String
    /// What is wrong, one sentence each; empty when the snapshot is sound.
    public let problems: [String]
    /// Row counts by table, as found in the file.
    public let rowCounts: [String: Int]
    /// The format version, if the file could be identified.
    public let formatVersion: Int?
    /// What is allowed but worth knowing, one sentence each: references to missing records
    /// through relations whose delete rule is `none`.
    public var notes: [String] = []

    /// Whether no problem was found.
    public var isSound: Bool { problems.isEmpty }
}

extension Snapshot {
    /// Checks the snapshot at `path`: SQLite's integrity check, metadata consistency
    /// (every listed table and column exists, row counts match, stored values have their
    /// declared kinds), that declared relations resolve, and then the very read a restore
    /// makes, row by row (IDs, nested values, unique keys): a file verify calls sound is
    /// one that `restoringDynamic(from:)` accepts, and that a typed `restore(from:)`
    /// accepts when its Swift types match the stored kinds.
    ///
    /// The file is not changed, except that a file left mid-write by a writer that
    /// stopped is first recovered, as any SQLite writer would (see docs/Guarantees.md on
    /// crashes); a file of an older format is checked through an upgraded private copy
    /// (`SQLiteConnection/privateCopy(of:)`), which leaves nothing behind.
    /// Never throws: an unreadable file is a report with one problem.
    /// - Complexity: O(n × columns) over every table; memory as for a restore.
    public static func verify(at path: String) -> VerificationReport {
        var problems: [String] = []
        var notes: [String] = []
        var counts: [String: Int] = [:]
        let metadata: StoreMetadata
        let connection: SQLiteConnection
        do {
            guard FileSystem.exists(path) else { throw SnapshotError.fileNotFound(path: path) }
            if let kind = FileSystem.nonRegularKind(path) { throw SnapshotError.notASnapshot(path: path, reason: "it is \(kind)") }
            connection = try SQLiteConnection.openSnapshotForReading(path)
            let integrity = try connection.integrityCheck()
            if !integrity.isEmpty {
                return VerificationReport(path: path, problems: integrity.map { "integrity check: \($0)" }, rowCounts: [:], formatVersion: nil)
            }
            metadata = try StoreMetadata.read(connection)
        } catch let error as SQLiteError {
            return VerificationReport(path: path, problems: [SnapshotError(error, path: path).description], rowCounts: [:], formatVersion: nil)
        } catch {
            return VerificationReport(path: path, problems: [String(describing: error)], rowCounts: [:], formatVersion: nil)
        }
        for table in metadata.tables {
            let name = quoteIdentifier(table.name)
            do {
                let count = try scalar(connection, "SELECT count(*) FROM \(name)")
                counts[table.name] = count
                if count != table.rowCount {
                    problems.append("table '\(table.name)': the metadata records \(table.rowCount) rows but the table holds \(count)")
                }
                let sqlColumns = Set(try connection.prepare("SELECT name FROM pragma_table_info(?)").rows([.text(table.name)])
                    .compactMap { row -> String? in if case let .text(text)? = row.first { return text } else { return nil } })
                if !sqlColumns.contains("id") { problems.append("table '\(table.name)' has no 'id' column") }
                for column in table.columns {
                    guard sqlColumns.contains(column.name) else {
                        problems.append("table '\(table.name)': column '\(column.name)' is listed in the metadata but missing")
                        continue
                    }
                    // NULL is always allowed; a `null` column (an empty table's id) allows nothing else.
                    let allowed = (["null"] + storageClasses(for: column.kind, formatVersion: metadata.formatVersion)).map { "'\($0)'" }.joined(separator: ", ")
                    let wrong = try scalar(connection, """
                        SELECT count(*) FROM \(name) WHERE typeof(\(quoteIdentifier(column.name))) NOT IN (\(allowed))
                        """)
                    if wrong > 0 {
                        problems.append("table '\(table.name)': \(wrong) values of column '\(column.name)' are not of its declared kind \(column.kind.rawValue)")
                    }
                    if !column.nullable, column.name != "id" {
                        let nulls = try scalar(connection, "SELECT count(*) FROM \(name) WHERE \(quoteIdentifier(column.name)) IS NULL")
                        if nulls > 0 { problems.append("table '\(table.name)': \(nulls) NULLs in non-nullable column '\(column.name)'") }
                    }
                }
                for relation in table.relations {
                    guard let target = metadata.table(named: relation.targetTable) else {
                        problems.append("table '\(table.name)': relation '\(relation.field)' -> '\(relation.targetTable)' names a missing table")
                        continue
                    }
                    // An optional field that is nil in every row has no column: it references nothing.
                    guard sqlColumns.contains(relation.field) else { continue }
                    let kind = table.columns.first { $0.name == relation.field }?.kind
                    let (count, first) = try danglingReferences(
                        connection, table: name, field: relation.field, isJSON: kind == .json, target: quoteIdentifier(target.name))
                    guard count > 0 else { continue }
                    let sentence = "table '\(table.name)': \(count) rows reference missing '\(relation.targetTable)' rows through '\(relation.field)' (first ids: \(first.joined(separator: ", ")))"
                    if relation.deleteRule != .none {
                        problems.append(sentence)
                    } else {
                        notes.append(sentence + ", which its delete rule none allows")
                    }
                }
            } catch {
                problems.append("table '\(table.name)': \(error)")
            }
        }
        if problems.isEmpty, let failure = restoreFailure(path, metadata: metadata) {
            problems.append(failure)
        }
        var report = VerificationReport(path: path, problems: problems, rowCounts: counts, formatVersion: metadata.formatVersion)
        report.notes = notes
        return report
    }

    /// Why a restore of the file would fail, if it would: the same reader decodes every
    /// row into dynamic records and builds the declared indexes and relations.
    private static func restoreFailure(_ path: String, metadata: StoreMetadata) -> String? {
        do {
            let schema = try metadata.snapshotSchema()
            // An older format is read through an upgraded private copy; the file stays as it is.
            _ = try SnapshotReader(path: path, options: SnapshotOptions(), isDynamic: true, leavesFileUnchanged: true)
                .read(schema: schema)
            return nil
        } catch let error as SnapshotError {
            return error.description
        } catch {
            return String(describing: error)
        }
    }

    /// How many rows of `table` reference a missing row of `target` through `field`, and
    /// the ids of the first few, as a restore sees references: an integer or a string
    /// names the row with that id (of the same kind: the string "5" is not the id 5);
    /// null, a missing field and any other value reference nothing. A JSON column's values
    /// are read from their JSON text.
    private static func danglingReferences(
        _ connection: SQLiteConnection, table: String, field: String, isJSON: Bool, target: String
    ) throws -> (count: Int, first: [String]) {
        let column = quoteIdentifier(field)
        let value = isJSON ? "json_extract(\(column), '$')" : column
        let kind = isJSON ? "json_type(\(column))" : "typeof(\(column))"
        let dangling = """
            \(kind) IN ('integer', 'text') AND NOT EXISTS \
            (SELECT 1 FROM \(target) AS t WHERE t."id" = \(value) AND typeof(t."id") = \(kind))
            """
        let count = try scalar(connection, "SELECT count(*) FROM \(table) WHERE \(dangling)")
        guard count > 0 else { return (0, []) }
        let first = try connection.prepare("SELECT \"id\" FROM \(table) WHERE \(dangling) ORDER BY \"id\" LIMIT 5").rows().map { row in
            switch row.first {
            case .integer(let number)?: String(number)
            case .text(let text)?: "\"\(text)\""
            default: "?"
            }
        }
        return (count, first)
    }

    private static func scalar(_ connection: SQLiteConnection, _ sql: String) throws -> Int {
        let statement = try connection.prepare(sql)
        guard try statement.step() else { return 0 }
        return Int(statement.int64(at: 0))
    }

    private static func storageClasses(for kind: ColumnKind, formatVersion: Int) -> [String] {
        switch kind {
        case .integer, .bool: return ["integer"]
        case .double, .number: return ["real", "integer"]
        case .date: return formatVersion >= 2 ? ["text"] : ["real", "integer"]
        case .string, .uuid, .json: return ["text"]
        case .blob: return ["blob"]
        case .null: return []
        }
    }
}

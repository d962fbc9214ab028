import EntityStore
import EntityStoreCodec

/// Everything a snapshot's metadata tables say: versions, tables, columns, indexes and
/// relations. Read without any Swift entity type.
public struct SnapshotMetadata: Sendable, Equatable {
    /// The snapshot file format version (`PRAGMA user_version`).
    public let formatVersion: Int
    /// The app schema version recorded by the writer (0 if none).
    public let appSchemaVersion: Int
    /// Other facts from `entitystore_meta` (library, created_at ...).
    public let facts: [String: String]
    /// The tables, in position order.
    public let tables: [TableMetadata]

    /// One table of a snapshot.
    public struct TableMetadata: Sendable, Equatable {
        /// The table's name (also its SQL table's name).
        public let name: String
        /// The Swift type that wrote it (`"DynamicRecord"` for dynamic tables).
        public let entityType: String
        /// The kind of its IDs.
        public let idKind: ColumnKind
        /// Rows recorded by the writer.
        public let rowCount: Int
        /// Columns in position order.
        public let columns: [ColumnMetadata]
        /// Declared indexes.
        public let indexes: [IndexDescription]
        /// Declared relations.
        public let relations: [RelationSpec]
    }

    /// One column of a snapshot table.
    public struct ColumnMetadata: Sendable, Equatable {
        /// The field name.
        public let name: String
        /// How its values are stored.
        public let kind: ColumnKind
        /// Whether some rows have no value.
        public let nullable: Bool
        /// What SQL `NULL` means in the column (format 3; earlier formats: `absent`).
        public var nulls: NullMeaning = .absent
    }

    /// The table named `name`, if present.
    public func table(named name: String) -> TableMetadata? {
        tables.first { $0.name == name }
    }
}

extension SnapshotMetadata {
    /// Reads and checks the metadata of an open snapshot.
    ///
    /// `checkedVersion`: the format version a caller found when it checked the file's
    /// identity and structure (`SnapshotIdentity`, `SnapshotStructure.checkFile`) on this
    /// same connection, which has changed nothing since (no migration ran); those checks
    /// are then not repeated. Nil to run them here.
    static func read(_ connection: SQLiteConnection, checkedVersion: Int? = nil) throws(SnapshotError) -> SnapshotMetadata {
        let path = connection.path
        do {
            let version: Int
            if let checkedVersion {
                version = checkedVersion
            } else {
                version = try SnapshotIdentity.check(connection)
                try SnapshotStructure.checkFile(connection)
            }
            var facts: [String: String] = [:]
            for row in try connection.prepare("SELECT key, value FROM entitystore_meta").rows() {
                if case let .text(key) = row[0], case let .text(value) = row[1] { facts[key] = value }
            }
            let appVersion = Int(facts["app_schema_version"] ?? "0") ?? 0
            var columns: [String: [ColumnMetadata]] = [:]
            // Format 3 says what NULL means per column; before it, NULL was always a missing field.
            let hasNulls = try !connection.prepare("SELECT 1 FROM pragma_table_info('entitystore_columns') WHERE name = 'nulls'").rows().isEmpty
            for row in try connection.prepare(
                "SELECT table_name, name, kind, nullable, \(hasNulls ? "nulls" : "'absent'") FROM entitystore_columns ORDER BY table_name, position").rows() {
                guard case let .text(table) = row[0], case let .text(name) = row[1], case let .text(kindName) = row[2],
                      case let .integer(nullable) = row[3], case let .text(nullsName) = row[4]
                else { throw SnapshotError.notASnapshot(path: path, reason: "entitystore_columns holds a malformed row") }
                guard let kind = ColumnKind(rawValue: kindName) else {
                    throw SnapshotError.invalidData(table: table, detail: "column '\(name)' has unknown kind '\(kindName)'")
                }
                guard let nulls = NullMeaning(rawValue: nullsName) else {
                    throw SnapshotError.invalidData(table: table, detail: "column '\(name)' has an unknown meaning of NULL '\(nullsName)'")
                }
                var column = ColumnMetadata(name: name, kind: kind, nullable: nullable != 0)
                column.nulls = nulls
                columns[table, default: []].append(column)
            }
            var indexes: [String: [IndexDescription]] = [:]
            for row in try connection.prepare("SELECT table_name, name, kind, field FROM entitystore_indexes ORDER BY table_name, name").rows() {
                guard case let .text(table) = row[0], case let .text(name) = row[1], case let .text(kindName) = row[2],
                      case let .text(field) = row[3], let kind = IndexKind(rawValue: kindName)
                else { throw SnapshotError.notASnapshot(path: path, reason: "entitystore_indexes holds a malformed row") }
                indexes[table, default: []].append(IndexDescription(name: name, kind: kind, field: field))
            }
            var relations: [String: [RelationSpec]] = [:]
            for row in try connection.prepare(
                "SELECT table_name, field, target_table, delete_rule FROM entitystore_relations ORDER BY table_name, field").rows() {
                guard case let .text(table) = row[0], case let .text(field) = row[1], case let .text(target) = row[2],
                      case let .text(ruleName) = row[3], let rule = DeleteRule(rawValue: ruleName)
                else { throw SnapshotError.notASnapshot(path: path, reason: "entitystore_relations holds a malformed row") }
                relations[table, default: []].append(RelationSpec(table: table, field: field, targetTable: target, deleteRule: rule))
            }
            var tables: [TableMetadata] = []
            var names: Set<String> = []
            // No table holds more rows than the file has bytes: a bound on every count a
            // reader sizes anything by, and on their sum.
            let fileBytes = try connection.fileBytes
            var declaredRows = 0
            for row in try connection.prepare(
                "SELECT name, entity_type, id_kind, row_count FROM entitystore_tables ORDER BY position").rows() {
                guard case let .text(name) = row[0], case let .text(type) = row[1], case let .text(idKindName) = row[2],
                      case let .integer(rowCount) = row[3]
                else { throw SnapshotError.notASnapshot(path: path, reason: "entitystore_tables holds a malformed row") }
                guard let idKind = ColumnKind(rawValue: idKindName) else {
                    throw SnapshotError.invalidData(table: name, detail: "unknown id kind '\(idKindName)'")
                }
                guard names.insert(name.lowercased()).inserted else {
                    throw SnapshotError.invalidData(table: name, detail: "listed more than once in entitystore_tables")
                }
                let folded = name.lowercased()
                if folded.hasPrefix("entitystore_") || folded.hasPrefix("sqlite_") {
                    throw SnapshotError.invalidData(table: name, detail: "a reserved name cannot be an entity table")
                }
                guard rowCount >= 0, rowCount <= fileBytes - Int64(declaredRows) else {
                    throw SnapshotError.invalidData(
                        table: name, detail: "the metadata records \(rowCount) rows, more than a file of \(fileBytes) bytes can hold")
                }
                declaredRows += Int(rowCount)
                let sqlColumns = Set(try SnapshotStructure.columns(ofEntityTable: name, connection: connection))
                guard sqlColumns.contains("id") else {
                    throw SnapshotError.invalidData(table: name, detail: "the table has no 'id' column")
                }
                let listed = columns[name] ?? []
                var listedNames: Set<String> = []
                for column in listed {
                    guard sqlColumns.contains(column.name) else {
                        throw SnapshotError.invalidData(table: name, detail: "column '\(column.name)' is listed in the metadata but missing")
                    }
                    guard listedNames.insert(column.name.lowercased()).inserted else {
                        throw SnapshotError.invalidData(table: name, detail: "column '\(column.name)' is listed more than once")
                    }
                }
                tables.append(TableMetadata(
                    name: name, entityType: type, idKind: idKind, rowCount: Int(rowCount),
                    columns: listed, indexes: indexes[name] ?? [], relations: relations[name] ?? []))
            }
            return SnapshotMetadata(formatVersion: version, appSchemaVersion: appVersion, facts: facts, tables: tables)
        } catch let error as SnapshotError {
            throw error
        } catch let error as SQLiteError {
            throw SnapshotError(error, path: path)
        } catch {
            throw .notASnapshot(path: path, reason: String(describing: error))
        }
    }
}

/// Checks that an open file is an EntityStore snapshot this library can read.
enum SnapshotIdentity {
    /// Returns the file's format version.
    static func check(_ connection: SQLiteConnection) throws -> Int {
        let path = connection.path
        let applicationID = try connection.applicationID
        let version = Int(try connection.userVersion)
        if applicationID != entityStoreApplicationID {
            if applicationID == 0 {
                let count = try connection.prepare("SELECT count(*) FROM sqlite_schema")
                let isEmpty = try count.step() && count.int64(at: 0) == 0
                throw SnapshotError.notASnapshot(
                    path: path, reason: isEmpty ? "the file is empty" : "it has no EntityStore application_id")
            }
            throw SnapshotError.wrongApplicationID(found: applicationID, expected: entityStoreApplicationID)
        }
        if version > FormatMigrator.currentVersion {
            throw SnapshotError.newerFormat(found: version, supported: FormatMigrator.currentVersion)
        }
        if version < 1 {
            throw SnapshotError.notASnapshot(path: path, reason: "format version \(version)")
        }
        return version
    }
}

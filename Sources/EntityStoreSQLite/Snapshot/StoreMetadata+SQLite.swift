import EntityStore
import EntityStoreCodec

// The metadata model is the codec's, shared with the PostgreSQL back end; users of this
// module name it `StoreMetadata`, and `NullMeaning` as before.
@_exported import struct EntityStoreCodec.StoreMetadata
@_exported import enum EntityStoreCodec.NullMeaning

/// Everything a snapshot's metadata tables say.
@available(*, deprecated, renamed: "StoreMetadata", message: "the metadata model is shared with the PostgreSQL back end")
public typealias SnapshotMetadata = StoreMetadata

extension StoreMetadata {
    /// One table of a snapshot.
    @available(*, deprecated, renamed: "StoreMetadata.Table")
    public typealias TableMetadata = Table
    /// One column of a snapshot table.
    @available(*, deprecated, renamed: "StoreMetadata.Column")
    public typealias ColumnMetadata = Column

    /// ``dynamicSchema()``, with a relation to a table the snapshot lacks a ``SnapshotError``
    /// as every reader of a file reports it.
    package func snapshotSchema() throws -> Schema {
        try dynamicSchema { relation in
            SnapshotError.invalidData(
                table: relation.table, detail: "relation '\(relation.field)' targets '\(relation.targetTable)', which the snapshot lacks")
        }
    }

    /// Reads and checks the metadata of an open snapshot. O(tables + columns + indexes +
    /// relations).
    ///
    /// `checkedVersion`: the format version a caller found when it checked the file's
    /// identity and structure (`SnapshotIdentity`, `SnapshotStructure.checkFile`) on this
    /// same connection, which has changed nothing since (no migration ran); those checks
    /// are then not repeated. Nil to run them here.
    static func read(_ connection: SQLiteConnection, checkedVersion: Int? = nil) throws(SnapshotError) -> StoreMetadata {
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
            var rows = StoreMetadata.Rows()
            // Format 3 says what NULL means per column; before it, NULL was always a missing field.
            let hasNulls = try !connection.prepare("SELECT 1 FROM pragma_table_info('entitystore_columns') WHERE name = 'nulls'").rows().isEmpty
            for row in try connection.prepare(
                "SELECT table_name, name, kind, nullable, \(hasNulls ? "nulls" : "'absent'") FROM entitystore_columns ORDER BY table_name, position").rows() {
                guard case let .text(table) = row[0], case let .text(name) = row[1], case let .text(kind) = row[2],
                      case let .integer(nullable) = row[3], case let .text(nulls) = row[4]
                else { throw SnapshotError.notASnapshot(path: path, reason: "entitystore_columns holds a malformed row") }
                try rows.column(table: table, name: name, kind: kind, nullable: nullable != 0, nulls: nulls)
            }
            for row in try connection.prepare("SELECT table_name, name, kind, field FROM entitystore_indexes ORDER BY table_name, name").rows() {
                guard case let .text(table) = row[0], case let .text(name) = row[1], case let .text(kind) = row[2], case let .text(field) = row[3]
                else { throw SnapshotError.notASnapshot(path: path, reason: "entitystore_indexes holds a malformed row") }
                try rows.index(table: table, name: name, kind: kind, field: field)
            }
            for row in try connection.prepare(
                "SELECT table_name, field, target_table, delete_rule FROM entitystore_relations ORDER BY table_name, field").rows() {
                guard case let .text(table) = row[0], case let .text(field) = row[1], case let .text(target) = row[2], case let .text(rule) = row[3]
                else { throw SnapshotError.notASnapshot(path: path, reason: "entitystore_relations holds a malformed row") }
                try rows.relation(table: table, field: field, target: target, rule: rule)
            }
            var tables: [Table] = []
            var names: Set<String> = []
            // No table holds more rows than the file has bytes: a bound on every count a
            // reader sizes anything by, and on their sum.
            let fileBytes = try connection.fileBytes
            var declaredRows = 0
            for row in try connection.prepare(
                "SELECT name, entity_type, id_kind, row_count FROM entitystore_tables ORDER BY position").rows() {
                guard case let .text(name) = row[0], case let .text(type) = row[1], case let .text(idKind) = row[2],
                      case let .integer(rowCount) = row[3]
                else { throw SnapshotError.notASnapshot(path: path, reason: "entitystore_tables holds a malformed row") }
                let table = try rows.table(name: name, entityType: type, idKind: idKind, rowCount: Int(clamping: rowCount))
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
                var listedNames: Set<String> = []
                for column in table.columns {
                    guard sqlColumns.contains(column.name) else {
                        throw SnapshotError.invalidData(table: name, detail: "column '\(column.name)' is listed in the metadata but missing")
                    }
                    guard listedNames.insert(column.name.lowercased()).inserted else {
                        throw SnapshotError.invalidData(table: name, detail: "column '\(column.name)' is listed more than once")
                    }
                }
                tables.append(table)
            }
            return StoreMetadata(formatVersion: version, appSchemaVersion: appVersion, facts: facts, tables: tables)
        } catch let error as SnapshotError {
            throw error
        } catch let error as InvalidStoredValue {
            throw SnapshotError(error)
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

import ArgumentParser
import EntityStore
import EntityStoreSQLite
import Foundation

/// `entity-store inspect SNAPSHOT|URL`: versions, tables, columns, indexes, relations, size.
public struct InspectCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Describe a snapshot: versions, tables with row counts, columns and kinds, indexes, relations, file size.",
        discussion: "Example: entity-store inspect flights.sqlite --json; entity-store inspect postgres://me@localhost/db")

    @Argument(help: "The snapshot file, or a postgres:// URL (a store in PostgreSQL).")
    var snapshot: String

    @Flag(help: "Print one JSON object (stable, documented in docs/CLI.md).")
    var json = false

    @Option(help: "With a postgres:// URL: the schema holding the store (default: the URL's ?schema=, else entitystore).")
    var schema: String?

    public init() {}

    public func run() throws {
        if PostgresConnectionOptions.isURL(snapshot) {
            #if PostgreSQL
            try Self.inspectPostgres(snapshot, schema: schema, json: json)
            return
            #else
            throw CommandFailure(PostgresConnectionOptions.unavailable)
            #endif
        }
        let metadata = try reportingFailures { try Snapshot.metadata(at: snapshot) }
        let size = ((try? FileManager.default.attributesOfItem(atPath: snapshot))?[.size] as? NSNumber)?.intValue ?? 0
        if json {
            let place: [String: JSONValue] = ["path": .string(Redaction.redacted(snapshot)), "size": .integer(Int64(size))]
            CommandOutput.print(Self.json(metadata, at: place).serialized(sortedKeys: true, pretty: true))
            return
        }
        printEscaped("\(snapshot): \(size) bytes, format version \(metadata.formatVersion), app schema version \(metadata.appSchemaVersion)")
        Self.printTables(metadata)
    }

    /// Prints each table of a store, a snapshot file's or one in PostgreSQL: its row count,
    /// id kind, columns (with the SQL type `sqlType` gives a kind, if any), indexes and
    /// relations. O(columns + indexes + relations).
    static func printTables(_ metadata: StoreMetadata, sqlType: (ColumnKind) -> String? = { _ in nil }) {
        for table in metadata.tables {
            printEscaped("table \(table.name) (\(table.entityType)): \(table.rowCount) rows, id \(table.idKind.rawValue)")
            for column in table.columns where column.name != "id" {
                let type = sqlType(column.kind).map { " (\($0))" } ?? ""
                // The format's own column, not a field (docs/SnapshotFormat.md).
                let hidden = column.name == NullMeaning.absentFieldsColumn ? " (hidden: the fields each row lacks)" : ""
                printEscaped("  column \(column.name): \(column.kind.rawValue)\(type)\(column.nullable ? ", nullable" : "")\(hidden)")
            }
            for index in table.indexes { printEscaped("  index \(index.name): \(index.kind.rawValue) on \(index.field)") }
            for relation in table.relations {
                printEscaped("  relation \(relation.field) -> \(relation.targetTable) (on delete \(relation.deleteRule.rawValue))")
            }
        }
    }

    /// The `--json` shape: the members of `place` (where the store is: a file's `"path"` and
    /// `"size"`), then `{"formatVersion", "appSchemaVersion", "tables": [{"name", "entityType",
    /// "idKind", "rows", "columns": [{"name", "kind", "nullable"}], "indexes": [{"name", "kind",
    /// "field"}], "relations": [{"field", "target", "onDelete"}]}]}`.
    static func json(_ metadata: StoreMetadata, at place: [String: JSONValue]) -> JSONValue {
        .object(place.merging([
            "formatVersion": .integer(Int64(metadata.formatVersion)),
            "appSchemaVersion": .integer(Int64(metadata.appSchemaVersion)),
            "tables": .array(metadata.tables.map { table in
                .object([
                    "name": .string(table.name),
                    "entityType": .string(table.entityType),
                    "idKind": .string(table.idKind.rawValue),
                    "rows": .integer(Int64(table.rowCount)),
                    "columns": .array(table.columns.map {
                        .object(["name": .string($0.name), "kind": .string($0.kind.rawValue), "nullable": .bool($0.nullable)])
                    }),
                    "indexes": .array(table.indexes.map {
                        .object(["name": .string($0.name), "kind": .string($0.kind.rawValue), "field": .string($0.field)])
                    }),
                    "relations": .array(table.relations.map {
                        .object(["field": .string($0.field), "target": .string($0.targetTable), "onDelete": .string($0.deleteRule.rawValue)])
                    }),
                ])
            }),
        ]) { place, _ in place })
    }
}

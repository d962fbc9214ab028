import ArgumentParser
import EntityStore
import EntityStoreSQLite
import Foundation

/// `entity-store import INPUT --output SNAPSHOT`: JSON or NDJSON records into a snapshot.
public struct ImportCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import JSON, NDJSON or CSV records into a new snapshot.",
        discussion: """
            INPUT is a JSON file holding one object that maps table names to arrays of records, \
            a <table>.csv file, or a directory of <table>.json (an array), <table>.ndjson (one record per line) \
            and <table>.csv files. Every record has an integer or string "id", unique within its table. \
            A CSV file starts with a header row (RFC 4180 quoting); each column's kind is inferred from all its \
            values: integer, double, bool (true/false), else string; an empty field is null. --types overrides \
            a kind (COLUMN=KIND in every CSV file with that column, TABLE.COLUMN=KIND in one), --null adds texts \
            read as null (e.g. NA), --id names the id column (read as integers when all are, else as text). \
            Types are kept exactly: integers, doubles (2.0 stays 2.0), booleans, strings, nested values, null. \
            An integer beyond 64 bits is refused (quote it to keep it as a string), and NaN or Infinity too (write null).

            Example: entity-store import flights/ --output flights.sqlite --index flights.carrier=grouped \
            --relation flights.carrier=airlines
            """)

    @Argument(help: "A JSON file, a CSV file, or a directory of .json/.ndjson/.csv files.")
    var input: String

    @Option(name: .shortAndLong, help: "The snapshot file to write.")
    var output: String

    @Flag(help: "Replace the output file if it exists.")
    var force = false

    @Flag(help: "No progress bars.")
    var quiet = false

    @OptionGroup var schemaOptions: SchemaOptions

    @Option(help: "CSV: the table a single CSV file fills (default: the file's base name).")
    var table: String?

    @OptionGroup var csvOptions: CSVImportOptions

    public init() {}

    public func run() throws {
        try OutputFile.checkWritable(output, force: force)
        let dataset = try DatasetReader(path: input, csv: csvOptions, csvTable: table)
        let names = dataset.tables.keys.sorted()
        // The fields of the tables an option names, to check the names it gives.
        var fields: [String: TableFields] = [:]
        for name in schemaOptions.namedTables where dataset.tables[name] != nil {
            fields[name] = TableFields(records: dataset.tables[name] ?? [], table: name)
        }
        let schema = try schemaOptions.schema(for: names, fields: fields)
        let state = try reportingFailures(input) {
            try EntityState.build(schema: schema) { tx in
                for name in names {
                    try tx[Table<DynamicRecord>(name)].insert(contentsOf: dataset.tables[name] ?? [])
                }
            }
        }
        if !schemaOptions.allowDangling {
            for relation in schemaOptions.declaredRelations {
                let dangling = DanglingReferences(state, table: relation.table, field: relation.field, target: relation.target)
                if let message = dangling.message { throw CommandFailure("\(input): \(message); pass --allow-dangling to import them as they are") }
            }
        }
        let bar = ProgressBar("import", quiet: quiet)
        let summary = try reportingFailures(output) {
            do {
                return try OutputFile.writingSnapshot(to: output) {
                    // No creation time: the same input imports to the same bytes.
                    var options = SnapshotOptions(progress: { bar.update($0.rowsDone, of: $0.totalRows) })
                    options.recordsCreationTime = false
                    options.fieldOrder = dataset.fieldOrder
                    return try state.writeSnapshot(to: output, options: options)
                }
            } catch let error as SnapshotError {
                throw dataset.explain(error) ?? error
            }
        }
        bar.finish()
        let tables = summary.tables.map { "\($0.name) \($0.rows)" }.joined(separator: ", ")
        printEscaped("imported \(summary.rowCount) records into \(output) (\(tables))")
    }
}

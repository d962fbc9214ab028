import ArgumentParser
import EntityStore
import EntityStoreSQLite
import Foundation

/// `entity-store export SNAPSHOT`: the snapshot's records as JSON, NDJSON or CSV.
public struct ExportCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a snapshot's records as JSON (one object of tables), or NDJSON or CSV (one file per table).",
        discussion: """
            Records are ordered by id. `import` then `export` is lossless for JSON and NDJSON. CSV columns are id, \
            then the fields in the snapshot's column order; null and an absent field are both an empty cell, nested \
            values JSON text.

            Example: entity-store export flights.sqlite --format csv --output flights-csv
            """)

    /// Output formats.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, ndjson, csv
    }

    @Argument(help: "The snapshot file.")
    var snapshot: String

    @Option(name: .shortAndLong, help: "Write here instead of standard output (a directory for ndjson).")
    var output: String?

    @Option(help: "json, ndjson or csv.")
    var format: Format = .json

    @Flag(help: "Replace the output if it exists: a file, or for ndjson only a directory that an ndjson export wrote.")
    var force = false

    @Option(name: .customLong("table"), help: ArgumentHelp("Export only this table (repeatable); the others are not read.", valueName: "table"))
    var onlyTables: [String] = []

    @Flag(help: "No progress bars.")
    var quiet = false

    public init() {}

    public mutating func validate() throws {
        if format != .json, output == nil {
            throw ValidationError("--format \(format.rawValue) writes one file per table: give --output DIRECTORY")
        }
    }

    public func run() throws {
        // Refused outputs are refused before the snapshot is read.
        if let output {
            switch format {
            case .json: try OutputFile.checkWritable(output, force: force)
            case .ndjson, .csv: _ = try ExportDirectory.check(try OutputPath(output, isDirectory: true), force: force)
            }
        }
        let reader = try reportingFailures { try SnapshotTableReader(path: snapshot) }
        let metadata = reader.metadata
        // Each named table once, in the snapshot's spelling of its name.
        var named: [String] = []
        for name in onlyTables {
            let stored = try TableFields(name, in: metadata, snapshot: snapshot).table
            if !named.contains(where: { $0.utf8.elementsEqual(stored.utf8) }) { named.append(stored) }
        }
        // Named tables are read alone; all of them are restored.
        let names = named.isEmpty ? metadata.tables.map(\.name) : named
        var read: [String: [DynamicRecord]] = [:]
        if !named.isEmpty {
            for name in names { read[name] = try reportingFailures { try reader.records(name, SnapshotTableReader.Filter()) } }
        } else {
            let state = try restoreDynamic(snapshot, quiet: quiet).state
            for name in names { read[name] = Array(state[Table<DynamicRecord>(name)]) }
        }
        var tables: [ExportDirectory.TableExport] = []
        for name in names {
            let records = (read[name] ?? []).sorted { $0.id < $1.id }
            let fields = metadata.table(named: name)?.fields.map(\.name) ?? []
            tables.append(ExportDirectory.TableExport(name: name, fields: fields, records: records))
        }
        switch format {
        case .json:
            var text = "{"
            for (position, table) in tables.enumerated() {
                text += position == 0 ? "\n" : ",\n"
                text += "  " + JSONValue.string(table.name).serialized() + ": ["
                for (index, record) in table.records.enumerated() {
                    text += (index == 0 ? "\n    " : ",\n    ") + record.jsonValue.serialized()
                }
                text += table.records.isEmpty ? "]" : "\n  ]"
            }
            text += tables.isEmpty ? "}\n" : "\n}\n"
            if let output {
                try OutputFile.write(Data(text.utf8), to: output, force: force)
            } else {
                do {
                    try CommandOutput.writeOutput(Data(text.utf8))
                } catch {
                    throw CommandFailure("cannot write to standard output: \(error)")
                }
            }
        case .ndjson, .csv:
            guard let output else { return }
            try writeDirectory(tables, to: output)
        }
    }

    /// Writes one `<table>.ndjson` or `<table>.csv` file per table into the export directory `output`.
    private func writeDirectory(_ tables: [ExportDirectory.TableExport], to output: String) throws {
        // A table name becomes a file name: one with a slash would land elsewhere ("../x").
        if let unfit = tables.first(where: { $0.name.contains("/") || $0.name.contains("\0") }) {
            throw CommandFailure("'\(output)': table \(Echo.name(unfit.name)) cannot be named by a file; export it with --format json")
        }
        try ExportDirectory.write(
            tables, format: format == .csv ? .csv : .ndjson, to: try OutputPath(output, isDirectory: true), force: force)
    }
}

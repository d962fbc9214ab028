import EntityStore
import EntityStoreSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads an import input into dynamic records by table: a JSON file holding one object
/// that maps table names to arrays of records, one CSV file, or a directory of
/// `<table>.json` (an array), `<table>.ndjson` (one record per line) and `<table>.csv`
/// (a header row, then one record per row) files. Every record must have an integer or
/// string `id`, unique within its table, and one table's IDs all of one kind.
struct DatasetReader {
    /// The records of each table, in input order.
    private(set) var tables: [String: [DynamicRecord]] = [:]
    private var sources: [String: String] = [:]
    /// The kind each column of a CSV table was read as.
    private(set) var kinds: [String: [String: CSVColumnKind]] = [:]
    /// The field order of each table: a CSV header's, or the order in which the JSON
    /// text first gives the records' keys (the first thousand records of each table are
    /// read for it; fields only later records have follow by name).
    private(set) var fieldOrder: [String: [String]] = [:]
    /// The header of each table read from a CSV file.
    private var csvHeaders: [String: [String]] = [:]

    /// Reads `path`, a file or a directory.
    /// - Throws: ``CommandFailure`` naming the file, the table, the record and the problem.
    /// `csv` says how CSV files become records; `csvTable` names the table of a single
    /// CSV file (by default its base name).
    init(path: String, csv: CSVImportOptions = CSVImportOptions(), csvTable: String? = nil) throws {
        let info: FileInfo?
        do { info = try FileInfo.following(path) } catch { throw CommandFailure("'\(path)': \(error)") }
        guard let info else { throw CommandFailure("'\(path)': no such file or directory") }
        if let csvTable, info.kind == .directory || !path.hasSuffix(".csv") {
            throw CommandFailure("--table \(csvTable): names the table of a single .csv file; '\(path)' is \(info.kind == .directory ? "a directory, whose files name their tables" : "not a .csv file")")
        }
        if info.kind == .directory {
            let entries: [String?]
            do { entries = try FileCalls.entries(of: path) } catch {
                throw CommandFailure("'\(path)': cannot list the directory: \(error)")
            }
            let names = entries.compactMap { $0 }.sorted()
            let inputs = names.filter { $0.hasSuffix(".json") || $0.hasSuffix(".ndjson") || $0.hasSuffix(".csv") }
            guard !inputs.isEmpty else { throw CommandFailure("'\(path)': no .json, .ndjson or .csv files in the directory") }
            for name in inputs {
                let file = (path as NSString).appendingPathComponent(name)
                let table = (name as NSString).deletingPathExtension
                if let earlier = sources[table] {
                    throw CommandFailure("'\(file)': table \(Echo.name(table)) is also given by '\(earlier)'")
                }
                if name.hasSuffix(".ndjson") {
                    try readLines(file, table: table)
                } else if name.hasSuffix(".csv") {
                    try readCSV(file, table: table, options: csv.options(for: table))
                } else {
                    let data = try Self.read(file)
                    guard case let .array(records) = try Self.parse(data, file) else {
                        throw CommandFailure("'\(file)': expected a JSON array of records for table \(Echo.name(table))")
                    }
                    try add(records, table: table, file: file)
                    fieldOrder[table] = Self.keyOrder(data, .array)[""]
                }
                sources[table] = file
            }
        } else if path.hasSuffix(".csv") {
            let table = csvTable ?? ((path as NSString).lastPathComponent as NSString).deletingPathExtension
            try readCSV(path, table: table, options: csv.options(for: table))
            sources[table] = path
        } else {
            let data = try Self.read(path)
            guard case let .object(object) = try Self.parse(data, path) else {
                throw CommandFailure("'\(path)': expected a JSON object mapping table names to arrays of records")
            }
            fieldOrder = Self.keyOrder(data, .tablesObject)
            guard !object.isEmpty else { throw CommandFailure("'\(path)': the object names no table") }
            for table in object.keys.sorted() {
                guard case let .array(records)? = object[table] else {
                    throw CommandFailure("'\(path)': table \(Echo.name(table)) must be an array of records")
                }
                try add(records, table: table, file: path)
                sources[table] = path
            }
        }
        try csv.check(against: csvHeaders, input: path)
    }

    /// Reads the whole file. Its type is checked before it is opened, and the open does
    /// not wait: a FIFO would block an open, and then a read, forever.
    private static func read(_ file: String) throws -> Data {
        do {
            guard let info = try FileInfo.following(file) else { throw SystemError(ENOENT) }
            guard info.kind == .regular else {
                throw CommandFailure("'\(file)': not a regular file (\(info.kind.rawValue)); inputs are .json, .ndjson and .csv files")
            }
            let opened = try FileDescriptor.reading(file)
            // Checked again on what was opened, in case the path changed in between.
            let kind = try opened.info().kind
            guard kind == .regular else {
                throw CommandFailure("'\(file)': not a regular file (\(kind.rawValue)); inputs are .json, .ndjson and .csv files")
            }
            return try opened.readAll()
        } catch let error as SystemError {
            throw CommandFailure("'\(file)': cannot read: \(error)")
        }
    }

    /// The records' keys in the order the text first gives them, by table.
    private static func keyOrder(_ data: Data, _ layout: JSONKeyOrder.Layout) -> [String: [String]] {
        data.withUnsafeBytes { JSONKeyOrder.keys(in: $0.bindMemory(to: UInt8.self), layout: layout) }
    }

    private static func parse(_ data: Data, _ file: String) throws -> JSONValue {
        if data.isEmpty { throw CommandFailure("'\(file)': the file is empty") }
        do { return try JSONValue(parsing: data) } catch {
            throw CommandFailure("'\(file)': malformed JSON: \(error)")
        }
    }

    private mutating func readCSV(_ file: String, table: String, options: CSVTable.Options) throws {
        let parsed = try CSVTable(data: try Self.read(file), file: file, options: options)
        try add(records: parsed.records, table: table, file: file) { "row \($0 + 1)" }
        kinds[table] = Dictionary(uniqueKeysWithValues: zip(parsed.header, parsed.kinds))
        // The id column is the id, not a field.
        fieldOrder[table] = parsed.header.filter { $0 != parsed.idColumn }
        csvHeaders[table] = parsed.header
    }

    private mutating func readLines(_ file: String, table: String) throws {
        let data = try Self.read(file)
        var records: [JSONValue] = []
        var lines: [Int] = []
        do {
            try JSONValue.parseLines(data) { line, value in
                records.append(value)
                lines.append(line)
            }
        } catch {
            throw CommandFailure("'\(file)': malformed JSON: \(error)")
        }
        if records.isEmpty, data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw CommandFailure("'\(file)': the file is empty")
        }
        try add(records, table: table, file: file) { "line \(lines[$0])" }
        fieldOrder[table] = Self.keyOrder(data, .lines)[""]
    }

    private mutating func add(
        _ values: [JSONValue], table: String, file: String, position: (Int) -> String = { "record \($0 + 1)" }
    ) throws {
        var records: [DynamicRecord] = []
        records.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            do { records.append(try DynamicRecord(value)) } catch {
                let reason = switch error {
                // The library's message quotes the whole value, which may be huge.
                case .invalidID(let id): "the record's \"id\" must be an integer or a string, not \(Echo.summary(id))"
                default: error.description
                }
                throw CommandFailure("'\(file)': table \(Echo.name(table)) \(position(index)): \(reason)")
            }
        }
        try add(records: records, table: table, file: file, position: position)
    }

    private mutating func add(
        records: [DynamicRecord], table: String, file: String, position: (Int) -> String
    ) throws {
        guard !table.isEmpty else { throw CommandFailure("'\(file)': a table name is empty") }
        guard !table.utf8.contains(0) else {
            throw CommandFailure("'\(file)': table \(Echo.name(table)): a name cannot hold a NUL character (SQLite ends names there)")
        }
        var seen = Set<RecordID>()
        seen.reserveCapacity(records.count)
        var idKind: String?
        for (index, record) in records.enumerated() {
            if let field = record.fields.keys.first(where: { $0.utf8.contains(0) }) {
                throw CommandFailure("'\(file)': table \(Echo.name(table)) \(position(index)): field \(Echo.name(field)): a name cannot hold a NUL character (SQLite ends names there)")
            }
            let kind = if case .integer = record.id { "integer" } else { "string" }
            if let idKind, idKind != kind {
                throw CommandFailure("'\(file)': table \(Echo.name(table)) \(position(index)): id \(Echo.summary(record.id.jsonValue)) is a\(kind == "integer" ? "n" : "") \(kind), but earlier ids of the table are \(idKind)s; one table's ids must all be of one kind")
            }
            idKind = kind
            guard seen.insert(record.id).inserted else {
                throw CommandFailure("'\(file)': table \(Echo.name(table)) \(position(index)): duplicate id \(Echo.summary(record.id.jsonValue))")
            }
        }
        tables[table] = records
    }

    /// A clearer message for a snapshot failure caused by the dataset's shape, or nil.
    /// SQLite refuses a table of more columns than its limit (2,000 by default) and
    /// quotes the whole `CREATE TABLE`; this names the table and summarizes its fields.
    func explain(_ error: SnapshotError) -> CommandFailure? {
        let prefix = "too many columns on "
        guard case .sqlite(let sqlite) = error, sqlite.message.hasPrefix(prefix) else { return nil }
        let table = String(sqlite.message.dropFirst(prefix.count))
        guard let records = tables[table] else { return nil }
        var fields = Set<String>()
        for record in records { fields.formUnion(record.fields.keys) }
        let names = fields.sorted()
        let shown = names.prefix(10).map { Echo.name($0, limit: 40) }.joined(separator: ", ")
        let more = names.count > 10 ? " ... and \(Echo.grouped(names.count - 10)) more fields" : ""
        return CommandFailure("'\(sources[table] ?? table)': table \(Echo.name(table)) has \(Echo.grouped(names.count)) fields besides id (\(shown)\(more)), more columns than SQLite allows in one table")
    }
}

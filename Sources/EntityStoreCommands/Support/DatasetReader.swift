import EntityStore
import Foundation

/// Reads an import input into dynamic records by table: a JSON file holding one object
/// that maps table names to arrays of records, or a directory of `<table>.json` (an array)
/// and `<table>.ndjson` (one record per line) files. Every record must be an object with
/// an integer or string `id`, unique within its table, and one table's IDs all of one kind.
struct DatasetReader {
    /// The records of each table, in input order.
    private(set) var tables: [String: [DynamicRecord]] = [:]
    private var sources: [String: String] = [:]

    /// Reads `path`, a file or a directory.
    /// - Throws: ``CommandFailure`` naming the file, the table, the record and the problem.
    init(path: String, progress: ProgressBar? = nil) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CommandFailure("'\(path)': no such file or directory")
        }
        if isDirectory.boolValue {
            let names: [String]
            do { names = try FileManager.default.contentsOfDirectory(atPath: path).sorted() } catch {
                throw CommandFailure("'\(path)': cannot list the directory: \(error.localizedDescription)")
            }
            let inputs = names.filter { $0.hasSuffix(".json") || $0.hasSuffix(".ndjson") }
            guard !inputs.isEmpty else { throw CommandFailure("'\(path)': no .json or .ndjson files in the directory") }
            for name in inputs {
                let file = (path as NSString).appendingPathComponent(name)
                let table = (name as NSString).deletingPathExtension
                if let earlier = sources[table] {
                    throw CommandFailure("'\(file)': table '\(table)' is also given by '\(earlier)'")
                }
                if name.hasSuffix(".ndjson") {
                    try readLines(file, table: table)
                } else {
                    guard case let .array(records) = try Self.parse(file) else {
                        throw CommandFailure("'\(file)': expected a JSON array of records for table '\(table)'")
                    }
                    try add(records, table: table, file: file)
                }
                sources[table] = file
            }
        } else {
            guard case let .object(object) = try Self.parse(path) else {
                throw CommandFailure("'\(path)': expected a JSON object mapping table names to arrays of records")
            }
            guard !object.isEmpty else { throw CommandFailure("'\(path)': the object names no table") }
            for table in object.keys.sorted() {
                guard case let .array(records)? = object[table] else {
                    throw CommandFailure("'\(path)': table '\(table)' must be an array of records")
                }
                try add(records, table: table, file: path)
                sources[table] = path
            }
        }
    }

    private static func read(_ file: String) throws -> Data {
        do { return try Data(contentsOf: URL(fileURLWithPath: file)) } catch {
            throw CommandFailure("'\(file)': cannot read: \(error.localizedDescription)")
        }
    }

    private static func parse(_ file: String) throws -> JSONValue {
        let data = try read(file)
        if data.isEmpty { throw CommandFailure("'\(file)': the file is empty") }
        do { return try JSONValue(parsing: data) } catch {
            throw CommandFailure("'\(file)': malformed JSON: \(error)")
        }
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
    }

    private mutating func add(
        _ values: [JSONValue], table: String, file: String, position: (Int) -> String = { "record \($0 + 1)" }
    ) throws {
        guard !table.isEmpty else { throw CommandFailure("'\(file)': a table name is empty") }
        var records: [DynamicRecord] = []
        records.reserveCapacity(values.count)
        var seen = Set<RecordID>()
        seen.reserveCapacity(values.count)
        var idKind: String?
        for (index, value) in values.enumerated() {
            let record: DynamicRecord
            do { record = try DynamicRecord(value) } catch {
                throw CommandFailure("'\(file)': table '\(table)' \(position(index)): \(error)")
            }
            let kind = if case .integer = record.id { "integer" } else { "string" }
            if let idKind, idKind != kind {
                throw CommandFailure("'\(file)': table '\(table)' \(position(index)): id \(record.id) is a\(kind == "integer" ? "n" : "") \(kind), but earlier ids of the table are \(idKind)s; one table's ids must all be of one kind")
            }
            idKind = kind
            guard seen.insert(record.id).inserted else {
                throw CommandFailure("'\(file)': table '\(table)' \(position(index)): duplicate id \(record.id)")
            }
            records.append(record)
        }
        tables[table] = records
    }
}

import EntityStore
import Foundation

/// One CSV file read as the records of a table: a header row names the fields; each
/// column's kind is inferred from all its values (or given); a value in `nullTexts`
/// (by default only the empty field) is `null`.
struct CSVTable {
    /// How a file's rows become records.
    struct Options {
        /// The column holding the ids; nil: a column named `id` if there is one, else the
        /// row number (1 for the first record).
        var idColumn: String?
        /// Column kinds that override inference, by column name; the header must have
        /// each column.
        var kinds: [String: CSVColumnKind] = [:]
        /// Column kinds that override inference where the header has the column.
        var kindsWherePresent: [String: CSVColumnKind] = [:]
        /// The texts read as `null` (an empty field always is).
        var nullTexts: Set<String> = [""]
    }

    /// The field names in header order.
    let header: [String]
    /// The records, in file order.
    let records: [DynamicRecord]
    /// The kind each column was read as, in header order.
    let kinds: [CSVColumnKind]
    /// The column holding the ids, if any (else ids are row numbers).
    let idColumn: String?

    /// Reads `data`, the contents of `file`.
    /// - Throws: ``CommandFailure`` naming the file, the line and the problem.
    init(data: Data, file: String, options: Options) throws {
        var header: [String]?
        var columns: [[String?]] = []
        var lines: [Int] = []
        let hasOtherNullTexts = options.nullTexts.contains { !$0.isEmpty }
        do {
            try data.withUnsafeBytes { raw in
                try CSVParser.forEachRecord(in: raw.bindMemory(to: UInt8.self)) { fields, line in
                    guard let names = header else {
                        header = fields
                        columns = Array(repeating: [], count: fields.count)
                        return
                    }
                    guard fields.count == names.count else {
                        throw CSVParser.Failure(line: line, reason: "\(fields.count) fields, but the header names \(names.count)")
                    }
                    for (column, text) in fields.enumerated() {
                        let isNull = text.isEmpty || (hasOtherNullTexts && options.nullTexts.contains(text))
                        columns[column].append(isNull ? nil : text)
                    }
                    lines.append(line)
                }
            }
        } catch let failure as CSVParser.Failure {
            throw CommandFailure("'\(file)': \(failure)")
        }
        guard let header, !header.isEmpty else { throw CommandFailure("'\(file)': the file is empty (a CSV file starts with a header row)") }
        var seen = Set<String>()
        for name in header {
            guard !name.isEmpty else { throw CommandFailure("'\(file)': the header has an empty column name") }
            guard seen.insert(name).inserted else { throw CommandFailure("'\(file)': the header names column \(Echo.name(name)) twice") }
        }
        for name in options.kinds.keys where !seen.contains(name) {
            throw CommandFailure("'\(file)': --types names column \(Echo.name(name)), which the header lacks (columns: \(header.map { Echo.name($0) }.joined(separator: ", ")))")
        }
        let idColumn = options.idColumn ?? (seen.contains("id") ? "id" : nil)
        if let idColumn, !seen.contains(idColumn) {
            throw CommandFailure("'\(file)': --id \(Echo.name(idColumn)): the header has no such column (columns: \(header.map { Echo.name($0) }.joined(separator: ", ")))")
        }
        // A record's "id" is its id: a column of that name beside the ids would be lost.
        if let idColumn, idColumn != "id", seen.contains("id") {
            throw CommandFailure("'\(file)': --id \(Echo.name(idColumn)) takes the ids from that column, but the header also has a column 'id', which would be lost; rename it")
        }
        if let idColumn, let given = options.kinds[idColumn] ?? options.kindsWherePresent[idColumn], given != .integer, given != .string {
            throw CommandFailure("'\(file)': column \(Echo.name(idColumn)) holds the ids, which are integers or strings; --types cannot read it as \(given.rawValue)")
        }
        let kinds = zip(header, columns).map { name, values in
            if let given = options.kinds[name] ?? options.kindsWherePresent[name] { return given }
            let inferred = CSVColumnKind.inferred(from: values)
            // Ids are integers or strings: an id column of other values (1.5, true) is text.
            return name == idColumn && inferred != .integer ? .string : inferred
        }
        self.header = header
        self.kinds = kinds
        self.idColumn = idColumn
        records = try Self.records(header: header, columns: columns, kinds: kinds, idColumn: idColumn, lines: lines, file: file)
    }

    private static func records(
        header: [String], columns: [[String?]], kinds: [CSVColumnKind], idColumn: String?, lines: [Int], file: String
    ) throws -> [DynamicRecord] {
        let idPosition = idColumn.flatMap { header.firstIndex(of: $0) }
        var records: [DynamicRecord] = []
        records.reserveCapacity(lines.count)
        for row in lines.indices {
            var fields: [String: JSONValue] = [:]
            fields.reserveCapacity(header.count)
            var id = RecordID.integer(Int64(row + 1))
            for (column, name) in header.enumerated() {
                let value: JSONValue
                if let text = columns[column][row] {
                    guard let typed = kinds[column].value(text) else {
                        throw CommandFailure("'\(file)': line \(lines[row]): column \(Echo.name(name)) is read as \(kinds[column].rawValue), but holds \(Echo.summary(.string(text)))")
                    }
                    value = typed
                } else {
                    value = .null
                }
                if column == idPosition {
                    guard let recordID = RecordID(value) else {
                        throw CommandFailure("'\(file)': line \(lines[row]): the id column \(Echo.name(name)) is empty (every record needs an id)")
                    }
                    id = recordID
                } else {
                    fields[name] = value
                }
            }
            records.append(DynamicRecord(id: id, fields: fields))
        }
        return records
    }
}

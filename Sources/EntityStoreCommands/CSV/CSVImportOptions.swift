import ArgumentParser
import EntityStore

/// `import` options for CSV inputs: the id column, column kinds, and the texts read as null.
struct CSVImportOptions: ParsableArguments {
    @Option(name: .customLong("id"), help: ArgumentHelp(
        "CSV: the column holding the ids, COLUMN or TABLE=COLUMN (repeatable). Default: a column named id, else the row number.",
        valueName: "[table=]column"))
    var idColumns: [String] = []

    @Option(name: .customLong("types"), help: ArgumentHelp(
        "CSV: read a column as integer, double, bool or string instead of the inferred kind: COLUMN=KIND in every file with the column, TABLE.COLUMN=KIND in one (repeatable).",
        valueName: "[table.]column=kind"))
    var types: [String] = []

    @Option(name: .customLong("null"), help: ArgumentHelp(
        "CSV: a text read as null besides the empty field, e.g. NA (repeatable).", valueName: "text"))
    var nullTexts: [String] = []

    init() {}

    func validate() throws {
        for option in types {
            guard let equals = option.firstIndex(of: "="), equals != option.startIndex else {
                throw ValidationError("--types \(option): expected [TABLE.]COLUMN=KIND")
            }
            guard CSVColumnKind(rawValue: String(option[option.index(after: equals)...])) != nil else {
                throw ValidationError("--types \(option): the kind must be integer, double, bool or string")
            }
        }
    }

    /// Whether no CSV option is given.
    var isEmpty: Bool { idColumns.isEmpty && types.isEmpty && nullTexts.isEmpty }

    /// The options for the CSV file of `table`. A `--types` without a table applies to
    /// the files whose header has the column; one naming a table, to that table's file,
    /// whose header must have it.
    func options(for table: String) throws -> CSVTable.Options {
        var options = CSVTable.Options()
        options.nullTexts.formUnion(nullTexts)
        for option in idColumns {
            if let equals = option.firstIndex(of: "=") {
                if option[..<equals] == table { options.idColumn = String(option[option.index(after: equals)...]) }
            } else {
                options.idColumn = option
            }
        }
        for option in types {
            let (target, column, kind) = try Self.split(type: option)
            if let target {
                if target == table { options.kinds[column] = kind }
            } else {
                options.kindsWherePresent[column] = kind
            }
        }
        return options
    }

    /// Throws unless each table and column these options name is one of the CSV files
    /// read: `headers` holds each CSV table's header (a file's own options check the
    /// columns they name for it). With no CSV file read, any CSV option is an error.
    func check(against headers: [String: [String]], input: String) throws {
        guard !headers.isEmpty else {
            guard isEmpty else {
                let given = idColumns.isEmpty ? (types.isEmpty ? "--null" : "--types") : "--id"
                throw CommandFailure("'\(input)': \(given) applies to CSV files, and the input has none")
            }
            return
        }
        let tables = headers.keys.sorted().map { Echo.name($0) }.joined(separator: ", ")
        for option in idColumns {
            if let equals = option.firstIndex(of: "="), headers[String(option[..<equals])] == nil {
                throw CommandFailure("--id \(option): no CSV file gives table \(Echo.name(String(option[..<equals]))) (CSV tables: \(tables))")
            }
        }
        for option in types {
            let (target, column, _) = try Self.split(type: option)
            if let target {
                guard headers[target] != nil else {
                    throw CommandFailure("--types \(option): no CSV file gives table \(Echo.name(target)) (CSV tables: \(tables))")
                }
            } else if !headers.values.contains(where: { $0.contains(column) }) {
                throw CommandFailure("--types \(option): no CSV file has a column \(Echo.name(column)) (CSV tables: \(tables))")
            }
        }
    }

    /// `[TABLE.]COLUMN=KIND` as its parts.
    private static func split(type option: String) throws -> (table: String?, column: String, kind: CSVColumnKind) {
        guard let equals = option.firstIndex(of: "="), let kind = CSVColumnKind(rawValue: String(option[option.index(after: equals)...])) else {
            throw ValidationError("--types \(option): expected [TABLE.]COLUMN=KIND")
        }
        let target = option[..<equals]
        guard let dot = target.firstIndex(of: ".") else { return (nil, String(target), kind) }
        return (String(target[..<dot]), String(target[target.index(after: dot)...]), kind)
    }
}

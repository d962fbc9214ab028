import ArgumentParser

/// `import` options for CSV inputs: the id column, column kinds, and the texts read as null.
struct CSVImportOptions: ParsableArguments {
    @Option(name: .customLong("id"), help: ArgumentHelp(
        "CSV: the column holding the ids, COLUMN or TABLE=COLUMN (repeatable). Default: a column named id, else the row number.",
        valueName: "[table=]column"))
    var idColumns: [String] = []

    @Option(name: .customLong("types"), help: ArgumentHelp(
        "CSV: read a column as integer, double, bool or string instead of the inferred kind: [TABLE.]COLUMN=KIND (repeatable).",
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

    /// The options for the CSV file of `table`.
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
            guard let equals = option.firstIndex(of: "="), let kind = CSVColumnKind(rawValue: String(option[option.index(after: equals)...])) else {
                throw ValidationError("--types \(option): expected [TABLE.]COLUMN=KIND")
            }
            let target = option[..<equals]
            if let dot = target.firstIndex(of: "."), target[..<dot] == table {
                options.kinds[String(target[target.index(after: dot)...])] = kind
            } else if !target.contains(".") {
                options.kinds[String(target)] = kind
            }
        }
        return options
    }
}

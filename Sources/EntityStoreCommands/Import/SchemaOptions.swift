import ArgumentParser
import EntityStore

/// `--index` and `--relation` options: declare indexes and relations for imported tables.
struct SchemaOptions: ParsableArguments {
    @Option(name: .customLong("index"), help: ArgumentHelp(
        "Declare an index: TABLE.FIELD=unique|grouped|ordered (repeatable).", valueName: "table.field=kind"))
    var indexes: [String] = []

    @Option(name: .customLong("relation"), help: ArgumentHelp(
        "Declare a relation: TABLE.FIELD=TARGET[:cascade|nullify|restrict|none] (repeatable).", valueName: "table.field=target"))
    var relations: [String] = []

    @Flag(help: "Write the snapshot even if a declared relation has references to missing records (by default they are listed and the import fails).")
    var allowDangling = false

    /// The tables that `--index` and `--relation` options name.
    var namedTables: Set<String> {
        Set((indexes + relations).compactMap { option in option.split(separator: ".", maxSplits: 1).first.map(String.init) })
    }

    /// The declared relations as (table, field, target table).
    var declaredRelations: [(table: String, field: String, target: String)] {
        relations.compactMap { option in
            guard let (table, field, value) = try? Self.split(option, "--relation") else { return nil }
            return (table, field, String(value.split(separator: ":", maxSplits: 1).first ?? ""))
        }
    }

    /// The dynamic tables for `tableNames`, with the declared indexes and relations; a
    /// field an option names must be one of `fields` of its table, when given.
    func schema(for tableNames: [String], fields: [String: TableFields] = [:]) throws -> Schema {
        var tables: [String: Table<DynamicRecord>] = [:]
        for name in tableNames { tables[name] = Table<DynamicRecord>(name) }
        for option in indexes {
            let (table, field, value) = try Self.split(option, "--index")
            guard let kind = IndexKind(rawValue: value) else {
                throw ValidationError("--index \(option): the kind must be unique, grouped or ordered")
            }
            guard let declared = tables[table] else { throw ValidationError("--index \(option): there is no table '\(table)'") }
            try fields[table]?.check(field, option: "--index \(option)")
            tables[table] = declared.index(kind, field: field)
        }
        for option in relations {
            let (table, field, value) = try Self.split(option, "--relation")
            let parts = value.split(separator: ":", maxSplits: 1).map(String.init)
            let ruleName = parts.count > 1 ? parts[1] : "none"
            guard let rule = DeleteRule(rawValue: ruleName) else {
                throw ValidationError("--relation \(option): the delete rule must be cascade, nullify, restrict or none")
            }
            guard let declared = tables[table], let target = tables[parts[0]] else {
                throw ValidationError("--relation \(option): both '\(table)' and '\(parts[0])' must be imported tables")
            }
            try fields[table]?.check(field, option: "--relation \(option)")
            tables[table] = declared.references(field: field, to: target, onDelete: rule)
        }
        return try Schema(tableNames.compactMap { tables[$0] })
    }

    private static func split(_ option: String, _ name: String) throws -> (String, String, String) {
        guard let equals = option.firstIndex(of: "="), let dot = option[..<equals].firstIndex(of: ".") else {
            throw ValidationError("\(name) \(option): expected TABLE.FIELD=VALUE")
        }
        return (String(option[..<dot]), String(option[option.index(after: dot)..<equals]), String(option[option.index(after: equals)...]))
    }
}

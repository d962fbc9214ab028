/// Quotes `name` as an SQL identifier: wrapped in double quotes, embedded quotes doubled,
/// as SQLite and PostgreSQL both read them.
///
/// Table and column names come from user data, so they are never spliced into SQL
/// unquoted. SQLite reads SQL text only up to a NUL character, so a name containing NUL
/// cannot be represented and yields an invalid statement (an error when preparing),
/// never a different statement; PostgreSQL's layer refuses such names before.
///
/// - Complexity: O(*n*) in the length of `name`.
package func quoteIdentifier(_ name: String) -> String {
    // Most names hold no quote: every statement of a push or a pull names its tables.
    if !name.utf8.contains(UInt8(ascii: "\"")) { return "\"" + name + "\"" }
    var quoted = "\""
    quoted.reserveCapacity(name.utf8.count + 2)
    for character in name.unicodeScalars {
        if character == "\"" { quoted.unicodeScalars.append("\"") }
        quoted.unicodeScalars.append(character)
    }
    quoted.unicodeScalars.append("\"")
    return quoted
}

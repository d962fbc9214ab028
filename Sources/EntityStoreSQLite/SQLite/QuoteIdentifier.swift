/// Quotes `name` as an SQL identifier: wrapped in double quotes, embedded quotes doubled.
///
/// Table and column names of a snapshot come from user data, so they are never
/// spliced into SQL unquoted. SQLite reads SQL text only up to a NUL character, so a
/// name containing NUL cannot be represented and yields an invalid statement (an
/// error when preparing), never a different statement.
///
/// - Complexity: O(*n*) in the length of `name`.
package func quoteIdentifier(_ name: String) -> String {
    var quoted = "\""
    quoted.reserveCapacity(name.utf8.count + 2)
    for character in name.unicodeScalars {
        if character == "\"" { quoted.unicodeScalars.append("\"") }
        quoted.unicodeScalars.append(character)
    }
    quoted.unicodeScalars.append("\"")
    return quoted
}

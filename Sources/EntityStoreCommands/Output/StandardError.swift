import Foundation

/// Standard error as a `TextOutputStream`, for `print(..., to:)`. What it prints may quote
/// paths, URLs, names and values from the input: passwords are hidden (see
/// ``Redaction``), control characters escaped (see ``Echo/escaped(_:)``), line breaks kept.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        let text = Redaction.redacted(string).split(separator: "\n", omittingEmptySubsequences: false)
            .map { Echo.escaped(String($0)) }.joined(separator: "\n")
        CommandOutput.writeError(text)
    }
}

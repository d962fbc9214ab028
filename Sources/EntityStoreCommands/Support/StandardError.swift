import Foundation

/// Standard error as a `TextOutputStream`, for `print(..., to:)`. What it prints may quote
/// names and values from the input: their control characters are escaped (see
/// ``Echo/escaped(_:)``), line breaks kept.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        let text = string.split(separator: "\n", omittingEmptySubsequences: false)
            .map { Echo.escaped(String($0)) }.joined(separator: "\n")
        FileHandle.standardError.write(Data(text.utf8))
    }
}

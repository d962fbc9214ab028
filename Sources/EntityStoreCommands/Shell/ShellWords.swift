/// Splits a shell line into words as a POSIX shell would for simple commands: spaces
/// separate words; single quotes keep everything literally; double quotes keep spaces
/// and allow `\"` and `\\`; a backslash outside quotes escapes the next character.
enum ShellWords {
    /// Why a line cannot be split.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func split(_ line: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var iterator = line.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t":
                if inWord { words.append(current); current = ""; inWord = false }
            case "'":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "'" { closed = true; break }
                    current.append(next)
                }
                if !closed { throw Failure(description: "a single quote is not closed") }
            case "\"":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "\"" { closed = true; break }
                    if next == "\\" {
                        guard let escaped = iterator.next() else { break }
                        if escaped != "\"" && escaped != "\\" { current.append("\\") }
                        current.append(escaped)
                    } else {
                        current.append(next)
                    }
                }
                if !closed { throw Failure(description: "a double quote is not closed") }
            case "\\":
                inWord = true
                if let next = iterator.next() { current.append(next) }
            default:
                inWord = true
                current.append(character)
            }
        }
        if inWord { words.append(current) }
        return words
    }
}

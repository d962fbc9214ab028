/// Why JSON text could not be parsed, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
        /// The input ended where `expected` was required.
        case unexpectedEndOfInput(expected: String)
        /// `found` (a quoted character or a byte in hex) stands where `expected` was required.
        case unexpectedCharacter(found: String, expected: String)
        /// A number has a superfluous leading zero, like `01`.
        case leadingZero
        /// A number is too large in magnitude for a `Double`.
        case numberOutOfRange(String)
        /// An integer (no fraction, no exponent) does not fit in 64 bits; reading it as a
        /// double would silently change it.
        case integerOutOfRange(String)
        /// `NaN` or an infinity, which JSON cannot spell.
        case nonFiniteNumber(String)
        /// A backslash is followed by `found`, which is not an escape character.
        case invalidEscape(found: String)
        /// A `\u` escape names half of a UTF-16 surrogate pair without its other half.
        case loneSurrogate(UInt16)
        /// A string contains a raw control character (below U+0020), which must be escaped.
        case controlCharacterInString(UInt8)
        /// The bytes are not well-formed UTF-8.
        case invalidUTF8
        /// A complete value is followed by more than whitespace.
        case trailingCharacters(found: String)
        /// Arrays and objects nest deeper than the allowed depth.
        case nestingTooDeep(limit: Int)
    }

    /// What went wrong.
    public let reason: Reason
    /// The 1-based line of the error.
    public let line: Int
    /// The 1-based column of the error on its line, counted in Unicode scalars.
    public let column: Int
    /// The 0-based byte offset of the error in the whole input.
    public let byteOffset: Int

    /// Creates an error; parsers compute the position.
    public init(reason: Reason, line: Int, column: Int, byteOffset: Int) {
        self.reason = reason
        self.line = line
        self.column = column
        self.byteOffset = byteOffset
    }

    /// A sentence describing the problem, without its position.
    public var message: String {
        switch reason {
        case .unexpectedEndOfInput(let expected):
            "unexpected end of input, expected \(expected)"
        case .unexpectedCharacter(let found, let expected):
            "unexpected \(found), expected \(expected)"
        case .leadingZero:
            "numbers must not have leading zeros"
        case .numberOutOfRange(let text):
            "number \(text) is out of the range of a double"
        case .integerOutOfRange(let text):
            "integer \(text) does not fit in 64 bits; write it as a string (\"\(text)\") to keep it exactly"
        case .nonFiniteNumber(let text):
            "\(text) is not a JSON number; write null for a missing or undefined value"
        case .invalidEscape(let found):
            "invalid escape \\\(found), expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"
        case .loneSurrogate(let unit):
            "lone UTF-16 surrogate \\u\(String(unit, radix: 16, uppercase: true)), expected a high surrogate followed by a low surrogate"
        case .controlCharacterInString(let byte):
            "control character \(Self.hex(byte)) in a string, expected it escaped"
        case .invalidUTF8:
            "invalid UTF-8"
        case .trailingCharacters(let found):
            "unexpected \(found) after the value, expected the end of input"
        case .nestingTooDeep(let limit):
            "arrays and objects nest deeper than the limit of \(limit)"
        }
    }

    /// `line L, column C: message`.
    public var description: String {
        "line \(line), column \(column): \(message)"
    }

    /// `U+000A`-style notation for a byte.
    static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}

import Testing
@testable import EntityStore

@Suite("JSON parse errors")
struct JSONParseErrorTests {
    private static func error(parsing text: String, maxDepth: Int = 512) -> JSONParseError? {
        do {
            _ = try JSONValue(parsing: text, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    private static func error(parsing bytes: [UInt8]) -> JSONParseError? {
        do {
            _ = try JSONValue(parsing: bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test("each malformed text fails with its reason and position", arguments: [
        ("", JSONParseError.Reason.unexpectedEndOfInput(expected: "a JSON value"), 1, 1),
        ("   ", .unexpectedEndOfInput(expected: "a JSON value"), 1, 4),
        ("[1,]", .unexpectedCharacter(found: "']'", expected: "a JSON value"), 1, 4),
        ("{\"a\":1,}", .unexpectedCharacter(found: "'}'", expected: "a string key"), 1, 8),
        ("{1:2}", .unexpectedCharacter(found: "'1'", expected: "a string key"), 1, 2),
        ("{\"a\" 1}", .unexpectedCharacter(found: "'1'", expected: "':'"), 1, 6),
        ("{\"a\"", .unexpectedEndOfInput(expected: "':'"), 1, 5),
        ("{\"a\":1 \"b\":2}", .unexpectedCharacter(found: "'\"'", expected: "',' or '}'"), 1, 8),
        ("{\"a\":1", .unexpectedEndOfInput(expected: "',' or '}'"), 1, 7),
        ("{", .unexpectedEndOfInput(expected: "a string key"), 1, 2),
        ("[1 2]", .unexpectedCharacter(found: "'2'", expected: "',' or ']'"), 1, 4),
        ("[1", .unexpectedEndOfInput(expected: "',' or ']'"), 1, 3),
        ("01", .leadingZero, 1, 1),
        ("-01", .leadingZero, 1, 1),
        ("-", .unexpectedEndOfInput(expected: "a digit"), 1, 2),
        ("-x", .unexpectedCharacter(found: "'x'", expected: "a digit"), 1, 2),
        ("1.", .unexpectedEndOfInput(expected: "a digit after the decimal point"), 1, 3),
        ("1.e5", .unexpectedCharacter(found: "'e'", expected: "a digit after the decimal point"), 1, 3),
        ("1e+", .unexpectedEndOfInput(expected: "a digit in the exponent"), 1, 4),
        (".5", .unexpectedCharacter(found: "'.'", expected: "a JSON value"), 1, 1),
        ("+1", .unexpectedCharacter(found: "'+'", expected: "a JSON value"), 1, 1),
        ("1e400", .numberOutOfRange("1e400"), 1, 1),
        ("NaN", .nonFiniteNumber("NaN"), 1, 1),
        ("[nan]", .nonFiniteNumber("nan"), 1, 2),
        ("Infinity", .nonFiniteNumber("Infinity"), 1, 1),
        ("-Infinity", .nonFiniteNumber("-Infinity"), 1, 1),
        ("{\"x\": -inf}", .nonFiniteNumber("-inf"), 1, 7),
        ("Nax", .unexpectedCharacter(found: "'N'", expected: "a JSON value"), 1, 1),
        ("18446744073709551616", .integerOutOfRange("18446744073709551616"), 1, 1),
        ("tru", .unexpectedEndOfInput(expected: "'true'"), 1, 4),
        ("nul1", .unexpectedCharacter(found: "'1'", expected: "'null'"), 1, 4),
        ("fals", .unexpectedEndOfInput(expected: "'false'"), 1, 5),
        ("1 2", .trailingCharacters(found: "'2'"), 1, 3),
        ("{} x", .trailingCharacters(found: "'x'"), 1, 4),
        ("[1] // note", .trailingCharacters(found: "'/'"), 1, 5),
        ("\"abc", .unexpectedEndOfInput(expected: "'\"' to close the string"), 1, 5),
        ("\"a\\n", .unexpectedEndOfInput(expected: "'\"' to close the string"), 1, 5),
        ("\"a\u{01}\"", .controlCharacterInString(0x01), 1, 3),
        ("\"a\\\"\tb\"", .controlCharacterInString(0x09), 1, 5),
        ("\"\\x\"", .invalidEscape(found: "x"), 1, 2),
        ("\"\\", .unexpectedEndOfInput(expected: "an escape character"), 1, 3),
        ("\"\\u12G4\"", .unexpectedCharacter(found: "'G'", expected: "a hexadecimal digit"), 1, 6),
        ("\"\\u12", .unexpectedEndOfInput(expected: "a hexadecimal digit"), 1, 6),
        ("\"\\ud800\"", .loneSurrogate(0xD800), 1, 2),
        ("\"\\udc00\"", .loneSurrogate(0xDC00), 1, 2),
        ("\"x\\ud83d\\u0041\"", .loneSurrogate(0xD83D), 1, 3),
        ("\"\\ud83dx\"", .loneSurrogate(0xD83D), 1, 2),
        ("\u{01}", .unexpectedCharacter(found: "character U+0001", expected: "a JSON value"), 1, 1),
    ] as [(String, JSONParseError.Reason, Int, Int)])
    func malformedText(text: String, reason: JSONParseError.Reason, line: Int, column: Int) throws {
        let error = try #require(Self.error(parsing: text))
        #expect(error.reason == reason)
        #expect(error.line == line)
        #expect(error.column == column)
        #expect(error.description.hasPrefix("line \(line), column \(column): "))
        #expect(!error.message.isEmpty)
    }

    @Test("malformed UTF-8 is rejected where it starts", arguments: [
        [0x22, 0xFF, 0x22],
        [0x22, 0x80, 0x22],
        [0x22, 0xC0, 0x80, 0x22],
        [0x22, 0xE0, 0x80, 0x80, 0x22],
        [0x22, 0xED, 0xA0, 0x80, 0x22],
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
        [0x22, 0xE2, 0x82],
        [0x22, 0xE2, 0x28, 0xA1, 0x22],
    ] as [[UInt8]])
    func invalidUTF8(bytes: [UInt8]) throws {
        let error = try #require(Self.error(parsing: bytes))
        #expect(error.reason == .invalidUTF8)
        #expect(error.byteOffset == 1)
        #expect(error.column == 2)
    }

    @Test("a byte that cannot start a value is named in hex")
    func strayByte() throws {
        let error = try #require(Self.error(parsing: [0xFF]))
        #expect(error.reason == .unexpectedCharacter(found: "byte 0xFF", expected: "a JSON value"))
    }

    @Test("lines count newlines and columns count Unicode scalars")
    func positions() throws {
        let multiline = try #require(Self.error(parsing: "{\n  \"a\": [1,\n    2,,\n  ]\n}"))
        #expect(multiline.line == 3)
        #expect(multiline.column == 7)
        #expect(multiline.byteOffset == 19)
        #expect(multiline.description == "line 3, column 7: unexpected ',', expected a JSON value")

        let wide = try #require(Self.error(parsing: "[\"é😀\", x]"))
        #expect(wide.line == 1)
        #expect(wide.column == 8)
        #expect(wide.byteOffset == 11)
    }

    @Test("a 100,000-deep nesting is an error, not a stack overflow")
    func deepNesting() throws {
        let arrays = try #require(Self.error(parsing: String(repeating: "[", count: 100_000)))
        #expect(arrays.reason == .nestingTooDeep(limit: 512))
        #expect(arrays.column == 513)
        let objects = try #require(Self.error(parsing: String(repeating: "{\"a\":", count: 100_000)))
        #expect(objects.reason == .nestingTooDeep(limit: 512))
    }

    @Test("maxDepth is honoured exactly and capped")
    func depthLimit() throws {
        #expect(try JSONValue(parsing: "[[1]]", maxDepth: 2) == [[1]])
        #expect(Self.error(parsing: "[[[1]]]", maxDepth: 2)?.reason == .nestingTooDeep(limit: 2))
        #expect(Self.error(parsing: "[]", maxDepth: 0)?.reason == .nestingTooDeep(limit: 0))
        #expect(try JSONValue(parsing: "7", maxDepth: 0) == 7)

        let limit = JSONValue.maximumNestingLimit
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        let parsed = try JSONValue(parsing: deepest, maxDepth: .max)
        #expect(parsed.arrayValue?.count == 1)
        #expect(parsed.serialized() == deepest)
        #expect(parsed == (try JSONValue(parsing: deepest, maxDepth: limit)))
        #expect(!(parsed < parsed))
        #expect(Set([parsed]).contains(parsed))
        let tooDeep = "[" + deepest + "]"
        #expect(Self.error(parsing: tooDeep, maxDepth: .max)?.reason == .nestingTooDeep(limit: limit))
    }
}

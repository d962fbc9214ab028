import Testing
@testable import EntityStore

@Suite("Newline-delimited JSON")
struct JSONLinesTests {
    private struct Stop: Error, Equatable {
        var line: Int
    }

    @Test("values arrive with their line numbers; blank lines are skipped")
    func parsesLines() throws {
        let text = "{\"a\":1}\n\n  \t\r\n[2.0]\r\n\"x\"\n3"
        var seen: [(Int, JSONValue)] = []
        try JSONValue.parseLines(Array(text.utf8)) { line, value in
            seen.append((line, value))
        }
        #expect(seen.map(\.0) == [1, 4, 5, 6])
        #expect(seen.map(\.1) == [["a": 1], [2.0], "x", 3])
    }

    @Test("an error names the line within the whole input")
    func errorLine() throws {
        let text = "1\n2\n[3,\n4"
        var count = 0
        let error = try #require(throws: JSONParseError.self) {
            try JSONValue.parseLines(text.utf8) { _, _ in count += 1 }
        }
        #expect(count == 2)
        #expect(error.line == 3)
        #expect(error.column == 4)
        #expect(error.byteOffset == 7)
        #expect(error.reason == .unexpectedEndOfInput(expected: "a JSON value"))
    }

    @Test("a value spread over two lines is an error on its first line")
    func noMultilineValues() throws {
        let error = try #require(throws: JSONParseError.self) {
            try JSONValue.parseLines("[1,\n2]".utf8) { _, _ in }
        }
        #expect(error.line == 1)
    }

    @Test("an error thrown by the body stops parsing and propagates")
    func bodyError() throws {
        var lines: [Int] = []
        let error = try #require(throws: Stop.self) {
            try JSONValue.parseLines("1\n2\n3".utf8.lazy.map { $0 }) { line, _ in
                lines.append(line)
                if line == 2 { throw Stop(line: line) }
            }
        }
        #expect(error == Stop(line: 2))
        #expect(lines == [1, 2])
    }

    @Test("empty input calls nothing")
    func emptyInput() throws {
        var called = false
        try JSONValue.parseLines([UInt8]()) { _, _ in called = true }
        try JSONValue.parseLines("\n\n".utf8) { _, _ in called = true }
        #expect(!called)
    }
}

@testable import EntityStoreCommands
import EntityStore
import Testing

@Suite("Echoed text: escaped, capped, summarized")
struct EchoTests {
    @Test func controlCharactersAreEscaped() {
        #expect(Echo.escaped("plain ✓ 👩‍👩‍👧") == "plain ✓ 👩‍👩‍👧")
        #expect(Echo.escaped("a\u{0}b\nc\td\r\u{1B}[31m\u{7F}\u{85}\u{2028}\u{202E}") == #"a\u{0}b\nc\td\r\u{1B}[31m\u{7F}\u{85}\u{2028}\u{202E}"#)
    }

    @Test func longLinesAreCapped() {
        let line = Echo.capped(String(repeating: "x", count: 10_000) + "\u{0}", limit: 100)
        #expect(line == String(repeating: "x", count: 100) + "… (9,905 more characters)")
        #expect(CommandFailure(String(repeating: "y", count: 200_000)).message.count < 600)
        #expect(CommandFailure("table 'a\u{0}b'").message == #"table 'a\u{0}b'"#)
    }

    @Test func largeValuesAreSummarized() {
        let object = JSONValue.object(Dictionary(uniqueKeysWithValues: (0..<10_000).map { ("f\(100_000 + $0)", JSONValue.integer(Int64($0))) }))
        let summary = Echo.summary(object)
        #expect(summary.hasPrefix(#"{"f100000": 0, "f100001": 1, "#))
        #expect(summary.hasSuffix(#""f100009": 9, ... and 9,990 more fields}"#))
        #expect(Echo.summary(.array((0..<25).map { .integer(Int64($0)) })).hasSuffix("9, ... and 15 more elements]"))
        #expect(Echo.summary(.string(String(repeating: "z", count: 1_000))).hasSuffix("… (940 more characters)"))
        #expect(Echo.summary(.integer(7)) == "7")
    }

    @Test func countsAreGrouped() {
        #expect(Echo.grouped(0) == "0")
        #expect(Echo.grouped(999) == "999")
        #expect(Echo.grouped(9_990) == "9,990")
        #expect(Echo.grouped(1_234_567) == "1,234,567")
        #expect(Echo.grouped(-1_000) == "-1,000")
    }
}

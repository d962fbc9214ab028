import EntityStoreTestSupport
import Testing
@testable import EntityStore

@Suite("JSONValue serialization and round trips")
struct JSONSerializationTests {
    @Test("representative values print exactly", arguments: [
        (JSONValue.double(2.0), "2.0"),
        (.double(0.1), "0.1"),
        (.double(1e300), "1e+300"),
        (.double(-0.0), "-0.0"),
        (.double(-2.5e-8), "-2.5e-08"),
        (.integer(Int64.min), "-9223372036854775808"),
        (.integer(Int64.max), "9223372036854775807"),
        (.integer(0), "0"),
        (.bool(true), "true"),
        (.bool(false), "false"),
        (.null, "null"),
        (.string(""), "\"\""),
        (.array([]), "[]"),
        (.object([:]), "{}"),
        (.string("héllo 😀 日本"), "\"héllo 😀 日本\""),
        (.string("q\"b\\s/\n\r\t\u{08}\u{0C}\u{01}\u{1F}"), "\"q\\\"b\\\\s/\\n\\r\\t\\b\\f\\u0001\\u001F\""),
        (.array([1, 2.0, "x", nil, [true]]), "[1,2.0,\"x\",null,[true]]"),
        (.object(["b": 1, "a": [false], "": .object([:])]), "{\"\":{},\"a\":[false],\"b\":1}"),
    ] as [(JSONValue, String)])
    func exactOutput(value: JSONValue, expected: String) throws {
        #expect(value.serialized() == expected)
        #expect(try JSONValue(parsing: expected) == value)
    }

    @Test("parsing keeps kinds exactly", arguments: [
        ("2.0", JSONValue.double(2.0)),
        ("2", .integer(2)),
        ("-0", .integer(0)),
        ("1E2", .double(100)),
        ("1e-2", .double(0.01)),
        ("-9223372036854775808", .integer(Int64.min)),
        ("9223372036854775807", .integer(Int64.max)),
        ("9223372036854775808.0", .double(9_223_372_036_854_775_808.0)),
        ("1.2345678901234568e29", .double(1.2345678901234568e29)),
        ("1e-400", .double(0)),
        ("true", .bool(true)),
        ("\"\\u00e9\\ud83d\\ude00\\/\"", .string("é😀/")),
        (" \t\r\n[ 1 , { \"k\" : null } ]\n", .array([1, ["k": nil]])),
        ("\u{FEFF}{\"a\":1}", .object(["a": 1])),
    ] as [(String, JSONValue)])
    func parsedKinds(text: String, expected: JSONValue) throws {
        let value = try JSONValue(parsing: text)
        #expect(value == expected)
        #expect(try JSONValue(parsing: value.serialized()) == value)
    }

    @Test("-0.0 stays a negative-zero double; an integer beyond 64 bits is refused, never rounded to a double")
    func signAndOverflow() throws {
        let negativeZero = try JSONValue(parsing: "-0.0")
        #expect(negativeZero.doubleValue?.sign == .minus)
        #expect(negativeZero.serialized() == "-0.0")
        for text in ["9223372036854775808", "-9223372036854775809", "123456789012345678901234567890"] {
            #expect(throws: JSONParseError(reason: .integerOutOfRange(text), line: 1, column: 1, byteOffset: 0)) {
                try JSONValue(parsing: text)
            }
        }
    }

    @Test("a repeated object key keeps the last value")
    func duplicateKeys() throws {
        #expect(try JSONValue(parsing: "{\"a\":1,\"b\":2,\"a\":3}") == ["a": 3, "b": 2])
        #expect(JSONValue(dictionaryLiteral: ("a", 1), ("a", 2)) == ["a": 2])
    }

    @Test("non-finite doubles serialize as null")
    func nonFinite() {
        #expect(JSONValue.double(.infinity).serialized() == "null")
        #expect(JSONValue.double(-.infinity).serialized() == "null")
        #expect(JSONValue.array([.double(.nan), 1.5]).serialized() == "[null,1.5]")
    }

    @Test("pretty output indents by two spaces")
    func pretty() {
        let value: JSONValue = ["name": "x", "tags": ["a", 1], "empty": [], "nested": ["k": nil]]
        let expected = """
        {
          "empty": [],
          "name": "x",
          "nested": {
            "k": null
          },
          "tags": [
            "a",
            1
          ]
        }
        """
        #expect(value.serialized(pretty: true) == expected)
    }

    @Test("unsorted output still round-trips")
    func unsortedKeys() throws {
        let value: JSONValue = ["z": 1, "y": [2.5], "x": "three"]
        #expect(try JSONValue(parsing: value.serialized(sortedKeys: false)) == value)
        #expect(value.serialized(sortedKeys: false).utf8.count == value.serialized().utf8.count)
    }

    @Test("random values round-trip through text")
    func randomRoundTrips() throws {
        var generator = SplitMix64(seed: 2_024)
        for _ in 0..<300 {
            let value = JSONValueSamples.random(using: &generator, depth: 3, finiteOnly: true)
            let text = value.serialized()
            #expect(try JSONValue(parsing: text) == value, "\(text)")
            #expect(try JSONValue(parsing: value.serialized(pretty: true)) == value)
        }
    }

    @Test("bytes from a collection without contiguous storage parse too")
    func nonContiguousInput() throws {
        let bytes = "[1,\"a\"]".utf8.lazy.map { $0 }
        #expect(try JSONValue(parsing: bytes) == [1, "a"])
        #expect(try JSONValue(parsing: Array("{}".utf8)) == [:])
    }
}

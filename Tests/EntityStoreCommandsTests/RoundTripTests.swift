import EntityStore
import EntityStoreTestSupport
import Foundation
import Testing

/// Whether two values are the same down to the bytes: kinds as `JSONValue` keeps them
/// (2.0 is not 2), strings by their UTF-8 (no Unicode normalization), doubles by bit
/// pattern (-0.0 is not 0.0), objects with the same keys.
func identical(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.null, .null): true
    case let (.bool(x), .bool(y)): x == y
    case let (.integer(x), .integer(y)): x == y
    case let (.double(x), .double(y)): x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
    case let (.string(x), .string(y)): Array(x.utf8) == Array(y.utf8)
    case let (.array(x), .array(y)): x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
    case let (.object(x), .object(y)):
        x.count == y.count
            && Set(x.keys.map { Array($0.utf8) }) == Set(y.keys.map { Array($0.utf8) })
            && x.allSatisfy { key, value in y[key].map { identical(value, $0) } ?? false }
    default: false
    }
}

/// Expects the export to hold exactly `expected`'s tables and records, each table ordered by id.
func expectLossless(
    _ exportText: String, _ expected: [String: [JSONValue]], sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let exported = tables(of: try parseJSON(exportText, sourceLocation: sourceLocation), sourceLocation: sourceLocation)
    #expect(Set(exported.keys) == Set(expected.keys), sourceLocation: sourceLocation)
    for (name, records) in expected {
        let actual = exported[name] ?? []
        let wanted = sortedByID(records)
        #expect(actual.count == wanted.count, "table \(name)", sourceLocation: sourceLocation)
        for (got, want) in zip(actual, wanted) where !identical(got, want) {
            Issue.record("table \(name): exported \(json(got)) for \(json(want))", sourceLocation: sourceLocation)
        }
    }
}

/// Records that test the kinds: integers and doubles, booleans, null and absent fields,
/// nesting, Unicode and escapes, 64-bit extremes.
let trickyJSON = #"""
    {
      "values": [
        {"id": 3, "two": 2.0, "one": 1, "minusZero": -0.0, "zero": 0, "tenth": 0.1, "third": 0.3333333333333333,
         "tiny": 5e-324, "huge": 1.7976931348623157e308, "exponent": 1e3, "negative": -42,
         "max": 9223372036854775807, "min": -9223372036854775808, "beyond": 9223372036854775808.0,
         "yes": true, "no": false, "nothing": null},
        {"id": 1, "two": 2, "one": 1.0, "text": "2.0", "nothing": "null"},
        {"id": -9223372036854775808, "note": "the smallest id"},
        {"id": 9223372036854775807, "note": "the largest id"},
        {"id": 0}
      ],
      "nested": [
        {"id": 1, "object": {"a": {"b": {"c": [1, 2.0, "3", null, true, {"d": []}]}}}, "empty": {}, "list": [[], [[]], [{}]]},
        {"id": 2, "matrix": [[1.5, -2], [3, 4e-10]], "mixed": [null, false, 0, 0.0, "", [], {}]}
      ],
      "text": [
        {"id": "emoji", "value": "👩‍👩‍👧‍👦 🇳🇴 😀 \ud83d\ude00"},
        {"id": "escapes", "value": "quote \" backslash \\ slash \/ newline \n tab \t return \r nul \u0000 bell \u0007 del \u007f"},
        {"id": "separators", "value": "line\u2028paragraph\u2029"},
        {"id": "combining", "value": "e\u0301 vs \u00e9", "känd": "ключ 鍵 مفتاح"},
        {"id": "", "value": "an empty id"},
        {"id": "ids can be long and spaced out: ✓ 🎉", "value": ""},
        {"id": "1", "value": "a string id that looks like a number"}
      ]
    }
    """#

@Suite("Import then export is lossless", .threadsOfItsOwn)
struct RoundTripTests {
    @Test func trickyValuesSurviveFromOneFile() throws {
        try withScratch { scratch in
            let input = try scratch.write("tricky.json", trickyJSON)
            let snapshot = scratch.path("tricky.sqlite")
            let imported = run(["import", input, "--output", snapshot])
            #expect(imported.status == 0, "\(imported)")
            let exported = run(["export", snapshot])
            #expect(exported.status == 0, "\(exported)")
            try expectLossless(exported.stdout, tables(of: try parseJSON(trickyJSON)))
            #expect(run(["verify", snapshot]).status == 0)

            // Spot checks of what the comparison covers: the kinds come back as written.
            let values = tables(of: try parseJSON(exported.stdout))["values"] ?? []
            let three = try #require(values.first { $0["id"] == .integer(3) })
            #expect(three["two"].map { identical($0, .double(2)) } == true)
            #expect(three["one"].map { identical($0, .integer(1)) } == true)
            #expect(three["minusZero"].map { identical($0, .double(-0.0)) } == true)
            #expect(three["max"] == .integer(.max))
            #expect(three["min"] == .integer(.min))
            #expect(three["nothing"] == .null)
            let one = try #require(values.first { $0["id"] == .integer(1) })
            #expect(one["yes"] == nil, "an absent field must stay absent, not become null")
            #expect(one["one"].map { identical($0, .double(1)) } == true)
            #expect(exported.stdout.contains(#""two":2.0"#))
            #expect(exported.stdout.contains(#""one":1,"#))
        }
    }

    @Test func exportToFileRoundTripsAgain() throws {
        try withScratch { scratch in
            let input = try scratch.write("tricky.json", trickyJSON)
            #expect(run(["import", input, "--output", scratch.path("first.sqlite")]).status == 0)
            #expect(run(["export", scratch.path("first.sqlite"), "--output", scratch.path("again.json")]).status == 0)
            let second = run(["import", scratch.path("again.json"), "--output", scratch.path("second.sqlite")])
            #expect(second.status == 0, "\(second)")
            let diff = run(["diff", scratch.path("first.sqlite"), scratch.path("second.sqlite")])
            #expect(diff.stdout == "no differences\n", "\(diff)")
            try expectLossless(run(["export", scratch.path("second.sqlite")]).stdout, tables(of: try parseJSON(trickyJSON)))
        }
    }

    @Test func aDirectoryOfJSONAndNDJSONFiles() throws {
        try withScratch { scratch in
            let all = tables(of: try parseJSON(trickyJSON))
            // values as an array file, nested and text as NDJSON (with a blank line and CRLF).
            try scratch.write("in/values.json", json(.array(all["values"] ?? [])))
            try scratch.write("in/nested.ndjson", (all["nested"] ?? []).map(json).joined(separator: "\r\n") + "\n\n")
            try scratch.write("in/text.ndjson", (all["text"] ?? []).map(json).joined(separator: "\n"))
            try scratch.write("in/README.txt", "not an input")
            let snapshot = scratch.path("dir.sqlite")
            let imported = run(["import", scratch.path("in"), "--output", snapshot])
            #expect(imported.status == 0, "\(imported)")
            #expect(imported.stdout.contains("(nested 2, text 7, values 5)"), "\(imported)")
            try expectLossless(run(["export", snapshot]).stdout, all)

            // NDJSON export then import of that directory gives the same records again.
            #expect(run(["export", snapshot, "--format", "ndjson", "--output", scratch.path("out")]).status == 0)
            let again = run(["import", scratch.path("out"), "--output", scratch.path("again.sqlite")])
            #expect(again.status == 0, "\(again)")
            try expectLossless(run(["export", scratch.path("again.sqlite")]).stdout, all)
        }
    }

    @Test func anEmptyTable() throws {
        try withScratch { scratch in
            let text = #"{"empty": [], "full": [{"id": "a", "x": null}]}"#
            let snapshot = scratch.path("empty.sqlite")
            let imported = run(["import", try scratch.write("empty.json", text), "--output", snapshot])
            #expect(imported.status == 0, "\(imported)")
            let exported = run(["export", snapshot])
            try expectLossless(exported.stdout, tables(of: try parseJSON(text)))
            let verify = run(["verify", snapshot])
            #expect(verify.status == 0, "\(verify)")
            #expect(verify.stdout.hasPrefix("OK"), "\(verify)")
            #expect(run(["query", snapshot, "empty", "--count"]).stdout == "0\n")
        }
    }

    /// Names the snapshot file cannot hold, refused in one line naming the cause, with
    /// no partial output (docs/Limits.md).
    @Test(arguments: [
        (#"{"entitystore_meta": [{"id": 1}]}"#, "reserved"), (#"{"sqlite_master": [{"id": 1}]}"#, "reserved"),
        (#"{"t": [{"id": 1, "": 5}]}"#, "empty name"),
        (#"{"people": [{"id": 1, "name": "a", "Name": "b"}, {"id": 2, "NAME": 3}]}"#, "differ only in case"),
    ])
    func namesTheFileCannotHold(_ text: String, _ cause: String) throws {
        try withScratch { scratch in
            let snapshot = scratch.path("refused.sqlite")
            let result = run(["import", try scratch.write("refused.json", text), "--output", snapshot])
            expectFailure(result, mentioning: ["refused.sqlite", cause])
            #expect(scratch.contents() == ["refused.json"])
        }
    }

    @Test func stringIDsDifferingOnlyInUnicodeNormalizationAreOneID() throws {
        try withScratch { scratch in
            // Two different JSON strings (precomposed and decomposed é), equal as Swift Strings.
            let input = try scratch.write("ids.json", #"{"words": [{"id": "\u00e9", "form": "nfc"}, {"id": "e\u0301", "form": "nfd"}]}"#)
            let result = run(["import", input, "--output", scratch.path("ids.sqlite")])
            expectFailure(result, mentioning: ["record 2", "duplicate id"])
            #expect(scratch.contents() == ["ids.json"])
        }
    }
}

import EntityStoreTestSupport
import Foundation
import Testing

/// Bad inputs for `import`: the file's content, and what the one stderr line must mention.
struct BadInput: CustomTestStringConvertible, Sendable {
    var name: String
    var content: String
    var mentions: [String]
    /// Bytes to write instead of `content`, for input that is not valid UTF-8.
    var raw: [UInt8]? = nil

    var bytes: Data { raw.map { Data($0) } ?? Data(content.utf8) }

    var testDescription: String { name }

    static let all: [BadInput] = [
        BadInput(name: "malformed JSON", content: #"{"books": [{"id": 1, "title": "x",}]}"#, mentions: ["malformed JSON"]),
        BadInput(name: "unterminated JSON", content: #"{"books": [{"id": 1"#, mentions: ["malformed JSON"]),
        BadInput(name: "a record without id", content: #"{"books": [{"id": 1}, {"title": "no id"}]}"#, mentions: ["books", "record 2"]),
        BadInput(name: "a double id", content: #"{"books": [{"id": 1.5}]}"#, mentions: ["books", "record 1"]),
        BadInput(name: "a null id", content: #"{"books": [{"id": null}]}"#, mentions: ["books", "record 1"]),
        BadInput(name: "a record that is not an object", content: #"{"books": [{"id": 1}, 7]}"#, mentions: ["books", "record 2"]),
        BadInput(name: "duplicate integer ids", content: #"{"books": [{"id": 1}, {"id": 2}, {"id": 1}]}"#, mentions: ["books", "record 3", "duplicate id 1"]),
        BadInput(name: "duplicate string ids", content: #"{"tags": [{"id": "a"}, {"id": "a"}]}"#, mentions: ["tags", "record 2", "duplicate id \"a\""]),
        BadInput(name: "mixed id kinds", content: #"{"books": [{"id": 1}, {"id": "2"}]}"#, mentions: ["books", "record 2", "one kind"]),
        BadInput(name: "a table that is not an array", content: #"{"books": {"id": 1}}"#, mentions: ["books", "array"]),
        BadInput(name: "a top level array", content: #"[{"id": 1}]"#, mentions: ["object"]),
        BadInput(name: "an object naming no table", content: "{}", mentions: ["no table"]),
        BadInput(name: "an empty file", content: "", mentions: ["empty"]),
        BadInput(name: "deep nesting in a field", content: #"{"books": [{"id": 1, "deep": "# + String(repeating: "[", count: 100_000)
                     + String(repeating: "]", count: 100_000) + "}]}", mentions: ["malformed JSON"]),
        BadInput(name: "a bare deeply nested array", content: String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000),
                 mentions: ["malformed JSON"]),
        BadInput(name: "deeply nested objects", content: String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000),
                 mentions: ["malformed JSON"]),
        BadInput(name: "NaN", content: #"{"books": [{"id": 1, "x": NaN}]}"#, mentions: ["malformed JSON", "NaN", "write null"]),
        BadInput(name: "-Infinity", content: #"{"books": [{"id": 1, "x": -Infinity}]}"#, mentions: ["-Infinity", "write null"]),
        BadInput(name: "an integer beyond 64 bits", content: #"{"books": [{"id": 1, "x": 12345678901234567890}]}"#,
                 mentions: ["12345678901234567890", "64 bits", "string"]),
        BadInput(name: "invalid UTF-8", content: "", mentions: ["malformed JSON"],
                 raw: Array(#"{"books": [{"id": 1, "x": ""#.utf8) + [0xC3, 0x28, 0xFF] + Array(#""}]}"#.utf8)),
    ]
}

/// No temporary or partial file beside the expected ones.
func expectNoLeftovers(_ scratch: Scratch, expected: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(scratch.contents() == expected.sorted(), "leftover files", sourceLocation: sourceLocation)
}

@Suite("Errors: one clear line, the right status, no partial output", .threadsOfItsOwn)
struct ErrorTests {
    @Test(arguments: BadInput.all)
    func badInputFile(_ bad: BadInput) throws {
        try withScratch { scratch in
            let input = try scratch.write("input.json", bad.bytes)
            let result = run(["import", input, "--output", scratch.path("out.sqlite")])
            expectFailure(result, mentioning: [input] + bad.mentions)
            expectNoLeftovers(scratch, expected: ["input.json"])
        }
    }

    @Test func badNDJSONLinesNameTheLine() throws {
        try withScratch { scratch in
            try scratch.write("in/books.ndjson", "{\"id\": 1}\n\n{\"id\": 2,}\n")
            let malformed = run(["import", scratch.path("in"), "--output", scratch.path("out.sqlite")])
            expectFailure(malformed, mentioning: ["books.ndjson", "malformed JSON"])

            try scratch.write("in/books.ndjson", "{\"id\": 1}\n{\"id\": 2}\n{\"id\": 1}\n")
            let duplicate = run(["import", scratch.path("in"), "--output", scratch.path("out.sqlite")])
            expectFailure(duplicate, mentioning: ["books.ndjson", "books", "line 3", "duplicate id 1"])

            try scratch.write("in/books.ndjson", "{\"id\": 1}\n" + String(repeating: "[", count: 100_000) + "\n")
            let deep = run(["import", scratch.path("in"), "--output", scratch.path("out.sqlite")])
            expectFailure(deep, mentioning: ["books.ndjson"])

            try scratch.write("in/books.ndjson", "  \n\n")
            let empty = run(["import", scratch.path("in"), "--output", scratch.path("out.sqlite")])
            expectFailure(empty, mentioning: ["books.ndjson", "empty"])

            try scratch.write("in/books.ndjson", "{\"id\": 1}\n")
            try scratch.write("in/books.json", "[{\"id\": 2}]")
            let twice = run(["import", scratch.path("in"), "--output", scratch.path("out.sqlite")])
            expectFailure(twice, mentioning: ["books"])

            try FileManager.default.removeItem(atPath: scratch.path("in"))
            try FileManager.default.createDirectory(atPath: scratch.path("in"), withIntermediateDirectories: false)
            try scratch.write("in/notes.txt", "nothing to import")
            let noInputs = run(["import", scratch.path("in"), "--output", scratch.path("out.sqlite")])
            expectFailure(noInputs, mentioning: [scratch.path("in")])
            expectNoLeftovers(scratch, expected: ["in"])
        }
    }

    @Test func missingFiles() throws {
        try withScratch { scratch in
            let missing = scratch.path("missing.sqlite")
            expectFailure(run(["import", scratch.path("missing.json"), "--output", scratch.path("out.sqlite")]), mentioning: ["missing.json"])
            for arguments in [
                ["export", missing], ["export", missing, "--output", scratch.path("out.json")], ["inspect", missing], ["inspect", missing, "--json"],
                ["verify", missing], ["query", missing, "books"], ["diff", missing, missing], ["migrate", missing],
            ] {
                expectFailure(run(arguments), mentioning: [missing])
            }
            let input = try scratch.write("in.json", #"{"a": [{"id": 1}]}"#)
            expectFailure(run(["import", input, "--output", scratch.path("no/such/dir/out.sqlite")]), mentioning: ["no/such/dir"])
            // Reading a snapshot never creates one.
            expectNoLeftovers(scratch, expected: ["in.json"])
        }
    }

    @Test(arguments: ["random bytes", "a truncated snapshot", "an empty file", "a text file"])
    func corruptSnapshots(_ kind: String) throws {
        try withScratch { scratch in
            let good = try importLibrary(scratch)
            let bytes: Data
            switch kind {
            case "random bytes":
                var generator = SystemRandomNumberGenerator()
                bytes = Data((0..<8_192).map { _ in UInt8.random(in: 0...255, using: &generator) })
            case "a truncated snapshot":
                let whole = try Data(contentsOf: URL(fileURLWithPath: good))
                bytes = whole.prefix(whole.count / 2)
            case "an empty file":
                bytes = Data()
            default:
                bytes = Data(libraryJSON.utf8)
            }
            let bad = try scratch.write("bad.sqlite", bytes)
            for arguments in [
                ["export", bad], ["export", bad, "--output", scratch.path("out.json")], ["inspect", bad], ["inspect", bad, "--json"],
                ["verify", bad], ["query", bad, "books"], ["query", bad, "books", "--count"], ["diff", good, bad], ["diff", bad, good],
                ["migrate", bad],
            ] {
                let result = run(arguments)
                expectFailure(result, mentioning: ["bad.sqlite"])
                #expect(result.stdout.isEmpty, "\(arguments): \(result)")
            }
            #expect(try scratch.read("bad.sqlite") == bytes, "reading a damaged snapshot must not change it")
            expectNoLeftovers(scratch, expected: ["bad.sqlite", "library.json", "library.sqlite"])
        }
    }

    @Test func ndjsonExportOfTablesNamedLikePaths() throws {
        try withScratch { scratch in
            let input = try scratch.write("paths.json", #"{"../escaped": [{"id": 1}], "a/b": [{"id": 2}], "plain": [{"id": 3}]}"#)
            try FileManager.default.createDirectory(atPath: scratch.path("work"), withIntermediateDirectories: false)
            let snapshot = scratch.path("work/paths.sqlite")
            #expect(run(["import", input, "--output", snapshot]).status == 0)
            let result = run(["export", snapshot, "--format", "ndjson", "--output", scratch.path("work/out")])
            expectFailure(result, mentioning: ["work/out", "../escaped"])
            // Nothing written outside (or inside) the output directory, no temporary left.
            #expect(scratch.contents() == ["paths.json", "work"])
            #expect(scratch.contents("work") == ["paths.sqlite"])
            // JSON export names such tables fine.
            try expectLossless(run(["export", snapshot]).stdout, tables(of: try parseJSON(String(decoding: try scratch.read("paths.json"), as: UTF8.self))))
        }
    }

    @Test func unknownTableInQuery() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let result = run(["query", snapshot, "movies", "--count"])
            expectFailure(result, mentioning: [snapshot, "movies"])
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func existingOutputsAreNotOverwrittenWithoutForce() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let original = try scratch.read("library.sqlite")
            let other = try scratch.write("other.json", #"{"x": [{"id": 1}]}"#)

            expectFailure(run(["import", other, "--output", snapshot]), mentioning: [snapshot, "--force"])
            #expect(try scratch.read("library.sqlite") == original)

            let json = try scratch.write("out.json", "keep me")
            expectFailure(run(["export", snapshot, "--output", json]), mentioning: [json, "--force"])
            #expect(try scratch.read("out.json") == Data("keep me".utf8))

            try scratch.write("dir/keep.txt", "keep me")
            expectFailure(run(["export", snapshot, "--format", "ndjson", "--output", scratch.path("dir")]), mentioning: ["dir", "--force"])
            #expect(scratch.contents("dir") == ["keep.txt"])

            expectFailure(run(["demo", "--size", "100", "--keep", json]), mentioning: [json, "--force"])
            #expect(try scratch.read("out.json") == Data("keep me".utf8))

            // With --force each one is replaced, except a directory that no export wrote.
            #expect(run(["import", other, "--output", snapshot, "--force"]).status == 0)
            #expect(run(["query", snapshot, "x", "--count"]).stdout == "1\n")
            #expect(run(["export", snapshot, "--output", json, "--force"]).status == 0)
            #expect(tables(of: try parseJSON(String(decoding: try scratch.read("out.json"), as: UTF8.self))).keys.sorted() == ["x"])
            expectFailure(run(["export", snapshot, "--format", "ndjson", "--output", scratch.path("dir"), "--force"]), mentioning: ["dir"])
            #expect(scratch.contents("dir") == ["keep.txt"])
            let demo = run(["demo", "--size", "100", "--keep", json, "--force", "--quiet"])
            #expect(demo.status == 0, "\(demo)")
            #expect(run(["verify", json]).status == 0)
            expectNoLeftovers(scratch, expected: ["dir", "library.json", "library.sqlite", "other.json", "out.json"])
        }
    }

    @Test func aFailedImportWithForceKeepsThePreviousSnapshot() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let original = try scratch.read("library.sqlite")
            let bad = try scratch.write("bad.json", #"{"x": [{"id": 1}, {"id": 1}]}"#)
            expectFailure(run(["import", bad, "--output", snapshot, "--force"]), mentioning: ["bad.json", "duplicate"])
            #expect(try scratch.read("library.sqlite") == original)
            expectNoLeftovers(scratch, expected: ["bad.json", "library.json", "library.sqlite"])
        }
    }

    @Test(arguments: [
        ["import"], ["import", "in.json"], ["export"], ["query", "s.sqlite"], ["diff", "a.sqlite"], ["verify"],
        ["frobnicate"], ["import", "in.json", "--output", "o.sqlite", "--bogus"],
        ["export", "s.sqlite", "--format", "xml"], ["export", "s.sqlite", "--format", "ndjson"],
        ["query", "s.sqlite", "t", "--limit", "-1"], ["query", "s.sqlite", "t", "--limit", "many"],
        ["query", "s.sqlite", "t", "--where", "novalue"], ["query", "s.sqlite", "t", "--where", "=1"],
        ["demo", "--size", "5"], ["demo", "--size", "lots"],
        ["import", "in.json", "--output", "o.sqlite", "--index", "t.f=fast"],
        ["import", "in.json", "--output", "o.sqlite", "--index", "nodot"],
        ["import", "in.json", "--output", "o.sqlite", "--relation", "t.f=t:explode"],
    ])
    func badUsage(_ arguments: [String]) throws {
        try withScratch { scratch in
            try scratch.write("in.json", #"{"t": [{"id": 1, "f": 2}]}"#)
            let result = run(arguments, in: scratch.url)
            #expect(result.status == 64, "\(arguments): \(result)")
            #expect(result.errorLines.first?.hasPrefix("Error: ") == true, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result)")
            for marker in crashMarkers {
                #expect(!result.stderr.contains(marker), "\(arguments): \(result)")
            }
            expectNoLeftovers(scratch, expected: ["in.json"])
        }
    }
}

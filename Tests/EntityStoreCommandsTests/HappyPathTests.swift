import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import Testing

/// A small library: string-keyed genres, integer-keyed authors and books.
let libraryJSON = """
    {
      "authors": [
        {"id": 2, "name": "Ursula K. Le Guin", "country": "US", "born": 1929},
        {"id": 1, "name": "Jon Fosse", "country": "NO", "born": 1959}
      ],
      "books": [
        {"id": 10, "title": "The Dispossessed", "author": 2, "year": 1974, "rating": 4.5, "genre": "sf"},
        {"id": 11, "title": "Septology", "author": 1, "year": 2019, "rating": 4.0, "genre": "novel"},
        {"id": 12, "title": "A Wizard of Earthsea", "author": 2, "year": 1968, "rating": 4.25, "genre": "fantasy"},
        {"id": 13, "title": "The Left Hand of Darkness", "author": 2, "year": 1969, "rating": 4.5, "genre": "sf"}
      ],
      "genres": [
        {"id": "sf", "label": "Science fiction"},
        {"id": "fantasy", "label": "Fantasy"},
        {"id": "novel", "label": "Novel"}
      ]
    }
    """

/// Imports `libraryJSON` into `library.sqlite` in `scratch` and returns the snapshot's path.
func importLibrary(_ scratch: Scratch, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let input = try scratch.write("library.json", libraryJSON)
    let snapshot = scratch.path("library.sqlite")
    let result = run(["import", input, "--output", snapshot])
    #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
    return snapshot
}

@Suite("Every command's happy path", .threadsOfItsOwn)
struct HappyPathTests {
    @Test func helpListsEverySubcommand() {
        let result = run(["--help"])
        #expect(result.status == 0, "\(result)")
        for command in ["demo", "import", "export", "inspect", "verify", "query", "diff", "migrate"] {
            #expect(result.stdout.contains(command), "help does not list \(command)")
            let help = run([command, "--help"])
            #expect(help.status == 0, "\(command) --help: \(help)")
            #expect(help.stdout.contains("USAGE: entity-store \(command)"), "\(command) --help: \(help)")
        }
    }

    @Test func importReportsTablesAndRows() throws {
        try withScratch { scratch in
            let input = try scratch.write("library.json", libraryJSON)
            let snapshot = scratch.path("library.sqlite")
            let result = run(["import", input, "--output", snapshot])
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "imported 9 records into \(snapshot) (authors 2, books 4, genres 3)\n")
            #expect(result.stderr.isEmpty, "\(result)")
            #expect(scratch.contents() == ["library.json", "library.sqlite"])
        }
    }

    @Test func exportPrintsJSONOrderedByID() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let result = run(["export", snapshot])
            #expect(result.status == 0, "\(result)")
            let exported = tables(of: try parseJSON(result.stdout))
            let original = tables(of: try parseJSON(libraryJSON))
            #expect(Set(exported.keys) == ["authors", "books", "genres"])
            for (name, records) in original {
                #expect(exported[name] == sortedByID(records), "table \(name)")
            }
            #expect(exported["authors"]?.map { $0["id"] } == [.integer(1), .integer(2)])
            #expect(exported["genres"]?.map { $0["id"] } == [.string("fantasy"), .string("novel"), .string("sf")])
        }
    }

    @Test func exportWritesAFileAndAnNDJSONDirectory() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let stdout = run(["export", snapshot]).stdout

            let file = scratch.path("out.json")
            let toFile = run(["export", snapshot, "--output", file])
            #expect(toFile.status == 0, "\(toFile)")
            #expect(toFile.stdout.isEmpty)
            #expect(String(decoding: try scratch.read("out.json"), as: UTF8.self) == stdout)

            let directory = scratch.path("ndjson")
            let toDirectory = run(["export", snapshot, "--format", "ndjson", "--output", directory])
            #expect(toDirectory.status == 0, "\(toDirectory)")
            #expect(scratch.contents("ndjson") == [".entity-store-export", "authors.ndjson", "books.ndjson", "genres.ndjson"])
            let books = String(decoding: try scratch.read("ndjson/books.ndjson"), as: UTF8.self)
            let lines = books.split(separator: "\n").map(String.init)
            #expect(try lines.map { try parseJSON($0) } == tables(of: try parseJSON(stdout))["books"])
            #expect(!scratch.contents().contains { $0.contains(".tmp-") }, "\(scratch.contents())")
        }
    }

    @Test func inspectDescribesTables() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let text = run(["inspect", snapshot])
            #expect(text.status == 0, "\(text)")
            #expect(text.stdout.hasPrefix("\(snapshot): "))
            #expect(text.stdout.contains("table books"))
            #expect(text.stdout.contains("4 rows"))

            let result = run(["inspect", snapshot, "--json"])
            #expect(result.status == 0, "\(result)")
            let report = try parseJSON(result.stdout)
            #expect(report["path"] == .string(snapshot))
            #expect(report["formatVersion"] == .integer(Int64(Snapshot.formatVersion)))
            let size = try #require(report["size"]?.intValue)
            #expect(Int(size) == (try FileManager.default.attributesOfItem(atPath: snapshot)[.size] as? NSNumber)?.intValue)
            let described = try #require(report["tables"]?.arrayValue)
            var rows: [String: Int64] = [:], idKinds: [String: String] = [:]
            for table in described {
                let name = try #require(table["name"]?.stringValue)
                rows[name] = table["rows"]?.intValue
                idKinds[name] = table["idKind"]?.stringValue
                #expect(table["columns"]?.arrayValue != nil)
            }
            #expect(rows == ["authors": 2, "books": 4, "genres": 3])
            #expect(idKinds["authors"] != idKinds["genres"], "integer and string ids should be told apart: \(idKinds)")
        }
    }

    @Test func inspectShowsDeclaredIndexesAndRelations() throws {
        try withScratch { scratch in
            let input = try scratch.write("library.json", libraryJSON)
            let snapshot = scratch.path("library.sqlite")
            let imported = run([
                "import", input, "--output", snapshot, "--index", "books.year=ordered", "--relation", "books.author=authors:cascade",
            ])
            #expect(imported.status == 0, "\(imported)")
            let report = try parseJSON(run(["inspect", snapshot, "--json"]).stdout)
            let books = try #require(report["tables"]?.arrayValue?.first { $0["name"] == .string("books") })
            #expect(books["indexes"]?.arrayValue?.contains { $0["field"] == .string("year") && $0["kind"] == .string("ordered") } == true)
            #expect(books["relations"]?.arrayValue?.contains {
                $0["field"] == .string("author") && $0["target"] == .string("authors") && $0["onDelete"] == .string("cascade")
            } == true)
            #expect(run(["verify", snapshot]).status == 0)
        }
    }

    @Test func verifyPrintsOneOKLine() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let result = run(["verify", snapshot])
            #expect(result.status == 0, "\(result)")
            #expect(result.outputLines.count == 1)
            #expect(result.stdout.hasPrefix("OK"))
            #expect(result.stdout.contains("3 tables, 9 rows"), "\(result)")
        }
    }

    @Test func queryByIDWhereCountLimitAndJSON() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)

            let byID = run(["query", snapshot, "books", "--id", "11"])
            #expect(byID.status == 0, "\(byID)")
            #expect(byID.outputLines.count == 1)
            #expect(try parseJSON(byID.stdout)["title"] == .string("Septology"))

            let byStringID = run(["query", snapshot, "genres", "--id", "sf"])
            #expect(try parseJSON(byStringID.stdout)["label"] == .string("Science fiction"), "\(byStringID)")

            // An integer VALUE matches integers; a string can never match a field of
            // integers, which is said rather than answered with 0.
            let byAuthor = run(["query", snapshot, "books", "--where", "author=2"])
            #expect(byAuthor.status == 0, "\(byAuthor)")
            #expect(try byAuthor.outputLines.map { try parseJSON($0)["id"] } == [.integer(10), .integer(12), .integer(13)])
            expectFailure(run(["query", snapshot, "books", "--where", "author=\"2\"", "--count"]), mentioning: ["field 'author' holds numbers"])

            let both = run(["query", snapshot, "books", "--where", "author=2", "--where", "genre=sf", "--json"])
            let array = try #require(try parseJSON(both.stdout).arrayValue, "\(both)")
            #expect(array.map { $0["id"] } == [.integer(10), .integer(13)])

            // Numbers compare by value: 4 matches 4.0; 4.5 is not 4.
            #expect(run(["query", snapshot, "books", "--where", "rating=4.5", "--count"]).stdout == "2\n")
            #expect(run(["query", snapshot, "books", "--where", "rating=4", "--count"]).stdout == "1\n")
            #expect(run(["query", snapshot, "books", "--where", "rating=4.0", "--count"]).stdout == "1\n")

            let count = run(["query", snapshot, "books", "--count"])
            #expect(count.status == 0, "\(count)")
            #expect(count.stdout == "4\n")

            let limited = run(["query", snapshot, "books", "--limit", "2"])
            #expect(try limited.outputLines.map { try parseJSON($0)["id"] } == [.integer(10), .integer(11)])

            // A missing id is an error; conditions that match nothing are an empty answer.
            expectFailure(run(["query", snapshot, "books", "--id", "99"]), mentioning: ["no record with id 99 in 'books'"])
            #expect(run(["query", snapshot, "books", "--where", "author=12345", "--json"]).stdout == "[]\n")
        }
    }

    @Test func diffOfIdenticalSnapshots() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let result = run(["diff", snapshot, snapshot])
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "no differences\n")
        }
    }

    @Test func migrateACurrentSnapshot() throws {
        try withScratch { scratch in
            let snapshot = try importLibrary(scratch)
            let before = try scratch.read("library.sqlite")
            let result = run(["migrate", snapshot])
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == "\(snapshot) is already at format version \(Snapshot.formatVersion)\n")
            #expect(run(["verify", snapshot]).status == 0)
            #expect(try scratch.read("library.sqlite").count == before.count)
        }
    }
}

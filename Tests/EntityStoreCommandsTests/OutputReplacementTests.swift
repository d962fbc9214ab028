import EntityStoreTestSupport
import Foundation
import Testing

/// Imports `{"x": [{"id": 1}]}` as `other.sqlite`: a snapshot whose export differs from the library's.
func importOther(_ scratch: Scratch, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let input = try scratch.write("other.json", #"{"x": [{"id": 1}]}"#)
    let snapshot = scratch.path("other.sqlite")
    let result = run(["import", input, "--output", snapshot])
    #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
    return snapshot
}

/// The files of an ndjson export of the library snapshot, and of `other.sqlite`.
let libraryExport = [".entity-store-export", "authors.ndjson", "books.ndjson", "genres.ndjson"]
let otherExport = [".entity-store-export", "x.ndjson"]

@Suite("Outputs: replaced only when safe, always whole, permissions kept", .threadsOfItsOwn)
struct OutputReplacementTests {
    @Test func aTrailingSlashReplacesThePreviousExportBesideIt() throws {
        try withScratch { scratch in
            let library = try importLibrary(scratch)
            let other = try importOther(scratch)
            let first = run(["export", library, "--format", "ndjson", "--output", scratch.path("photos") + "/"])
            #expect(first.status == 0, "\(first)")
            #expect(scratch.contents("photos") == libraryExport)
            let again = run(["export", other, "--format", "ndjson", "--output", scratch.path("photos") + "/", "--force"])
            #expect(again.status == 0, "\(again)")
            #expect(scratch.contents("photos") == otherExport)
            #expect(String(decoding: try scratch.read("photos/x.ndjson"), as: UTF8.self) == "{\"id\":1}\n")
            expectNoLeftovers(scratch, expected: ["library.json", "library.sqlite", "other.json", "other.sqlite", "photos"])
        }
    }

    @Test func anUnrelatedDirectoryIsNeverReplaced() throws {
        try withScratch { scratch in
            let library = try importLibrary(scratch)
            try scratch.write("photos/cat.jpg", "meow")
            try scratch.write("photos/album/dog.jpg", "woof")
            for output in [scratch.path("photos"), scratch.path("photos") + "/"] {
                let result = run(["export", library, "--format", "ndjson", "--output", output, "--force"])
                expectFailure(result, mentioning: ["photos", "marker"])
            }
            #expect(scratch.contents("photos") == ["album", "cat.jpg"])
            #expect(try scratch.read("photos/cat.jpg") == Data("meow".utf8))
            #expect(try scratch.read("photos/album/dog.jpg") == Data("woof".utf8))

            // A previous export that someone added a file to is not replaced either.
            let export = scratch.path("export")
            #expect(run(["export", library, "--format", "ndjson", "--output", export]).status == 0)
            try scratch.write("export/notes.txt", "mine")
            expectFailure(run(["export", library, "--format", "ndjson", "--output", export, "--force"]), mentioning: ["notes.txt"])
            #expect(scratch.contents("export") == (libraryExport + ["notes.txt"]).sorted())
            expectNoLeftovers(scratch, expected: ["export", "library.json", "library.sqlite", "photos"])
        }
    }

    @Test func aPreviousExportIsReplaced() throws {
        try withScratch { scratch in
            let library = try importLibrary(scratch)
            let other = try importOther(scratch)
            let export = scratch.path("export")
            #expect(run(["export", library, "--format", "ndjson", "--output", export]).status == 0)
            #expect(scratch.contents("export") == libraryExport)
            expectFailure(run(["export", other, "--format", "ndjson", "--output", export]), mentioning: ["export", "--force"])
            #expect(scratch.contents("export") == libraryExport)
            let replaced = run(["export", other, "--format", "ndjson", "--output", export, "--force"])
            #expect(replaced.status == 0, "\(replaced)")
            #expect(scratch.contents("export") == otherExport)
            // And back: the replacement is an export in turn.
            #expect(run(["export", library, "--format", "ndjson", "--output", export, "--force"]).status == 0)
            #expect(scratch.contents("export") == libraryExport)
            let reimported = run(["import", export, "--output", scratch.path("again.sqlite")])
            #expect(reimported.status == 0, "\(reimported)")
            #expect(run(["diff", library, scratch.path("again.sqlite")]).stdout == "no differences\n")
            expectNoLeftovers(scratch, expected: ["again.sqlite", "export", "library.json", "library.sqlite", "other.json", "other.sqlite"])
        }
    }

    @Test func filesAndLinksAreNotReplacedByAnNDJSONExport() throws {
        try withScratch { scratch in
            let library = try importLibrary(scratch)
            #expect(run(["export", library, "--format", "ndjson", "--output", scratch.path("export")]).status == 0)
            try scratch.write("file.txt", "keep")
            try FileManager.default.createSymbolicLink(atPath: scratch.path("link"), withDestinationPath: "export")
            expectFailure(run(["export", library, "--format", "ndjson", "--output", scratch.path("file.txt"), "--force"]), mentioning: ["file.txt", "a regular file"])
            expectFailure(run(["export", library, "--format", "ndjson", "--output", scratch.path("link"), "--force"]), mentioning: ["link", "a symbolic link"])
            #expect(try scratch.read("file.txt") == Data("keep".utf8))
            #expect(isSymbolicLink(scratch.path("link")))
            #expect(scratch.contents("export") == libraryExport)
            // Nor is "." or "..": they name no entry a rename could replace.
            expectFailure(run(["export", library, "--format", "ndjson", "--output", ".", "--force"], in: scratch.url), mentioning: ["'.'"])
            expectNoLeftovers(scratch, expected: ["export", "file.txt", "library.json", "library.sqlite", "link"])
        }
    }

    @Test(arguments: [0o600, 0o660])
    func aReplacedFileKeepsItsPermissions(_ mode: Int) throws {
        let mode = mode_t(mode)
        try withScratch { scratch in
            let library = try importLibrary(scratch)
            let other = try scratch.write("other.json", #"{"x": [{"id": 1}]}"#)

            setPermissions(library, mode)
            let imported = run(["import", other, "--output", library, "--force"])
            #expect(imported.status == 0, "\(imported)")
            #expect(permissions(library) == mode, "import --force")
            #expect(run(["query", library, "x", "--count"]).stdout == "1\n")

            let json = try scratch.write("out.json", "old")
            setPermissions(json, mode)
            #expect(run(["export", library, "--output", json, "--force"]).status == 0)
            #expect(permissions(json) == mode, "export --force")
            #expect(try scratch.read("out.json") != Data("old".utf8))

            let export = scratch.path("export")
            #expect(run(["export", library, "--format", "ndjson", "--output", export]).status == 0)
            setPermissions(export + "/x.ndjson", mode)
            setPermissions(export, 0o750)
            #expect(run(["export", library, "--format", "ndjson", "--output", export, "--force"]).status == 0)
            #expect(permissions(export + "/x.ndjson") == mode, "export --format ndjson --force")
            #expect(permissions(export) == 0o750)

            // New files get the mode any new file gets.
            let reference = try scratch.write("reference", "")
            #expect(run(["export", library, "--output", scratch.path("new.json")]).status == 0)
            #expect(permissions(scratch.path("new.json")) == permissions(reference))
        }
    }

    @Test func aDanglingSymbolicLinkIsAnExistingOutput() throws {
        try withScratch { scratch in
            let library = try importLibrary(scratch)
            let input = scratch.path("library.json")
            for name in ["s.sqlite", "out.json", "dir"] {
                try FileManager.default.createSymbolicLink(atPath: scratch.path(name), withDestinationPath: "missing-" + name)
            }
            expectFailure(run(["import", input, "--output", scratch.path("s.sqlite")]), mentioning: ["s.sqlite", "--force"])
            expectFailure(run(["export", library, "--output", scratch.path("out.json")]), mentioning: ["out.json", "--force"])
            expectFailure(run(["export", library, "--format", "ndjson", "--output", scratch.path("dir")]), mentioning: ["dir", "--force"])
            expectFailure(run(["demo", "--size", "100", "--keep", scratch.path("s.sqlite"), "--quiet"]), mentioning: ["s.sqlite", "--force"])
            for name in ["s.sqlite", "out.json", "dir"] {
                #expect(isSymbolicLink(scratch.path(name)), "\(name) must still be the link")
            }
            // With --force a file output replaces the link itself, never its target.
            #expect(run(["import", input, "--output", scratch.path("s.sqlite"), "--force"]).status == 0)
            #expect(!isSymbolicLink(scratch.path("s.sqlite")))
            #expect(run(["verify", scratch.path("s.sqlite")]).status == 0)
            expectNoLeftovers(scratch, expected: ["dir", "library.json", "library.sqlite", "out.json", "s.sqlite"])
        }
    }
}

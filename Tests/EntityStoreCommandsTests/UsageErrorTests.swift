import EntityStoreTestSupport
import Foundation
import Testing

/// Mistakes people make at the command line: misspelt fields, missing ids, references to
/// nothing, odd numbers, files that are not snapshots. Each gets one line naming it.
@Suite("Usage errors: named, never a silent zero", .threadsOfItsOwn)
struct UsageErrorTests {
    static let dataset = #"""
        {"flights": [{"id": 1, "carrier": "UA", "tailnum": "N1"}, {"id": 2, "carrier": "AA", "tailnum": "N9"},
                     {"id": 3, "carrier": "UA", "tailnum": null}, {"id": 4, "carrier": "B6"}],
         "planes": [{"id": "N1", "seats": 150}]}
        """#

    @Test func anUnknownWhereFieldNamesTheTableFields() throws {
        try withScratch { scratch in
            let snapshot = try importDataset(scratch, extra: ["--allow-dangling"])
            let result = run(["query", snapshot, "flights", "--where", "nosuch=1"])
            expectFailure(result, mentioning: ["nosuch", "flights", "carrier", "tailnum"])
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func aMissingIDFailsWithItsName() throws {
        try withScratch { scratch in
            let snapshot = try importDataset(scratch, extra: ["--allow-dangling"])
            expectFailure(run(["query", snapshot, "flights", "--id", "999999"]), mentioning: ["no record with id 999999 in 'flights'"])
            let found = run(["query", snapshot, "flights", "--id", "2"])
            #expect(found.status == 0 && found.stdout.contains("\"AA\""), "\(found)")
        }
    }

    @Test func aMissingTableListsTheTables() throws {
        try withScratch { scratch in
            let snapshot = try importDataset(scratch, extra: ["--allow-dangling"])
            expectFailure(run(["query", snapshot, "flight"]), mentioning: ["no table 'flight'", "'flights'", "'planes'"])
        }
    }

    @Test func aNegativeLimitIsExplained() throws {
        try withScratch { scratch in
            let snapshot = try importDataset(scratch, extra: ["--allow-dangling"])
            let result = run(["query", snapshot, "flights", "--limit", "-1"])
            #expect(result.status == 64, "\(result)")
            #expect(result.stderr.contains("--limit -1"), "\(result)")
        }
    }

    @Test(arguments: [["--index", "flights.nosuch=grouped"], ["--relation", "flights.nosuch=planes"]])
    func anIndexOrRelationOnAMissingFieldIsRefused(_ option: [String]) throws {
        try withScratch { scratch in
            let input = try scratch.write("data.json", Self.dataset)
            let result = run(["import", input, "--output", scratch.path("out.sqlite")] + option)
            expectFailure(result, mentioning: ["nosuch", "carrier"])
            #expect(!scratch.exists("out.sqlite"))
        }
    }

    @Test func danglingReferencesFailTheImportUnlessAllowed() throws {
        try withScratch { scratch in
            let input = try scratch.write("data.json", Self.dataset)
            let refused = run(["import", input, "--output", scratch.path("out.sqlite"), "--relation", "flights.tailnum=planes"])
            // N9 is missing; null and absent reference nothing.
            expectFailure(refused, mentioning: ["1 'flights' record", "'planes'", "'tailnum'", "first: 2", "--allow-dangling"])
            #expect(!scratch.exists("out.sqlite"))
            let allowed = run(["import", input, "--output", scratch.path("out.sqlite"), "--relation", "flights.tailnum=planes", "--allow-dangling"])
            #expect(allowed.status == 0, "\(allowed)")
        }
    }

    /// Import and verify count the same references as dangling: integers and strings that
    /// name no record (the string "7" is not the id 7), never null, absent or double values.
    @Test func importAndVerifyAgreeOnDanglingReferences() throws {
        try withScratch { scratch in
            let input = try scratch.write("refs.json", #"""
                {"owners": [{"id": 1}, {"id": 2}],
                 "pets": [{"id": 1, "owner": 1}, {"id": 2, "owner": 9}, {"id": 3, "owner": "1"}, {"id": 4, "owner": null},
                          {"id": 5}, {"id": 6, "owner": 2.0}, {"id": 7, "owner": 2}, {"id": 8, "owner": "x"}]}
                """#)
            let refused = run(["import", input, "--output", scratch.path("r.sqlite"), "--relation", "pets.owner=owners"])
            expectFailure(refused, mentioning: ["3 'pets' records", "first: 2, 3, 8"])
            #expect(run(["import", input, "--output", scratch.path("r.sqlite"), "--relation", "pets.owner=owners", "--allow-dangling"]).status == 0)
            let verified = run(["verify", scratch.path("r.sqlite")])
            #expect(verified.status == 0, "\(verified)")
            #expect(verified.stdout.contains("note: table 'pets': 3 rows reference missing 'owners' rows through 'owner' (first ids: 2, 3, 8)"), "\(verified)")
        }
    }

    @Test func aFileThatIsNotSQLiteIsNotCalledDamaged() throws {
        try withScratch { scratch in
            let text = try scratch.write("notes.txt", String(repeating: "just some text\n", count: 200))
            for command in [["inspect", text], ["query", text, "t"], ["export", text]] {
                let result = run(command)
                expectFailure(result, mentioning: ["not an EntityStore snapshot", "not an SQLite database"])
                #expect(!result.stderr.contains("damaged"), "\(result)")
            }
        }
    }

    @Test func aFIFOIsRefusedWithoutWaiting() throws {
        try withScratch { scratch in
            let fifo = scratch.path("pipe")
            #expect(mkfifo(fifo, 0o600) == 0)
            for command in [["inspect", fifo], ["query", fifo, "t"], ["verify", fifo]] {
                expectFailure(run(command, timeout: .seconds(60)), mentioning: ["a FIFO"])
            }
        }
    }

    @Test func versionAndExamples() throws {
        let version = run(["--version"])
        #expect(version.status == 0 && version.stdout.contains("snapshot format"), "\(version)")
        for command in ["import", "export", "inspect", "verify", "query", "shell", "diff", "migrate", "demo"] {
            let help = run([command, "--help"])
            #expect(help.status == 0 && help.stdout.contains("Example: entity-store \(command)"), "\(command): \(help)")
        }
    }

    private func importDataset(_ scratch: Scratch, extra: [String] = []) throws -> String {
        let input = try scratch.write("data.json", Self.dataset)
        let snapshot = scratch.path("data.sqlite")
        let result = run(["import", input, "--output", snapshot, "--relation", "flights.tailnum=planes"] + extra)
        #expect(result.status == 0, "\(result)")
        return snapshot
    }
}

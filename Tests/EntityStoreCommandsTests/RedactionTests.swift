@testable import EntityStoreCommands
import EntityStoreTestSupport
import Foundation
import Testing

/// Arguments that carry a password (each holds "CRET"): URLs with any scheme (misspelled
/// ones read as file names), `password=` in a URL query or a libpq keyword string.
private let credentialArguments = [
    "postgress://me:SECRET@host/db", "postgre://me:SECRET@host/db", "pg://me:SECRET@host:5432/db",
    "http://me:SECRET@host/db", "POSTGRESS://me:SECRET@host/db?sslmode=require", "postgress://me:SE@CRET@host/db",
    "postgress://:SECRET@host", "postgress://me@host/db?password=SECRET&schema=s",
    "host=x password=SECRET dbname=y", "host=x password='my SECRET' dbname=y", "host=x&password=SECRET",
]

/// Passwords with a space, which only their arguments tell apart from the words after them.
private let spacedCredentialArguments = ["postgress://me:my SECRET@host/db", "postgres://me@host/db?password=my SECRET&schema=s"]

/// Whether `text` shows any part of the password of ``credentialArguments``.
private func leaks(_ text: String) -> Bool { text.contains("CRET") }

@Suite("Redaction: no password in a message")
struct RedactionTests {
    @Test(arguments: [
        ("no snapshot file at 'postgress://me:SECRET@host/db'", "no snapshot file at 'postgress://me:***@host/db'"),
        ("'pg://u:SECRET@h/a': the directory 'pg://u:SECRET@h' does not exist", "'pg://u:***@h/a': the directory 'pg://u:***@h' does not exist"),
        ("at http://me:SE@CRET@host/db now", "at http://me:***@host/db now"),
        ("x://:SECRET@h", "x://:***@h"),
        ("see 'postgres://u@h/db?sslmode=require&password=SECRET&schema=s'", "see 'postgres://u@h/db?sslmode=require&password=***&schema=s'"),
        ("file 'host=x password=SECRET dbname=y'", "file 'host=x password=*** dbname=y'"),
        ("file 'host=x&password=SECRET'", "file 'host=x&password=***'"),
        ("file host=x password = 'my \\' SECRET' dbname=y", "file host=x password = *** dbname=y"),
        ("PGPASSWORD=SECRET psql", "PGPASSWORD=*** psql"),
        ("password=it's-SECRET", "password=***"),
    ])
    func hidesEveryForm(_ text: String, _ expected: String) {
        #expect(Redaction.redacted(text, arguments: []) == expected)
    }

    @Test(arguments: [
        "postgres://me@host:5432/db?schema=s", "no snapshot file at 'flights.sqlite'", "http://[::1]:8080/x",
        "a user@host and a time 12:30", "",
    ])
    func leavesTheRestAlone(_ text: String) {
        #expect(Redaction.redacted(text, arguments: []) == text)
    }

    @Test func anArgumentsPasswordIsHiddenEvenWithASpace() {
        let argument = "postgress://me:my SECRET@host/db"
        let text = "no snapshot file at '\(argument)'; the directory 'postgress://me:my SECRET@host' does not exist"
        let redacted = Redaction.redacted(text, arguments: ["entity-store", "inspect", argument])
        #expect(redacted == "no snapshot file at 'postgress://me:***@host/db'; the directory 'postgress://me:***@host' does not exist")
        let query = "postgres://me@host/db?password=my SECRET&schema=s"
        #expect(Redaction.redacted("at '\(query)'", arguments: [query]) == "at 'postgres://me@host/db?password=***&schema=s'")
    }

    @Test("a failure's message is redacted before it is cut", arguments: credentialArguments)
    func aCommandFailureHidesIt(_ argument: String) throws {
        #expect(!leaks(CommandFailure("no snapshot file at '\(argument)'").message))
        // The cut falls just after the password, before the `@` that marks it.
        let end = try #require(argument.range(of: "CRET")).upperBound
        let prefix = String(repeating: "x", count: Echo.lineLimit - argument.distance(from: argument.startIndex, to: end))
        let failure = CommandFailure(prefix + argument)
        #expect(!leaks(failure.message), "\(failure.message)")
    }
}

@Suite("No password in what entity-store prints", .threadsOfItsOwn)
struct PasswordOutputTests {
    /// Every command given `argument` where it takes a snapshot, a file or a URL, and a
    /// stray extra argument for the argument parser's own message; each run when called.
    static func runs(_ argument: String, in scratch: Scratch) throws -> [() -> RunResult] {
        let input = try scratch.write("input.json", #"{"books": [{"id": 1, "title": "x"}]}"#)
        let out = scratch.path("out.sqlite")
        return [
            { run(["inspect", argument]) }, { run(["inspect", argument, "--json"]) }, { run(["verify", argument]) },
            { run(["push", argument]) }, { run(["push", out, argument]) }, { run(["pull", argument, "--output", out]) },
            { run(["query", argument, "books"]) }, { run(["export", argument]) }, { run(["diff", argument, out]) },
            { run(["shell", argument]) }, { run(["migrate", argument]) }, { run(["import", argument, "--output", out]) },
            { run(["import", input, "--output", argument + "/out.sqlite"]) }, { run(["verify", out, argument]) },
            { run(["inspect", argument, "--no-such-option"]) },
        ]
    }

    /// Every command for one argument of each form (a misspelt URL, a keyword string, the
    /// spaced ones); three commands in turn for the others, so each command meets several
    /// forms while the run spawns a third of the processes.
    static let cases: [(index: Int, argument: String)] = Array((credentialArguments + spacedCredentialArguments).enumerated())
        .map { ($0.offset, $0.element) }

    @Test(arguments: cases)
    func noErrorShowsThePassword(_ index: Int, _ argument: String) throws {
        try withScratch { scratch in
            let runs = try Self.runs(argument, in: scratch)
            let everyCommand = index == 0 || argument.hasPrefix("host=x password=SECRET") || spacedCredentialArguments.contains(argument)
            let chosen = everyCommand ? Array(runs.indices) : [index % runs.count, (index + 5) % runs.count, (index + 10) % runs.count]
            for result in chosen.map({ runs[$0]() }) {
                #expect(result.status != 0, "\(result)")
                #expect(!result.stderr.isEmpty)
                #expect(!leaks(result.stdout + result.stderr), "\(result)")
            }
        }
    }

    @Test func aSnapshotWhosePathLooksLikeAURLIsShownRedacted() throws {
        try withScratch { scratch in
            // "postgress://me:SECRET@host/db" is a relative path: directories "postgress:", "me:SECRET@host".
            try FileManager.default.createDirectory(atPath: scratch.path("postgress:/me:SECRET@host"), withIntermediateDirectories: true)
            let input = try scratch.write("input.json", #"{"books": [{"id": 1, "title": "x"}]}"#)
            let path = "postgress://me:SECRET@host/db"
            let results = [
                run(["import", input, "--output", path], in: scratch.url), run(["verify", path], in: scratch.url),
                run(["inspect", path], in: scratch.url), run(["inspect", path, "--json"], in: scratch.url),
                run(["migrate", path], in: scratch.url),
            ]
            for result in results {
                #expect(result.status == 0, "\(result)")
                #expect(result.stdout.contains("postgress://me:***@host/db"), "\(result)")
                #expect(!leaks(result.stdout + result.stderr), "\(result)")
            }
        }
    }
}

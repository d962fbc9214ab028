import ArgumentParser
import EntityStore
import EntityStoreSQLite
import Foundation
import StoreCore
import Synchronization

/// `entity-store demo`: builds a realistic normalized dataset in memory and shows the
/// store at work: bulk load, indexed queries, derived queries, cascading deletes.
public struct DemoCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Generate a normalized dataset in memory and show indexes, queries and derived queries at work.",
        discussion: "Example: entity-store demo --size 10000")

    /// The number of entities to generate.
    @Option(name: .long, help: "Number of entities to generate (authors, books and reviews together).")
    public var size: Int = 300_000

    /// Where to keep the snapshot; a temporary file by default.
    @Option(name: .long, help: "Keep the snapshot at this path (by default it goes to a temporary file, removed afterwards).")
    public var keep: String?

    /// Whether `--keep` may replace an existing file.
    @Flag(help: "Replace the --keep file if it exists.")
    public var force = false

    /// No progress bars.
    @Flag(help: "No progress bars.")
    public var quiet = false

    public init() {}

    public mutating func validate() throws {
        guard size >= 100 else { throw ValidationError("--size must be at least 100") }
    }

    public func run() throws {
        if let keep { try OutputFile.checkWritable(keep, force: force) }
        typealias D = DemoDataset
        let clock = ContinuousClock()
        let data = D.generate(size: size)
        let store = EntityStore(schema: try D.schema())
        let total = data.authors.count + data.books.count + data.reviews.count

        let loadTime = try clock.measure {
            try store.write("load") { tx in
                try tx[D.authors].insert(contentsOf: data.authors)
                try tx[D.books].insert(contentsOf: data.books)
                try tx[D.reviews].insert(contentsOf: data.reviews)
            }
        }
        CommandOutput.print("Loaded \(total) entities (\(data.authors.count) authors, \(data.books.count) books, \(data.reviews.count) reviews) in one transaction: \(format(loadTime)), \(rate(total, loadTime)) entities/s")

        let state = store.state
        let author = data.books[0].authorID
        var byAuthor: [D.Book] = []
        let groupedTime = clock.measure { byAuthor = state[D.books].filter(\.authorID, equals: author) }
        CommandOutput.print("Grouped index: author \(author) has \(byAuthor.count) books (\(format(groupedTime)))")
        let isbn = data.books[data.books.count / 2].isbn
        var found: D.Book?
        let uniqueTime = clock.measure { found = state[D.books].first(where: \.isbn, equals: isbn) }
        CommandOutput.print("Unique index: ISBN \(isbn) is \"\(found?.title ?? "missing")\" (\(format(uniqueTime)))")
        var top: [D.Book] = []
        let topTime = clock.measure { top = state[D.books].sorted(by: \.rating, descending: true, limit: 3) }
        CommandOutput.print("Ordered index: top 3 by rating \(top.map { "\($0.id) (\($0.rating))" }.joined(separator: ", ")) (\(format(topTime)))")
        let nineties = state[D.books].query().where(\.year, in: 1990..<2000)
        CommandOutput.print("Range query: \(nineties.count) books from the 1990s via \(nineties.plan)")

        // Derived queries: one per book, each woken only by its own entity.
        let watched = min(data.books.count, 100_000)
        let derived = (0..<watched).map { store.derived(D.books, id: data.books[$0].id) }
        let authorBooks = store.derived(D.books, where: \.authorID, equals: author)
        let notified = Atomic<Int>(0)
        let observation = derived[0].observe { _, _ in notified.add(1, ordering: .relaxed) }
        let updateTime = try clock.measure {
            try store.write("rate") { tx in _ = try tx[D.books].update(data.books[0].id) { $0.rating = 5 } }
        }
        let woken = derived.reduce(0) { $0 + $1.recomputations }
        CommandOutput.print("Derived: \(watched) live derived queries; one update (\(format(updateTime))) woke \(woken) of them, notified \(notified.load(ordering: .relaxed)) observer")
        observation.cancel()

        // Snapshot to SQLite while the store is live, restore into a fresh store, compare.
        let path = keep ?? (NSTemporaryDirectory() as NSString).appendingPathComponent("entity-store-demo-\(UUID().uuidString).sqlite")
        defer { if keep == nil { try? FileManager.default.removeItem(atPath: path) } }
        let writeBar = ProgressBar("snapshot", quiet: quiet)
        let written = try reportingFailures(path) {
            try OutputFile.writingSnapshot(to: path) {
                try store.snapshot(to: path, options: SnapshotOptions(progress: { writeBar.update($0.rowsDone, of: $0.totalRows) }))
            }
        }
        writeBar.finish()
        printEscaped("Snapshot: \(written.rowCount) rows to \(keep ?? "a temporary file"), \(written.fileSize / 1024) KiB in \(format(written.duration)), \(rate(written.rowCount, written.duration)) rows/s")
        let restored = EntityStore(schema: try D.schema())
        let readBar = ProgressBar("restore", quiet: quiet)
        let read = try reportingFailures(path) {
            try restored.restore(from: path, options: SnapshotOptions(progress: { readBar.update($0.rowsDone, of: $0.totalRows) }))
        }
        readBar.finish()
        let original = store.state, copy = restored.state
        let equal = Self.equal(original[D.authors], copy[D.authors]) && Self.equal(original[D.books], copy[D.books])
            && Self.equal(original[D.reviews], copy[D.reviews])
        CommandOutput.print("Restore: \(read.rowCount) rows in \(format(read.duration)), \(rate(read.rowCount, read.duration)) rows/s, indexes rebuilt; restored store \(equal ? "equals" : "DIFFERS FROM") the original")
        let report = Snapshot.verify(at: path)
        CommandOutput.print("Verify: \(report.isSound ? "the snapshot is sound" : report.problems.joined(separator: "; "))")

        let reviewsBefore = store.state[D.reviews].count
        let deleteTime = try clock.measure {
            try store.write("delete author") { tx in _ = try tx[D.authors].remove(author) }
        }
        let after = store.state
        CommandOutput.print("Cascade: deleting author \(author) removed \(byAuthor.count) books and \(reviewsBefore - after[D.reviews].count) reviews (\(format(deleteTime))); the author's derived book list now has \(authorBooks.value.count)")
        let problems = after.invariantViolations() + copy.invariantViolations()
        CommandOutput.print(problems.isEmpty ? "Invariants: all indexes agree with their tables." : "Invariants: \(problems.count) problems: \(problems.prefix(3))")
        guard problems.isEmpty, equal, report.isSound else { throw CommandFailure("the demo found a problem (see above)") }
        CommandOutput.print("Summary: \(total) entities, load \(rate(total, loadTime)) entities/s, snapshot \(written.fileSize / 1024) KiB at \(rate(written.rowCount, written.duration)) rows/s, restore \(rate(read.rowCount, read.duration)) rows/s")
        #if DEBUG
        CommandOutput.print("(This is a debug build; `swift run -c release entity-store demo` shows representative speed.)")
        #endif
    }

    /// Whether two views hold the same entities.
    private static func equal<E: Entity>(_ lhs: TableView<E>, _ rhs: TableView<E>) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { rhs.find($0.id) == $0 }
    }

    private func format(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds >= 1 { return "\((seconds * 100).rounded() / 100) s" }
        if seconds >= 1e-3 { return "\((seconds * 1e5).rounded() / 100) ms" }
        return "\((seconds * 1e8).rounded() / 100) µs"
    }

    private func rate(_ count: Int, _ duration: Duration) -> Int {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return seconds > 0 ? Int(Double(count) / seconds) : count
    }
}

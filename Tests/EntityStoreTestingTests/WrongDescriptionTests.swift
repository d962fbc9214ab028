import EntityStoreTestSupport
import EntityStore
import EntityStoreTesting
import Foundation
import Testing

/// Descriptions that are wrong in ways a comparison of rows alone let pass: a table named
/// by a type the store declares under another name, a row the write removed reached by
/// optional chaining, NaN, several commits. Each must fail, and the right description
/// must still pass.
@Suite("Wrong descriptions fail")
struct WrongDescriptionTests {
    struct Priced: Entity {
        var id: Int
        var title: String
        var price: Double
        var published: Date
    }

    static let priced = Table<Priced>("priced")

    static func pricedStore() throws -> EntityStore {
        let store = try EntityStore { priced }
        try store.write { tx in
            try tx[priced].insert(contentsOf: [
                Priced(id: 10, title: "a", price: 10.5, published: Date(timeIntervalSince1970: 1_700_000_000)),
                Priced(id: 11, title: "b", price: .nan, published: Date(timeIntervalSince1970: 1_700_000_000)),
            ])
        }
        return store
    }

    @Test("the type subscript finds the table declared for the type, whatever its name")
    func typeSubscriptFindsTheDeclaredTable() throws {
        let store = try Self.pricedStore()
        for exhaustivity in [Exhaustivity.exhaustive, .nonExhaustive] {
            var line = 0
            let wrong = try withRecordedFailures {
                line = lineAfter()
                try store.assertWrite(exhaustivity) { tx in _ = try tx[Self.priced].update(10) { $0.price = 10.5 + 1 } } expected: {
                    $0[Priced.self][10]?.price = 11
                }
            }
            #expect(try #require(wrong.single(at: line)).message.contains("priced 10: differs from the description"), "\(exhaustivity)")
            let right = try withRecordedFailures {
                try store.assertWrite(exhaustivity) { tx in _ = try tx[Self.priced].update(10) { $0.price = 13 } } expected: {
                    $0[Priced.self][10]?.price = 13
                }
            }
            #expect(right.isEmpty, "\(exhaustivity): \(right)")
        }
    }

    @Test("a table the store does not have, or a type it holds in several tables, fails naming the store's tables")
    func unknownTables() throws {
        let store = try Self.pricedStore()
        var line = 0
        let unknown = try withRecordedFailures {
            line = lineAfter()
            try store.assertWrite(.nonExhaustive) { tx in _ = try tx[Self.priced].update(10) { $0.title = "x" } } expected: {
                $0[Table<Priced>("novels")][10]?.title = "x"
            }
        }
        #expect(try #require(unknown.single(at: line)).message.contains("the table 'novels', which the store does not have (its tables: priced)"))
        let twice = try EntityStore { Self.priced; Table<Priced>("archive") }
        let ambiguous = try withRecordedFailures {
            line = lineAfter()
            try twice.assertWrite(.nonExhaustive) { tx in try tx[Self.priced].insert(Priced(id: 1, title: "", price: 0, published: Date())) } expected: {
                $0[Priced.self][1] = nil
            }
        }
        let ambiguity = try #require(ambiguous.first)
        #expect(ambiguity.location.line == line && ambiguity.location.fileID.hasSuffix("/WrongDescriptionTests.swift"), "\(ambiguous)")
        #expect(ambiguity.message.contains("several tables hold Priced (priced, archive)"))
        let changeSet = try withRecordedFailures {
            line = lineAfter()
            try store.assertChangeSet { try store.write { tx in _ = try tx[Self.priced].remove(10) } } expected: {
                $0[Table<Priced>("novels")].removed = [10]
            }
        }
        #expect(try #require(changeSet.single(at: line)).message.contains("the table 'novels', which the store does not have"))
        let byType = try withRecordedFailures {
            try store.assertChangeSet { try store.write { tx in _ = try tx[Self.priced].remove(11) } } expected: {
                $0[Priced.self].removed = [11]
            }
        }
        #expect(byType.isEmpty, "\(byType)")
        // A write that changes nothing publishes nothing: the change set of the commit
        // before it is not this operation's.
        let nothing = try withRecordedFailures {
            line = lineAfter()
            try store.assertChangeSet { try store.write { tx in _ = try tx[Self.priced].remove(11) } } expected: {
                $0[Priced.self].removed = [11]
            }
        }
        #expect(nothing.single(at: line)?.message.contains("expected but not removed: [11]") == true, "\(nothing)")
    }

    @Test("optional chaining on a row the write removed, or never had, fails instead of doing nothing")
    func optionalChainingOnAbsentRows() throws {
        let store = try Self.pricedStore()
        var line = 0
        let removed = try withRecordedFailures {
            line = lineAfter()
            try store.assertWrite(.nonExhaustive) { tx in _ = try tx[Self.priced].remove(10) } expected: {
                $0[Self.priced][10]?.price = 10.5
            }
        }
        #expect(try #require(removed.single(at: line)).message.contains("the description changes priced 10, which the write removed"))
        let never = try withRecordedFailures {
            line = lineAfter()
            try store.assertWrite(.nonExhaustive) { tx in _ = try tx[Self.priced].update(11) { $0.title = "c" } } expected: {
                $0[Self.priced][11]?.title = "c"
                $0[Self.priced].update(99) { $0.title = "?" }
            }
        }
        #expect(try #require(never.single(at: line)).message.contains("the description changes priced 99, which the store does not have"))
        let described = try withRecordedFailures {
            try store.assertWrite(.nonExhaustive) { tx in _ = try tx[Self.priced].remove(11) } expected: {
                $0[Self.priced][11] = nil
            }
        }
        #expect(described.isEmpty, "\(described)")
    }

    @Test("a NaN in a field the write did not touch is the same NaN")
    func nanInAnUntouchedField() throws {
        let store = try Self.pricedStore()
        let failures = try withRecordedFailures {
            try store.assertWrite { tx in _ = try tx[Self.priced].update(11) { $0.title = "renamed" } } expected: {
                $0[Self.priced][11]?.title = "renamed"
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        var line = 0
        let wrong = try withRecordedFailures {
            line = lineAfter()
            try store.assertWrite { tx in _ = try tx[Self.priced].update(11) { $0.price = 1 } } expected: {
                $0[Self.priced][11]?.title = "renamed"
            }
        }
        let message = try #require(wrong.single(at: line)).message
        #expect(message.contains("price: expected nan, store has 1.0"), "\(message)")
    }

    @Test("a zero of the other sign is a change the description must name")
    func signedZero() throws {
        let store = try Self.pricedStore()
        try store.write { tx in _ = try tx[Self.priced].update(10) { $0.price = 0 } }
        var line = 0
        let failures = try withRecordedFailures {
            line = lineAfter()
            try store.assertWrite { tx in _ = try tx[Self.priced].update(10) { $0.price = -0.0 } } expected: { _ in }
        }
        #expect(try #require(failures.single(at: line)).message.contains("price: 0.0 → -0.0"), "\(failures)")
    }

    @Test("dates print in ISO 8601")
    func datesInISO8601() throws {
        let store = try Self.pricedStore()
        let failures = try withRecordedFailures {
            try store.assertWrite { tx in
                _ = try tx[Self.priced].update(10) { $0.published = Date(timeIntervalSince1970: 1_700_000_001.5) }
            } expected: { _ in }
        }
        let message = try #require(failures.single()).message
        #expect(message.contains("published: 2023-11-14T22:13:20.000Z → 2023-11-14T22:13:21.500Z"), "\(message)")
    }

    @Test("an app function of several commits is compared through the commits' change sets, both ways")
    func severalCommits() throws {
        let store = try EntityStore { Self.priced }
        try store.write { tx in
            try tx[Self.priced].insert(contentsOf: (0..<5_000).map { Priced(id: $0, title: "t\($0)", price: 1, published: Date(timeIntervalSince1970: 0)) })
        }
        func appFunction() throws {
            try store.write { tx in _ = try tx[Self.priced].update(7) { $0.price = 2 } }
            try store.write { tx in _ = try tx[Self.priced].update(8) { $0.price = 3 } }
            try store.write { tx in _ = try tx[Self.priced].update(8) { $0.price = 1 } }
            try store.write { tx in _ = try tx[Self.priced].remove(9) }
        }
        let right = try withRecordedFailures {
            try store.assertChanges(of: appFunction) { state in
                state[Self.priced][7]?.price = 2
                state[Self.priced].remove(9)
            }
        }
        #expect(right.isEmpty, "\(right)")
        var line = 0
        let wrong = try withRecordedFailures {
            line = lineAfter()
            try store.assertChanges(of: {
                try store.write { tx in _ = try tx[Self.priced].update(20) { $0.price = 2 } }
                try store.write { tx in _ = try tx[Self.priced].remove(21) }
            }) { state in
                state[Self.priced][20]?.price = 2
            }
        }
        #expect(try #require(wrong.single(at: line)).message.contains("priced 21: removed, but the description keeps it"))
    }
}

/// A failure reported off the test's task (a plain thread, an observer) is never lost:
/// a child run of this test binary fails when its only test passes but an assertion
/// failed on another thread.
@Suite("Failures off the test's task")
struct OffTaskReportingTests {
    static let probeVariable = "ENTITYSTORE_OFF_TASK_PROBE"

    /// Runs only in the child: fails an assertion on a plain thread and waits for it.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[Self.probeVariable] != nil))
    func offTaskProbe() throws {
        let store = try libraryStore()
        let thread = Thread {
            try? store.assertWrite { tx in _ = try tx[authors].update(1) { $0.name = "U" } } expected: { _ in }
        }
        thread.start()
        while !thread.isFinished { Thread.sleep(forTimeInterval: 0.001) }
    }

    @Test("the run fails and names the failure", .enabled(if: ProcessInfo.processInfo.environment[Self.probeVariable] == nil))
    func aFailureOffTheTestsTaskFailsTheRun() async throws {
        let (status, output) = try await runThisTestBinary(filter: "offTaskProbe", setting: Self.probeVariable)
        #expect(status != 0, "\(output)")
        #expect(output.contains("authors 1: updated, but the description does not change it"), "\(output)")
        #expect(output.contains("reported off the test's task"), "\(output)")
    }
}

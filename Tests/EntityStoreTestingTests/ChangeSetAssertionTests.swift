import EntityStore
import EntityStoreTesting
import Testing

@Suite("Change-set assertions")
struct ChangeSetAssertionTests {
    @Test("the IDs a write inserted, updated and removed, per table")
    func exact() throws {
        let store = try libraryStore()
        var failures = try withRecordedFailures {
            try store.assertChangeSet {
                try store.write { tx in
                    _ = try tx[authors].remove(1)
                    try tx[authors].insert(Author(id: 3, name: "Tove"))
                }
            } expected: { changes in
                changes[authors] = ExpectedTableChanges(inserted: [3], removed: [1])
                changes[books].removed = [10, 11]
                changes[books].updated = [12]
            }
        }
        #expect(failures.isEmpty, "\(failures)")

        var line = 0
        failures = try withRecordedFailures {
            line = lineAfter()
            try store.assertChangeSet {
                try store.write { tx in _ = try tx[authors].remove(2) }
            } expected: { changes in
                changes[authors].removed = [2]
                changes[books].removed = [12, 13]
            }
        }
        let failure = try #require(failures.single())
        #expect(failure.location.line == line)
        #expect(failure.message.contains("books removed: expected but not removed: [13] (actual: [12])"), "\(failure.message)")
    }

    @Test("an unexpected table or ID fails exhaustively, not non-exhaustively")
    func exhaustivity() throws {
        let store = try libraryStore()
        let write = { try store.write { tx in _ = try tx[authors].update(2) { $0.name = "J" }; _ = try tx[books].update(10) { $0.year = 1 } } }
        var failures = try withRecordedFailures {
            try store.assertChangeSet(of: write) { changes in changes[authors].updated = [2] }
        }
        #expect(try #require(failures.single()).message.contains("books updated: updated but not expected: [10] (actual: [10])"))
        failures = try withRecordedFailures {
            try store.assertChangeSet(.nonExhaustive, of: { try store.write { tx in _ = try tx[authors].update(1) { $0.name = "U" }; _ = try tx[books].update(11) { $0.year = 2 } } }) { changes in
                changes[authors].updated = [1]
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("several commits are checked as their net change; an observer's change set directly")
    func severalCommitsAndObserved() throws {
        let store = try dynamicStore()
        let failures = try withRecordedFailures {
            try store.assertChangeSet {
                try store.write { tx in try tx[dynamicAuthors].insert(DynamicRecord(id: 3, fields: [:])) }
                try store.write { tx in _ = try tx[dynamicAuthors].remove(3); _ = try tx[dynamicBooks].remove("a") }
            } expected: { changes in
                changes[dynamicBooks].removed = ["a"]
            }
            try store.write { tx in _ = try tx[dynamicBooks].update("b") { $0.fields["year"] = 1 } }
            assertChangeSet(store.state.changeSet, schema: store.schema) { changes in
                changes[dynamicBooks].updated = ["b"]
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("an observer's change set described wrongly fails at the caller's line, naming table and IDs")
    func observedChangeSetFails() throws {
        let store = try libraryStore()
        try store.write { tx in _ = try tx[authors].remove(2) }
        let changeSet = store.state.changeSet
        var line = 0
        let failures = withRecordedFailures {
            line = lineAfter()
            assertChangeSet(changeSet, schema: store.schema) { changes in
                changes[authors].removed = [2]
            }
        }
        let message = try #require(failures.single(at: line)).message
        #expect(message.hasPrefix("the change set differs from the expected one:"), "\(message)")
        #expect(message.contains("books removed: removed but not expected: [12] (actual: [12])"), "\(message)")
        #expect(message.contains("books updated: updated but not expected: [11] (actual: [11])"), "\(message)")
    }
}

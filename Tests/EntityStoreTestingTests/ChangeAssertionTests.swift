import EntityStore
import EntityStoreTesting
import Testing

@Suite("Exhaustive change assertions on an EntityStore")
struct ChangeAssertionTests {
    @Test("a description of every change passes, cascade and nullified reference included")
    func exactDescriptionPasses() throws {
        let store = try libraryStore()
        let failures = try withRecordedFailures {
            try store.assertWrite { tx in
                _ = try tx[authors].remove(1)
            } expected: { state in
                state[authors].remove(1)
                state[books].remove([10, 11])
                state[books][12]?.editorID = nil
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("an unexpected cascade fails, naming the table, the ID and the delete rule, at the caller's line")
    func unexpectedCascade() throws {
        let store = try libraryStore()
        var line = 0
        let failures = try withRecordedFailures {
            line = lineAfter()
            try store.assertWrite { tx in
                _ = try tx[authors].remove(1)
            } expected: { state in
                state[authors].remove(1)
                state[books][12]?.editorID = nil
            }
        }
        let failure = try #require(failures.single())
        #expect(failure.location.line == line)
        #expect(failure.location.fileID.hasSuffix("ChangeAssertionTests.swift"))
        #expect(failure.message.contains("books 10: removed, but the description keeps it (a delete rule? 'books.authorID' cascades deletes from authors)"), "\(failure.message)")
        #expect(failure.message.contains("books 11: removed, but the description keeps it"), "\(failure.message)")
        #expect(!failure.message.contains("books 12"), "\(failure.message)")
    }

    @Test("a nullified reference nobody described fails, naming the field with old and new values")
    func unexpectedNullify() throws {
        let store = try libraryStore()
        let failures = try withRecordedFailures {
            try store.assertWrite { tx in
                _ = try tx[authors].remove(2)
            } expected: { state in
                state[authors].remove(2)
                state[books].remove(12)
            }
        }
        let message = try #require(failures.single()).message
        #expect(message.contains("books 11: updated, but the description does not change it"), "\(message)")
        #expect(message.contains("editorID: 2 → nil  [reference to authors, on delete nullify; nullified]"), "\(message)")
    }

    @Test("a field described wrongly fails with the expected, actual and previous values and the index that reads it")
    func wrongField() throws {
        let store = try libraryStore()
        let failures = try withRecordedFailures {
            try store.assertWrite { tx in
                _ = try tx[books].update(10) { $0.year = 1975 }
            } expected: { state in
                state[books][10]?.year = 1976
            }
        }
        let message = try #require(failures.single()).message
        #expect(message.contains("books 10: differs from the description"), "\(message)")
        #expect(message.contains("year: expected 1976, store has 1975 (was 1974)  [ordered index 'year']"), "\(message)")
    }

    @Test("a change described but not made fails: an insert, a removal, an update")
    func describedButNotMade() throws {
        let store = try libraryStore()
        let failures = withRecordedFailures {
            store.assertChanges {
            } expected: { state in
                state[authors].insert(Author(id: 3, name: "Tove"))
                state[books].remove(12)
                state[authors].update(1) { $0.name = "Ursula K. Le Guin" }
            }
        }
        let message = try #require(failures.single()).message
        #expect(message.contains("authors 3: the description inserts it, but the store does not have it: Author(id: 3, name: \"Tove\")"), "\(message)")
        #expect(message.contains("books 12: the description removes it, but the store still has it"), "\(message)")
        #expect(message.contains("name: expected \"Ursula K. Le Guin\", store has \"Ursula\""), "\(message)")
    }

    @Test("an insert nobody described fails")
    func unexpectedInsert() throws {
        let store = try libraryStore()
        let failures = try withRecordedFailures {
            try store.assertWrite { tx in
                try tx[authors].insert(Author(id: 3, name: "Tove"))
            } expected: { _ in }
        }
        #expect(try #require(failures.single()).message.contains("authors 3: inserted, but the description does not insert it: Author(id: 3, name: \"Tove\")"))
    }

    @Test("several commits (no single change set) are compared row by row")
    func severalCommits() throws {
        let store = try libraryStore()
        let failures = try withRecordedFailures {
            try store.assertChanges {
                try store.write { tx in _ = try tx[books].update(10) { $0.title = "A" } }
                try store.write { tx in _ = try tx[books].update(11) { $0.title = "B" } }
            } expected: { state in
                state[books][10]?.title = "A"
            }
        }
        let message = try #require(failures.single()).message
        #expect(message.contains("books 11: updated, but the description does not change it\n    title: \"The Lathe of Heaven\" → \"B\""), "\(message)")
    }

    @Test("non-exhaustive: only the fields the description sets are checked")
    func nonExhaustive() throws {
        let store = try libraryStore()
        var failures = try withRecordedFailures {
            try store.assertWrite(.nonExhaustive) { tx in
                _ = try tx[authors].remove(1)
            } expected: { state in
                state[books][12]?.editorID = nil
                state[books].remove(10)
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        failures = try withRecordedFailures {
            try store.assertWrite(.nonExhaustive) { tx in
                _ = try tx[books].update(12) { $0.title = "Septologien" }
            } expected: { state in
                state[books][12]?.year = 2020
                state[authors].remove(2)
            }
        }
        let message = try #require(failures.single()).message
        #expect(message.hasPrefix("the store does not hold what the description sets:"), "\(message)")
        #expect(message.contains("year: expected 2020, store has 2019"), "\(message)")
        #expect(message.contains("authors 2: the description removes it, but the store still has it"), "\(message)")
        #expect(!message.contains("title"), "\(message)")
    }

    @Test("on a dynamic store, fields are named as the records name them")
    func dynamicStore() throws {
        let store = try EntityStoreTestingTests.dynamicStore()
        var failures = try withRecordedFailures {
            try store.assertWrite { tx in
                _ = try tx[dynamicAuthors].remove(1)
                _ = try tx[dynamicBooks].update("b") { $0.fields["year"] = 2020 }
            } expected: { state in
                state[dynamicAuthors].remove(1)
                state[dynamicBooks].remove("a")
                state[dynamicBooks]["b"]?.fields["year"] = 2020
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        failures = try withRecordedFailures {
            try store.assertWrite { tx in
                _ = try tx[dynamicBooks].update("b") { $0.fields["year"] = 2021; $0.fields["note"] = "new" }
            } expected: { state in
                state[dynamicBooks]["b"]?.fields["year"] = 2022
            }
        }
        let message = try #require(failures.single()).message
        #expect(message.contains("works \"b\": differs from the description"), "\(message)")
        #expect(message.contains("year: expected 2022, store has 2021 (was 2020)  [ordered index 'year']"), "\(message)")
        #expect(message.contains("note: expected absent, store has \"new\""), "\(message)")
    }

    @Test("in Swift Testing the failure is an issue at the caller's line", .tags(.reporting))
    func swiftTestingIssue() throws {
        let store = try libraryStore()
        let line = #line + 2
        try withKnownIssue {
            try store.assertWrite { tx in _ = try tx[authors].update(1) { $0.name = "U" } } expected: { _ in }
        } matching: { issue in
            issue.sourceLocation?.line == line && issue.sourceLocation?.fileName == "ChangeAssertionTests.swift"
                && String(describing: issue).contains("authors 1: updated, but the description does not change it")
        }
    }
}

extension Tag {
    @Tag static var reporting: Self
}

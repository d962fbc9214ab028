import StoreCore
import Testing

@Suite("Commit checks")
struct CommitCheckTests {
    @Test("a commit check added after the store's creation rejects a commit, which leaves no trace, and sees each commit of a batch")
    func rejectsAndSeesBatches() throws {
        let store = Store(AppState())
        let seen = Recorder<String>()
        let check = store.addCommitCheck { previous, next, context in
            seen.append("\(context.name) \(previous.count)->\(next.count)")
            if next.count < 0 { throw Boom() }
        }
        let published = Recorder<UInt64>()
        let observation = store.observe { published.append($0.version) }
        try store.commit("up") { $0.count = 1 }
        #expect(throws: Boom.self) { try store.commit("down") { $0.count = -1 } }
        #expect(store.state.count == 1)
        #expect(published.values == [1])
        // Inside a batch, each commit is checked; one rejected commit fails the batch.
        #expect(throws: Boom.self) {
            try store.batch {
                try store.commit("b1") { $0.count = 2 }
                try store.commit("b2") { $0.count = -2 }
            }
        }
        #expect(store.state.count == 1)
        #expect(seen.values == ["up 0->1", "down 1->-1", "b1 1->2", "b2 2->-2"])
        // Cancelled, it checks nothing more.
        check.cancel()
        try store.commit("free") { $0.count = -5 }
        #expect(store.state.count == -5)
        #expect(seen.count == 4)
        observation.cancel()
    }
}

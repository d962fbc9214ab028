import StoreCore
import Testing

@Suite("Commit")
struct CommitTests {
    @Test func commitAppliesTheBodyBumpsTheVersionAndReturnsItsResult() throws {
        let store = Store(AppState())
        let result = try store.commit { state -> Int in
            state.count = 5
            return 42
        }
        #expect(result == 42)
        #expect(store.state.count == 5)
        #expect(store.version == 1)
    }

    @Test func aThrowingBodyLeavesNoTrace() {
        let store = Store(AppState())
        let seen = Recorder<UInt64>()
        let observation = store.observe { seen.append($0.version) }
        #expect(throws: Boom.self) {
            try store.commit { state in
                state.count = 99
                throw Boom()
            }
        }
        #expect(store.state == AppState())
        #expect(store.version == 0)
        #expect(seen.values.isEmpty)
        observation.cancel()
    }

    @Test func aCommitChangingNothingPublishesNothing() throws {
        let store = Store(AppState(count: 3))
        let seen = Recorder<UInt64>()
        let observation = store.observe { seen.append($0.version) }
        try store.commit { $0.count = 3 }
        #expect(store.version == 0)
        #expect(seen.values.isEmpty)
        try store.commit { $0.count = 4 }
        #expect(seen.values == [1])
        observation.cancel()
    }

    @Test func withoutEquatableEveryCompletedCommitIsAChange() throws {
        let store = Store(PlainState())
        let seen = Recorder<UInt64>()
        let observation = store.observe { seen.append($0.version) }
        try store.commit { _ in }
        try store.commit { $0.count += 1 }
        #expect(store.version == 2)
        #expect(seen.values == [1, 2])
        observation.cancel()
    }

    @Test func theVersionIsReadableInsideTheBodyAndTheContextNamesTheCommit() throws {
        let store = Store(AppState())
        try store.commit { $0.count = 1 }
        let (version, context) = try store.commit("rename", withContext: { state, context in
            state.name = "x"
            return (store.version, context)
        })
        #expect(version == 1)
        #expect(context.name == "rename")
        #expect(context.isContinuation == false)
        #expect(store.version == 2)
    }

    @Test func readingTheStateInsideTheBodySeesTheCommittedState() throws {
        let store = Store(AppState())
        let inside = try store.commit { state -> Int in
            state.count = 7
            return store.state.count
        }
        #expect(inside == 0)
        #expect(store.state.count == 7)
    }

    @Test func aNestedCommitIsRefusedWithoutDisturbingTheOuterOne() throws {
        let store = Store(AppState())
        try store.commit("outer") { state in
            state.count = 1
            #expect(throws: StoreError.nestedCommit(name: "inner")) {
                try store.commit("inner") { $0.name = "inner" }
            }
            #expect(throws: StoreError.nestedCommit(name: "batch")) {
                try store.batch { }
            }
        }
        #expect(store.state == AppState(count: 1))
        #expect(store.version == 1)
        #expect(StoreError.nestedCommit(name: "inner").description.contains("inner"))
        #expect(!StoreError.storeDeallocated.description.isEmpty)
    }

    @Test func changesHelpersReportWhatChanged() {
        let changes = Changes(
            previous: AppState(count: 1, name: "a"), current: AppState(count: 2, name: "a"), version: 3, name: "c")
        #expect(changes.hasChanges(\.count))
        #expect(!changes.hasChanges(\.name))
        let fired = Recorder<String>()
        changes.ifChanged(\.name) { fired.append("name \($0)") }
        changes.ifChanged(\.count) { fired.append("count \($0)") }
        changes.ifChanged(\.name, \.count) { name, count in fired.append("pair \(name)\(count)") }
        changes.ifChanged(\.name, \.nested) { _, _ in fired.append("unchanged pair") }
        changes.ifChanged(\.name, \.nested, \.count) { _, _, count in fired.append("triple \(count)") }
        changes.ifChanged(\.name, \.nested, \.nested.flag) { _, _, _ in fired.append("unchanged triple") }
        #expect(fired.values == ["count 2", "pair a2", "triple 2"])
        #expect(changes.scoped(\.count).previous == 1)
        #expect(changes.scoped(\.count).version == 3)
    }
}

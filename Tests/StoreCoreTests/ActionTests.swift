import StoreCore
import Testing

private enum CounterAction: Sendable, CustomStringConvertible {
    case increment
    case add(Int)
    case fail

    var description: String {
        switch self {
        case .increment: "increment"
        case .add(let amount): "add(\(amount))"
        case .fail: "fail"
        }
    }
}

private enum Step: DependencyKey {
    static let defaultValue = 1
}

private let counter = Reducer<Int, CounterAction> { count, action in
    switch action {
    case .increment: count += 1
    case .add(let amount): count += amount
    case .fail: throw Boom()
    }
}

@Suite("Actions")
struct ActionTests {
    @Test func dispatchRunsTheReducerAsACommitNamedAfterTheAction() throws {
        let store = Store(AppState())
        let names = Recorder<String>()
        let observation = store.observe { names.append($0.name) }
        let reducer = counter.lifted(to: \AppState.count)
        try store.dispatch(CounterAction.increment, through: reducer)
        try store.dispatch(CounterAction.add(5), through: reducer)
        #expect(store.state.count == 6)
        #expect(names.values == ["increment", "add(5)"])
        observation.cancel()
    }

    @Test func aThrowingReducerLeavesNoTrace() {
        let store = Store(AppState(count: 2))
        let reducer = Reducer<AppState, CounterAction>.combine(
            counter.lifted(to: \AppState.count),
            Reducer { state, _ in state.name = "touched" }
        )
        #expect(throws: Boom.self) {
            try store.dispatch(CounterAction.fail, through: reducer)
        }
        #expect(store.state == AppState(count: 2))
        #expect(store.version == 0)
    }

    @Test func combinedReducersRunInOrder() throws {
        let log = Reducer<AppState, CounterAction> { state, _ in state.name += "[\(state.count)]" }
        let combined = Reducer.combine([counter.lifted(to: \AppState.count), log, counter.lifted(to: \AppState.count)])
        let store = Store(AppState())
        try store.dispatch(CounterAction.increment, through: combined)
        #expect(store.state.count == 2)
        #expect(store.state.name == "[1]")
    }

    @Test func performRunsOutsideTheLockWithDependenciesAndCommits() async throws {
        let store = Store(AppState(), dependencies: Dependencies().with { $0[Step.self] = 3 })
        let result = try await store.perform { context -> Int in
            let step = context.dependencies[Step.self]
            await Task.yield()
            try context.commit("first") { $0.count += step }
            try context.send("sent")
            try context.commit("second") { $0.count += step }
            return try #require(context.state).count
        }
        #expect(result == 6)
        #expect(store.state.count == 6)
        #expect(store.version == 2)
    }

    @Test func performRethrowsTheOperationsError() async {
        let store = Store(AppState())
        await #expect(throws: Boom.self) {
            try await store.perform { _ in throw Boom() }
        }
    }

    @Test func aContextOutlivingItsStoreThrows() async throws {
        var store: Store<AppState>? = Store(AppState())
        let context = try await #require(store).perform { $0 }
        store = nil
        #expect(context.state == nil)
        #expect(throws: StoreError.storeDeallocated) {
            try context.commit { $0.count = 1 }
        }
        #expect(throws: StoreError.storeDeallocated) {
            try context.send("lost")
        }
    }

    @Test func dependenciesFallBackToTheirDefault() {
        var dependencies = Dependencies()
        #expect(dependencies[Step.self] == 1)
        dependencies[Step.self] = 9
        #expect(dependencies[Step.self] == 9)
    }
}

import StoreCore
import Testing

private enum Greeting: DependencyKey {
    static let defaultValue = "hello"
}

@Suite("Scope")
struct ScopeTests {
    @Test func aScopeReadsAndCommitsThroughItsKeyPath() throws {
        let store = Store(AppState())
        let nested = store.scope(\.nested)
        try nested.commit("set value") { $0.value = 4 }
        #expect(store.state.nested.value == 4)
        #expect(nested.state.value == 4)
        #expect(nested.version == store.version)
        let context = try nested.commit(withContext: { state, context in
            state.flag = true
            return context.name
        })
        #expect(context == "commit")
        #expect(store.state.nested == Nested(value: 4, flag: true))
    }

    @Test func scopeObserversFireOnlyWhenTheirPartChanged() throws {
        let store = Store(AppState())
        let nested = store.scope(\.nested)
        let seen = Recorder<String>()
        let observation = nested.observe { seen.append("\($0.name) \($0.current.value)") }
        let flag = nested.observe(\.flag) { _, new in seen.append("flag \(new)") }
        try store.commit("count") { $0.count = 1 }
        try nested.commit("value") { $0.value = 2 }
        try store.commit("both") { state in
            state.count = 2
            state.nested.flag = true
        }
        #expect(seen.values == ["value 2", "both 2", "flag true"])
        _ = (observation, flag)
    }

    @Test func scopesNestAndShareTheParentsBatch() throws {
        let store = Store(AppState())
        let nested = store.scope(\.nested)
        let value = nested.scope(\.value)
        let seen = Recorder<UInt64>()
        let observation = store.observe { seen.append($0.version) }
        try value.batch("scoped batch") {
            try value.commit { $0 = 1 }
            try nested.commit { $0.flag = true }
        }
        #expect(value.state == 1)
        #expect(store.state.nested == Nested(value: 1, flag: true))
        #expect(seen.values == [1])
        observation.cancel()
    }

    @Test func scopeStreamsAndDerivedValuesSeeOnlyThePart() async throws {
        let store = Store(AppState())
        let nested = store.scope(\.nested)
        let values = nested.values(of: \.value)
        let changes = nested.changes()
        let derived = nested.derived(\.value)
        try store.commit { $0.count = 1 }
        try nested.commit { $0.value = 5 }
        #expect(await collect(values, count: 2) == [0, 5])
        #expect(await collect(changes, count: 1).map(\.current.value) == [5])
        #expect(derived.value == 5)
        #expect(derived.recomputations == 1)
    }

    @Test func dependenciesAreOverridablePerScopeAndInTests() async throws {
        let store = Store(AppState())
        #expect(store.dependencies[Greeting.self] == "hello")
        let scoped = store.scope(\.nested) { $0[Greeting.self] = "scoped" }
        #expect(scoped.dependencies[Greeting.self] == "scoped")
        #expect(scoped.scope(\.value).dependencies[Greeting.self] == "scoped")
        let testing = store.withDependencies { $0[Greeting.self] = "test" }
        let greeting = await testing.perform { context in
            try? context.commit { $0.name = context.dependencies[Greeting.self] }
            return context.dependencies[Greeting.self]
        }
        #expect(greeting == "test")
        #expect(store.state.name == "test")
        #expect(store.dependencies[Greeting.self] == "hello")
    }

    @Test func scopesForwardEvents() throws {
        let store = Store(AppState())
        let seen = Recorder<String>()
        let observation = store.onEvent(of: String.self) { seen.append($0) }
        store.scope(\.nested).send("from scope")
        #expect(seen.values == ["from scope"])
        observation.cancel()
    }

    @Test func dependenciesWithReturnsAnUpdatedCopy() {
        let base = Dependencies()
        let updated = base.with { $0[Greeting.self] = "hi" }
        #expect(base[Greeting.self] == "hello")
        #expect(updated[Greeting.self] == "hi")
    }

    @Test func aScopeObservesTheEventsOfItsStore() async throws {
        let store = Store(AppState())
        let nested = store.scope(\.nested)
        let seen = Recorder<String>()
        let observation = nested.onEvent(of: String.self) { seen.append($0) }
        let stream = nested.events(of: String.self)
        store.send("from the store")
        nested.send("from the scope")
        store.scope(\.count).send("from another scope")
        nested.send(7)
        let expected = ["from the store", "from the scope", "from another scope"]
        #expect(seen.values == expected)
        #expect(await collect(stream, count: 3) == expected)
        observation.cancel()
        nested.send("after cancel")
        #expect(seen.values == expected)
    }

    @Test func aScopeRunsKeyedTasksOfItsStoreThatOutliveTheScopeObject() async throws {
        let store = Store(AppState())
        let release = Gate()
        var scope: ScopedStore<Nested>? = store.scope(\.nested) { $0[Greeting.self] = "scoped" }
        let task = try #require(scope).task(key: "load") { context in
            await release.wait()
            try? context.commit("loaded") { $0.value = context.dependencies[Greeting.self].count }
            try? context.send("value \(context.state?.value ?? -1)")
        }
        #expect(store.isRunning(key: "load"))
        #expect(try #require(scope).isRunning(key: "load"))
        let events = store.events(of: String.self)
        scope = nil
        release.open()
        await task.value
        #expect(store.state.nested.value == "scoped".count)
        #expect(await collect(events, count: 1) == ["value 6"])
        #expect(store.runningTaskCount == 0)

        // The keys are the store's: a scope cancels a task the store started.
        let started = Gate()
        let cancelled = Recorder<Bool>()
        let storeTask = store.task(key: "shared") { _ in
            started.open()
            cancelled.append(await waitForCancellation(timeout: .seconds(2)))
        }
        await started.wait()
        let nested = store.scope(\.nested)
        #expect(nested.isRunning(key: "shared"))
        nested.cancel(key: "shared")
        await storeTask.value
        #expect(cancelled.values == [true])
        #expect(!nested.isRunning(key: "shared"))
    }

    @Test func aScopedTaskEndsWithItsStore() async throws {
        var store: Store<AppState>? = Store(AppState())
        let started = Gate()
        let outcome = Recorder<String>()
        let task = try #require(store).scope(\.nested).task(key: "k") { context in
            started.open()
            let cancelled = await waitForCancellation(timeout: .seconds(2))
            do {
                try context.commit { $0.value = 1 }
                outcome.append("committed")
            } catch {
                outcome.append("cancelled \(cancelled), \(error)")
            }
        }
        await started.wait()
        store = nil
        await task.value
        #expect(outcome.values == ["cancelled true, \(StoreError.storeDeallocated)"])
    }
}

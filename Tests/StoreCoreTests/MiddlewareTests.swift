import StoreCore
import Testing

@Suite("Middleware")
struct MiddlewareTests {
    @Test func willCommitCanRewriteTheNewState() throws {
        let clamp = Middleware<AppState>(name: "clamp", willCommit: { _, next, _ in
            next.count = min(next.count, 10)
        })
        let store = Store(AppState(), middleware: [clamp])
        try store.commit { $0.count = 50 }
        #expect(store.state.count == 10)
        #expect(clamp.name == "clamp")
    }

    @Test func willCommitCanRejectACommitWhichThenLeavesNoTrace() {
        let guardrail = Middleware<AppState>(name: "no negatives", willCommit: { previous, next, context in
            if next.count < 0 { throw Boom() }
        })
        let store = Store(AppState(), middleware: [guardrail])
        let seen = Recorder<UInt64>()
        let observation = store.observe { seen.append($0.version) }
        #expect(throws: Boom.self) {
            try store.commit { $0.count = -1 }
        }
        #expect(store.state == AppState())
        #expect(store.version == 0)
        #expect(seen.values.isEmpty)
        observation.cancel()
    }

    @Test func didCommitSeesOneRecordPerPublishedChangeBeforeObservers() throws {
        let log = Recorder<String>()
        let audit = Middleware<AppState>(name: "audit", didCommit: { record in
            log.append("audit \(record.name) v\(record.changes.version) \(record.duration >= .zero)")
        })
        let store = Store(AppState(), middleware: [audit])
        let observation = store.observe { log.append("observer v\($0.version)") }
        try store.commit("one") { $0.count = 1 }
        try store.commit("noop") { $0.count = 1 }
        try store.batch("grouped") {
            try store.commit { $0.count = 2 }
            try store.commit { $0.count = 3 }
        }
        #expect(log.values == ["audit one v1 true", "observer v1", "audit grouped v2 true", "observer v2"])
        observation.cancel()
    }

    @Test func middlewareRunsInOrder() throws {
        let first = Middleware<AppState>(name: "first", willCommit: { _, next, _ in next.name += "1" })
        let second = Middleware<AppState>(name: "second", willCommit: { _, next, _ in next.name += "2" })
        let store = Store(AppState(), middleware: [first, second])
        try store.commit { $0.count = 1 }
        #expect(store.state.name == "12")
    }

    @Test func loggerWritesOneLinePerCommit() throws {
        let lines = Recorder<String>()
        let store = Store(AppState(), middleware: [.logger(prefix: "[test]") { lines.append($0) }])
        try store.commit("first") { $0.count = 1 }
        try store.commit("second") { $0.count = 2 }
        #expect(lines.count == 2)
        #expect(lines.values.first?.hasPrefix("[test] first v1 ") == true)
        #expect(lines.values.last?.hasPrefix("[test] second v2 ") == true)
        #expect(lines.values.allSatisfy { $0.hasSuffix("µs") })
    }
}

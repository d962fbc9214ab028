import EntityStoreTestSupport
import Foundation
import StoreCore
import Testing
@testable import EntityStore

/// Live windows under random commits, against the model.
extension NaNAttackTests {
    // MARK: 1. Live windows under random commits (model test)

    @Test(arguments: Soak.seeds(1...1, soak: 1...40))
    func liveWindowsFollowRandomCommits(seed: UInt64) throws {
        let indexed = Table<NaNProbeRow>("indexed").ordered(\.x).ordered(\.opt).grouped(\.g).ordered(\.f)
        let plain = Table<NaNProbeRow>("plain")
        let tables = [indexed, plain]
        let store = try EntityStore { indexed; plain }
        var random = SplitMix64(seed: seed &* 104_729)
        func value() -> Double { Self.values[Int.random(in: 0..<Self.values.count, using: &random)] }
        func row(_ id: Int) -> NaNProbeRow {
            let x = value()
            let opt: Double? = Int.random(in: 0..<3, using: &random) == 0 ? nil : value()
            return NaNProbeRow(id: id, x: x, opt: opt, g: Int.random(in: 0..<3, using: &random), f: Float(value()))
        }
        var model = Model()
        let initialCount = Int.random(in: 0..<12, using: &random)
        let initial = (0..<initialCount).map { row($0) }
        for r in initial { model.insert(r) }
        if !initial.isEmpty {
            try store.write { tx in for t in tables { try tx[t].insert(contentsOf: initial) } }
        }

        typealias Spec = (name: String, query: (Table<NaNProbeRow>) -> LiveQuery<NaNProbeRow>, expected: ([NaNProbeRow]) -> [NaNProbeRow])
        var specs: [Spec] = []
        for descending in [false, true] {
            for limit in [nil, 0, 1, 2, 3, 5] as [Int?] {
                specs.append((
                    "x desc \(descending) limit \(String(describing: limit))",
                    { t in
                        var q = LiveQuery(t).sorted(by: \.x, descending: descending)
                        if let limit { q = q.limit(limit) }
                        return q
                    },
                    { rows in Self.page(Self.nanLast(rows, \.x, descending: descending), offset: 0, limit: limit) }))
            }
            specs.append((
                "even g, x desc \(descending) limit 2",
                { t in LiveQuery(t).filter { $0.g % 2 == 0 }.sorted(by: \.x, descending: descending).limit(2) },
                { rows in Array(Self.nanLast(rows.filter { $0.g % 2 == 0 }, \.x, descending: descending).prefix(2)) }))
            specs.append((
                "g == 1, x desc \(descending) limit 2",
                { t in LiveQuery(t).where(\.g, equals: 1).sorted(by: \.x, descending: descending).limit(2) },
                { rows in Array(Self.nanLast(rows.filter { $0.g == 1 }, \.x, descending: descending).prefix(2)) }))
            specs.append((
                "x in -1...1, desc \(descending) limit 2",
                { t in LiveQuery(t).where(\.x, in: -1.0...1.0).sorted(by: \.x, descending: descending).limit(2) },
                { rows in Array(Self.nanLast(rows.filter { $0.x >= -1 && $0.x <= 1 }, \.x, descending: descending).prefix(2)) }))
            specs.append((
                "x in 0..., desc \(descending) limit 3",
                { t in LiveQuery(t).where(\.x, in: 0.0...).sorted(by: \.x, descending: descending).limit(3) },
                { rows in Array(Self.nanLast(rows.filter { $0.x >= 0 }, \.x, descending: descending).prefix(3)) }))
            specs.append((
                "x in ..<1, desc \(descending)",
                { t in LiveQuery(t).where(\.x, in: ..<1.0).sorted(by: \.x, descending: descending) },
                { rows in Self.nanLast(rows.filter { $0.x < 1 }, \.x, descending: descending) }))
            specs.append((
                "f desc \(descending) limit 3",
                { t in LiveQuery(t).sorted(by: \.f, descending: descending).limit(3) },
                { rows in Array(Self.nanLast(rows, { Double($0.f) }, descending: descending).prefix(3)) }))
        }

        struct Watched {
            let name: String
            let table: Table<NaNProbeRow>
            let spec: Int
            let live: LiveList<NaNProbeRow>
            let log: UpdateLog<LiveRows<NaNProbeRow>, LiveDiff<NaNProbeRow>>
            let token: Any
            var replayed: [NaNProbeRow]
        }
        var watched: [Watched] = []
        for t in tables {
            for (n, spec) in specs.enumerated() {
                let live = store.live(spec.query(t))
                let log = UpdateLog<LiveRows<NaNProbeRow>, LiveDiff<NaNProbeRow>>()
                let token = live.observe { log.append($0) }
                watched.append(Watched(name: "\(t.name): \(spec.name)", table: t, spec: n, live: live, log: log, token: token, replayed: Array(live.value)))
            }
        }

        func check(_ step: String) {
            let state = store.state
            #expect(state.invariantViolations().isEmpty, "\(step): \(state.invariantViolations())")
            for t in tables {
                #expect(Array(state[t]).map(\.id) == model.rows.map(\.id), "\(step) \(t.name): model insertion order")
                #expect(Self.sameRows(Array(state[t]), model.rows), "\(step) \(t.name): model values \(Self.firstDifference(Array(state[t]), model.rows))")
            }
            for i in watched.indices {
                let w = watched[i]
                let value = Array(w.live.value)
                let expected = specs[w.spec].expected(model.rows)
                #expect(Self.sameRows(value, expected), "\(step) \(w.name): live \(value.map(\.id)) expected \(expected.map(\.id)) \(Self.firstDifference(value, expected))")
                // A fresh live query over the same state agrees.
                let fresh = Array(store.live(specs[w.spec].query(w.table)).value)
                #expect(Self.sameRows(fresh, expected), "\(step) \(w.name): fresh live \(fresh.map(\.id)) expected \(expected.map(\.id))")
                for update in w.log.take() { watched[i].replayed = update.diff.apply(to: watched[i].replayed) }
                #expect(Self.sameRows(watched[i].replayed, value), "\(step) \(w.name): diffs replay to \(watched[i].replayed.map(\.id)), value \(value.map(\.id))")
            }
        }
        check("initial")
        var history: [(state: EntityState, model: Model)] = [(store.state, model)]

        for step in 0..<200 {
            if step % 10 == 0 { history.append((store.state, model)) }
            let kind = Int.random(in: 0..<10, using: &random)
            // Ops are decided up front, applied to the model and to both tables.
            enum Op { case upsert(NaNProbeRow), update(Int, Double, Double?), remove(Int), reinsert(NaNProbeRow), boundary(Bool), boundaryTo(Bool, Int, Double) }
            if kind == 8, let saved = history.randomElement(using: &random) {
                // An undo: a raw core commit back to an earlier state (the windows re-fill).
                try store.core.commit("undo") { (state: inout EntityState) in state = saved.state }
                model = saved.model
                check("step \(step) undo")
                continue
            }
            var writes: [[Op]] = []
            let writeCount = kind < 2 ? Int.random(in: 2...4, using: &random) : 1
            for _ in 0..<writeCount {
                var ops: [Op] = []
                for _ in 0..<Int.random(in: 1...(kind == 9 ? 8 : 3), using: &random) {
                    let id = Int.random(in: 0..<16, using: &random)
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0: ops.append(.remove(id))
                    case 1: ops.append(.upsert(row(id)))
                    case 2: ops.append(.reinsert(row(id)))
                    case 3:
                        if Bool.random(using: &random) {
                            ops.append(.boundary(Bool.random(using: &random)))
                        } else {
                            ops.append(.boundaryTo(Bool.random(using: &random), Int.random(in: 1...3, using: &random), value()))
                        }
                    default: ops.append(.update(id, value(), Bool.random(using: &random) ? nil : value()))
                    }
                }
                writes.append(ops)
            }
            func run(_ ops: [Op]) throws {
                // Resolve boundary removals against the model's current ascending window.
                var resolved: [Op] = []
                var shadow = model
                for op in ops {
                    switch op {
                    case let .boundary(descending):
                        let sorted = Self.nanLast(shadow.rows, \.x, descending: descending)
                        let k = Swift.min(sorted.count, 2)
                        if k > 0 {
                            let id = sorted[k - 1].id
                            resolved.append(.remove(id))
                            shadow.remove(id)
                        }
                    case let .boundaryTo(descending, k, x):
                        // Moves the k-th row of a window (its boundary for limit k) to `x`.
                        let sorted = Self.nanLast(shadow.rows, \.x, descending: descending)
                        if sorted.count >= k {
                            let r = sorted[k - 1]
                            resolved.append(.update(r.id, x, r.opt))
                            shadow.update(r.id) { $0.x = x }
                        }
                    case let .upsert(r): resolved.append(op); shadow.upsert(r)
                    case let .remove(id): resolved.append(op); shadow.remove(id)
                    case let .reinsert(r):
                        resolved.append(op); shadow.remove(r.id); shadow.insert(r)
                    case let .update(id, x, o):
                        resolved.append(op); shadow.update(id) { $0.x = x; $0.opt = o }
                    }
                }
                try store.write { tx in
                    for t in tables {
                        for op in resolved {
                            switch op {
                            case let .upsert(r): try tx[t].upsert(r)
                            case let .remove(id): _ = try tx[t].remove(id)
                            case let .reinsert(r):
                                _ = try tx[t].remove(r.id)
                                try tx[t].insert(r)
                            case let .update(id, x, o):
                                if tx[t].find(id) != nil { _ = try tx[t].update(id) { $0.x = x; $0.opt = o } }
                            case .boundary, .boundaryTo: break
                            }
                        }
                    }
                }
                model = shadow
            }
            if writeCount > 1 {
                try store.batch { for ops in writes { try run(ops) } }
            } else {
                try run(writes[0])
            }
            check("step \(step)")
        }
        _ = watched.map(\.token)
    }
}

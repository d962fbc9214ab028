import EntityStore
import EntityStoreSQLite
import Foundation
import Testing

/// A row with floating-point fields of every awkward value.
struct FloatRow: Entity {
    var id: Int
    var x: Double
    var opt: Double?
    var g: Int
    var f: Float
}

@Suite("NaN, signed zeros and infinities in snapshots")
struct NaNSnapshotTests {
    static let values: [Double] = [.nan, -.nan, 0, -0.0, 1, 2.5, -1, .infinity, -.infinity]

    /// Rows compared field by field, with the sign of zero and NaN told apart by bits.
    static func sameRows(_ a: [FloatRow], _ b: [FloatRow]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { l, r in
            l.id == r.id && l.x.bitPattern == r.x.bitPattern && l.opt?.bitPattern == r.opt?.bitPattern && l.g == r.g
                && l.f.bitPattern == r.f.bitPattern
        }
    }

    /// Ascending or descending by `key`, ties in insertion order (no NaN is stored here).
    static func sorted(_ rows: [FloatRow], descending: Bool) -> [FloatRow] {
        rows.enumerated().sorted { a, b in
            let (x, y) = (a.element.x, b.element.x)
            if x != y { return descending ? x > y : x < y }
            return a.offset < b.offset
        }.map(\.element)
    }

    /// ±0.0 and infinities survive a snapshot and restore with an ordered index (same
    /// rows, same sorted order, sound indexes). SQLite has no NaN (it binds one as NULL,
    /// which would restore as nil or not at all), so a snapshot of a NaN, in a plain or an
    /// optional field, is refused with an error naming the field, and the file keeps its
    /// previous contents.
    @Test func snapshotsKeepZerosAndInfinitiesAndRefuseNaN() throws {
        let t = Table<FloatRow>("snap").ordered(\.x).ordered(\.opt)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nan-attack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("snap.sqlite").path
        let store = try EntityStore { t }
        let storable = Self.values.filter { !$0.isNaN }
        let rows = storable.enumerated().map { FloatRow(id: $0.offset, x: $0.element, opt: $0.offset % 2 == 0 ? nil : $0.element, g: 0, f: Float($0.element)) }
        try store.write { tx in try tx[t].insert(contentsOf: rows) }
        try store.snapshot(to: path)
        let restored = try EntityStore { t }
        try restored.restore(from: path)
        #expect(restored.state.invariantViolations().isEmpty, "\(restored.state.invariantViolations())")
        let back = Array(restored.state[t])
        #expect(Self.sameRows(back, rows), "restored \(back.map { ($0.id, $0.x, $0.opt as Any) })")
        for descending in [false, true] {
            #expect(restored.state[t].query().sorted(by: \.x, descending: descending).ids == Self.sorted(rows, descending: descending).map(\.id))
        }
        for (field, row) in [("x", FloatRow(id: 100, x: .nan, opt: nil, g: 0, f: 0)), ("opt", FloatRow(id: 100, x: 1, opt: .nan, g: 0, f: 0)),
                             ("f", FloatRow(id: 100, x: 1, opt: nil, g: 0, f: .nan))] {
            try store.write { tx in try tx[t].upsert(row) }
            do {
                try store.snapshot(to: path)
                Issue.record("a snapshot of a NaN in '\(field)' was written")
            } catch {
                #expect("\(error)".contains("NaN") && "\(error)".contains(field), "\(error)")
            }
            let again = try EntityStore { t }
            try again.restore(from: path)
            #expect(Self.sameRows(Array(again.state[t]), rows), "the refused snapshot changed the file")
        }
    }

}

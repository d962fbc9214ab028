import Testing
@testable import EntityStore

/// Watch keys file derived queries under the IDs they watch; a commit finds them by
/// building keys for the IDs it changed, so equal IDs must make equal keys.
@Suite struct WatchKeyTests {
    @Test(arguments: [0, 1, -7, Int.max, Int.min])
    func integerKeysEqualTheirOwnID(id: Int) {
        #expect(WatchKey(id) == WatchKey(id))
        #expect(WatchKey(id).hashValue == WatchKey(id).hashValue)
        #expect(WatchKey(id) != WatchKey(id &+ 1))
    }

    @Test func otherIDTypesCompareByValue() {
        #expect(WatchKey("a") == WatchKey("a"))
        #expect(WatchKey("a").hashValue == WatchKey("a").hashValue)
        #expect(WatchKey("a") != WatchKey("b"))
        #expect(WatchKey(UInt8(3)) == WatchKey(UInt8(3)))
        #expect(WatchKey(RecordID.string("x")) == WatchKey(RecordID.string("x")))
        #expect(WatchKey(RecordID.integer(1)) != WatchKey(RecordID.integer(2)))
    }

    @Test func keysOfDifferentTypesDiffer() {
        #expect(WatchKey(0) != WatchKey("0"))
        #expect(WatchKey(0) != WatchKey(""))
    }

    @Test func aSetOfKeysFindsEveryID() {
        let ids = Array(-50...50)
        let keys = Set(ids.map { WatchKey($0) })
        #expect(keys.count == ids.count)
        #expect(ids.allSatisfy { keys.contains(WatchKey($0)) })
        #expect(!keys.contains(WatchKey(51)))
    }
}

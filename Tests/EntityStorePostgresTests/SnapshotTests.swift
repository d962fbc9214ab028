#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

struct Address: Codable, Equatable, Sendable {
    var street: String
    var tags: [String]
}

enum Status: String, Codable, Sendable { case active, retired }

struct OwnerID: Codable, Hashable, Sendable {
    let raw: Int
    init(_ raw: Int) { self.raw = raw }
    init(from decoder: any Decoder) throws { raw = try decoder.singleValueContainer().decode(Int.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(raw)
    }
}

/// One field of every column kind.
struct Everything: Entity {
    var id: Int
    var small: Int8
    var unsigned: UInt32
    var flag: Bool
    var ratio: Double
    var single: Float
    var text: String
    var bytes: Data
    var moment: Date
    var uuid: UUID
    var address: Address
    var numbers: [Int]
    var nickname: String?
    var status: Status
    var owner: OwnerID
    var extra: JSONValue?
}

struct Customer: Entity {
    var id: String
    var name: String
    var region: String
}

struct Order: Entity {
    var id: Int
    var customerID: String
    var total: Double
    var placed: Date
}

let everything = Table<Everything>("everything").ordered(\.ratio)
let customers = Table<Customer>("customers").grouped(\.region)
let orders = Table<Order>("orders")
    .ordered(\.total)
    .references(\.customerID, to: customers, onDelete: .cascade)

func sampleEverything(_ id: Int) -> Everything {
    let texts = ["plain", "tab\there", "line\nbreak\r\n", "back\\slash \\N", "quote \" and ' ", "ünïcødé 🎉", ""]
    let dates = [
        Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_7), Date(timeIntervalSince1970: 0), Date.distantPast,
        Date.distantFuture, Date(timeIntervalSinceReferenceDate: .leastNonzeroMagnitude), Date(timeIntervalSinceReferenceDate: -1e20),
    ]
    let ratios = [0.1, -0.0, .infinity, -.infinity, 1e300, .leastNonzeroMagnitude, Double.pi]
    return Everything(
        id: id, small: Int8(truncatingIfNeeded: id * 37), unsigned: UInt32.max - UInt32(id), flag: id % 2 == 0,
        ratio: ratios[id % ratios.count], single: Float(id) / 3, text: texts[id % texts.count],
        bytes: Data([0, 1, 2, 255, UInt8(id & 255), 92, 9, 10]), moment: dates[id % dates.count], uuid: UUID(),
        address: Address(street: "Main \(id)", tags: ["a", "b\"c"]), numbers: [id, -id, Int.max],
        nickname: id % 3 == 0 ? nil : "nick \(id)", status: id % 2 == 0 ? .active : .retired, owner: OwnerID(id * 7),
        extra: id % 4 == 0 ? nil : ["k": .integer(Int64(id)), "d": .double(2.0), "n": .null])
}

@Suite(.enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct PostgresSnapshotTests {
    @Test("every column kind round-trips exactly, and psql sees typed columns, metadata and indexes")
    func roundTrip() async throws {
        let target = try await TestServer.target("roundtrip")
        defer { Task { await TestServer.drop(target) } }
        let store = try EntityStore { everything }
        try store.write { tx in try tx[everything].insert(contentsOf: (1...50).map(sampleEverything)) }
        let summary = try await store.snapshot(to: target)
        #expect(summary.rows == 50)

        let copy = try EntityStore { everything }
        let restored = try await copy.restore(from: target)
        #expect(restored.rows == 50)
        #expect(copy.state[everything].all() == store.state[everything].all())

        let types = try await TestServer.rows(target, """
            SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = '\(target.schema)' \
            AND table_name = 'everything' ORDER BY ordinal_position
            """)
        let byName = Dictionary(uniqueKeysWithValues: types.map { ($0[0] ?? "", $0[1] ?? "") })
        #expect(byName["id"] == "bigint")
        #expect(byName["flag"] == "boolean")
        #expect(byName["ratio"] == "double precision")
        #expect(byName["text"] == "text")
        #expect(byName["bytes"] == "bytea")
        #expect(byName["moment"] == "numeric")
        #expect(byName["uuid"] == "uuid")
        #expect(byName["address"] == "jsonb")
        #expect(byName["status"] == "text")
        #expect(byName["owner"] == "bigint")
        #expect(byName["entitystore_revision"] == "bigint")
        let kinds = try await TestServer.rows(target, "SELECT name, kind FROM \"\(target.schema)\".entitystore_columns WHERE table_name = 'everything'")
        #expect(kinds.contains(["moment", "date"]))
        #expect(kinds.contains(["extra", "json"]))
        let indexes = try await TestServer.rows(target, "SELECT indexname FROM pg_indexes WHERE schemaname = '\(target.schema)' ORDER BY 1")
        #expect(indexes.contains(["entitystore_index_everything_ratio"]))
        let epoch = try await TestServer.rows(target, "SELECT moment::text FROM \"\(target.schema)\".everything WHERE id = 1")
        #expect(epoch == [["0"]])
    }

    @Test("a second snapshot replaces the first; a reader never sees a mix")
    func replaceAtomically() async throws {
        let target = try await TestServer.target("replace")
        defer { Task { await TestServer.drop(target) } }
        let store = try EntityStore { customers; orders }
        try store.write { tx in
            try tx[customers].insert(Customer(id: "c1", name: "Ada", region: "eu"))
            try tx[orders].insert(Order(id: 1, customerID: "c1", total: 9.5, placed: Date(timeIntervalSince1970: 1)))
        }
        try await store.snapshot(to: target)
        try store.write { tx in
            try tx[customers].insert(Customer(id: "c2", name: "Grace", region: "us"))
            _ = try tx[orders].remove(1)
        }
        let second = try await store.snapshot(to: target)
        #expect(second.position == 2)
        let copy = try EntityStore { customers; orders }
        try await copy.restore(from: target)
        #expect(copy.state[customers].count == 2)
        #expect(copy.state[orders].count == 0)
        let schemas = try await TestServer.rows(target, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'entitystore_stage_%'")
        #expect(schemas == [["0"]])
    }

    @Test("a failed snapshot (an entity that cannot be stored) leaves the previous contents")
    func failedSnapshotKeepsOld() async throws {
        let target = try await TestServer.target("failed")
        defer { Task { await TestServer.drop(target) } }
        let store = try EntityStore { everything }
        try store.write { tx in try tx[everything].insert(sampleEverything(1)) }
        try await store.snapshot(to: target)
        try store.write { tx in
            var bad = sampleEverything(2)
            bad.moment = Date(timeIntervalSinceReferenceDate: .infinity)
            try tx[everything].insert(bad)
        }
        await #expect(throws: PostgresStoreError.self) { try await store.snapshot(to: target) }
        let copy = try EntityStore { everything }
        try await copy.restore(from: target)
        #expect(copy.state[everything].ids == [1])
    }

    @Test("partial loads: some tables, or the rows matching an indexed field")
    func partialLoad() async throws {
        let target = try await TestServer.target("partial")
        defer { Task { await TestServer.drop(target) } }
        let store = try EntityStore { customers; orders }
        try store.write { tx in
            for index in 0..<20 {
                try tx[customers].insert(Customer(id: "c\(index)", name: "n\(index)", region: index % 2 == 0 ? "eu" : "us"))
            }
            for index in 0..<100 {
                try tx[orders].insert(Order(id: index, customerID: "c\(index % 20)", total: Double(index), placed: Date(timeIntervalSince1970: Double(index))))
            }
        }
        try await store.snapshot(to: target)

        let onlyCustomers = try EntityStore { customers; orders }
        try await onlyCustomers.restore(from: target, selection: .tables(["customers"]))
        #expect(onlyCustomers.state[customers].count == 20)
        #expect(onlyCustomers.state[orders].count == 0)

        let europe = try EntityStore { customers; orders }
        let selection = PostgresSelection.tables(["customers"]).filtering("customers", try .field("region", equals: "eu"))
        try await europe.restore(from: target, selection: selection)
        #expect(europe.state[customers].count == 10)
        #expect(europe.state[customers].all().allSatisfy { $0.region == "eu" })

        let range = try EntityStore { customers; orders }
        try await range.restore(from: target, selection: .tables(["orders"]).filtering("orders", try .field("total", from: 10.0, below: 20.0)))
        #expect(range.state[orders].ids == Array(10..<20))

        let unindexed = try EntityStore { customers; orders }
        await #expect(throws: PostgresStoreError.self) {
            try await unindexed.restore(from: target, selection: .all.filtering("customers", try .field("name", equals: "n1")))
        }
    }

    @Test("a restore validates everything before swapping in: a wrong row leaves the store untouched")
    func restoreAllOrNothing() async throws {
        let target = try await TestServer.target("validate")
        defer { Task { await TestServer.drop(target) } }
        let store = try EntityStore { customers; orders }
        try store.write { tx in
            try tx[customers].insert(contentsOf: (0..<5000).map { Customer(id: "c\($0)", name: "n", region: "eu") })
        }
        try await store.snapshot(to: target)
        _ = try await TestServer.rows(target, "UPDATE \"\(target.schema)\".customers SET name = NULL WHERE id = 'c4321'")
        let copy = try EntityStore { customers; orders }
        try copy.write { tx in try tx[customers].insert(Customer(id: "local", name: "kept", region: "x")) }
        await #expect(throws: PostgresStoreError.self) { try await copy.restore(from: target) }
        #expect(copy.state[customers].ids == ["local"])
        _ = try await TestServer.rows(target, "DELETE FROM \"\(target.schema)\".customers WHERE id = 'c4321'")
        let error = await #expect(throws: PostgresStoreError.self) { try await copy.restore(from: target) }
        #expect(error?.description.contains("5000") == true)
    }

    @Test("hostile table, column and schema names round-trip; values are bound")
    func hostileIdentifiers() async throws {
        struct Hostile: Entity {
            var id: String
            var value: String
            enum CodingKeys: String, CodingKey {
                case id
                case value = "v\"; drop table y; --"
            }
        }
        let hostile = Table<Hostile>("x\"; drop table y; --").grouped(\.value)
        var hostileTarget = try await TestServer.target("hostile")
        hostileTarget.schema = "s\"; drop schema public; -- \(UInt32.random(in: 0...UInt32.max))"
        let target = hostileTarget
        defer { Task { await TestServer.drop(target) } }
        let store = try EntityStore { hostile }
        try store.write { tx in
            try tx[hostile].insert(Hostile(id: "'); drop table z; --", value: "\\N\t\n' OR 1=1 --"))
        }
        try await store.snapshot(to: target)
        let copy = try EntityStore { hostile }
        try await copy.restore(from: target, selection: .all.filtering(hostile.name, try .field("id", equals: "'); drop table z; --")))
        #expect(copy.state[hostile].all() == store.state[hostile].all())
        let publicSchema = try await TestServer.rows(target, "SELECT count(*) FROM pg_namespace WHERE nspname = 'public'")
        #expect(publicSchema == [["1"]])
    }

    @Test("dynamic records round-trip with their kinds")
    func dynamicRecords() async throws {
        let target = try await TestServer.target("dynamic")
        defer { Task { await TestServer.drop(target) } }
        let flights = Table<DynamicRecord>("flights").index(.ordered, field: "delay")
        let store = try EntityStore { flights }
        try store.write { tx in
            try tx[flights].insert(DynamicRecord(id: 1, fields: ["delay": 5, "carrier": "AA", "mixed": 1, "maybe": .null]))
            try tx[flights].insert(DynamicRecord(id: 2, fields: ["delay": 2.5, "carrier": "UA", "mixed": "x", "nested": ["a": [1, 2]]]))
        }
        try await store.snapshot(to: target)
        let copy = try await EntityStore.restoringDynamic(from: target)
        let table = Table<DynamicRecord>("flights")
        #expect(copy.state[table].all() == store.state[flights].all())
        let metadata = try await PostgresStore.metadata(of: target)
        #expect(metadata.table(named: "flights")?.columns.first { $0.name == "delay" }?.kind == .number)
    }

    @Test("a schema holding other tables is never replaced")
    func refusesForeignSchema() async throws {
        let target = try await TestServer.target("foreign")
        defer { Task { await TestServer.drop(target) } }
        _ = try await TestServer.rows(target, "CREATE SCHEMA \"\(target.schema)\"")
        _ = try await TestServer.rows(target, "CREATE TABLE \"\(target.schema)\".precious (x int)")
        let store = try EntityStore { customers; orders }
        let error = await #expect(throws: PostgresStoreError.self) { try await store.snapshot(to: target) }
        #expect(error?.description.contains("other tables") == true)
    }
}

@Suite(.enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct PostgresConnectionTests {
    @Test("a wrong password is one clear line without the password")
    func wrongPassword() async throws {
        var target = try await TestServer.target()
        target.password = "definitely-wrong-secret"
        let error = await #expect(throws: PostgresStoreError.self) { try await PostgresStore.metadata(of: target) }
        let text = error?.description ?? ""
        #expect(text.contains("refused the login"))
        #expect(!text.contains("definitely-wrong-secret"))
        #expect(!text.contains("\n"))
    }

    @Test("a server that never answers fails within the connect timeout; a closed port at once; both in one line")
    func unreachable() async throws {
        // A socket that listens but never answers: the TCP handshake completes, the login never does.
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(silent >= 0)
        defer { close(silent) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(silent, $0, length) == 0 && listen(silent, 4) == 0 && getsockname(silent, $0, &length) == 0 }
        }
        #expect(bound)
        var target = try await TestServer.target()
        target.host = "127.0.0.1"
        target.port = Int(UInt16(bigEndian: address.sin_port))
        target.connectTimeout = .seconds(2)
        let error = await #expect(throws: PostgresStoreError.self) { try await PostgresStore.metadata(of: target) }
        #expect(error?.isTransient == true)
        #expect(error?.description.contains("connect timeout") == true, "\(String(describing: error))")
        #expect(error?.description.contains("\n") == false)

        target.port = 1
        let refused = await #expect(throws: PostgresStoreError.self) { try await PostgresStore.metadata(of: target) }
        #expect(refused?.description.contains("cannot connect") == true, "\(String(describing: refused))")
    }

    @Test("sslmode=require connects over TLS; sslmode=disable does not")
    func tlsRequired() async throws {
        let url = try await TestServer.url()
        let secure = try PostgresTarget(url: url + (url.contains("?") ? "&" : "?") + "sslmode=require")
        #expect(secure.tls == .require)
        let encrypted = try await TestServer.rows(secure, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        #expect(encrypted == [["t"]])
        let plain = try PostgresTarget(url: url + (url.contains("?") ? "&" : "?") + "sslmode=disable")
        let unencrypted = try await TestServer.rows(plain, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        #expect(unencrypted == [["f"]])
    }

    @Test("sslmode=require, verify-ca or verify-full against a server without TLS: one clear line naming that mode",
          arguments: [PostgresTarget.TLSMode.require, .verifyCA, .verifyFull])
    func tlsRefused(_ mode: PostgresTarget.TLSMode) async throws {
        // A server that answers the TLS request with "N" (no TLS), as PostgreSQL without ssl does.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        #expect(bound)
        let server = Thread {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            var request = [UInt8](repeating: 0, count: 8)
            _ = read(client, &request, 8)
            var refusal = UInt8(ascii: "N")
            _ = write(client, &refusal, 1)
            Thread.sleep(forTimeInterval: 0.5)
            close(client)
        }
        server.start()
        var target = try await TestServer.target()
        target.host = "127.0.0.1"
        target.port = Int(UInt16(bigEndian: address.sin_port))
        target.tls = mode
        let error = await #expect(throws: PostgresStoreError.self) { try await PostgresStore.metadata(of: target) }
        let message = error?.description ?? ""
        #expect(message.contains("TLS") && message.contains("sslmode=\(mode.rawValue) "), "\(message)")
    }

    @Test("URLs and PG variables; the description never shows the password")
    func configuration() throws {
        let target = try PostgresTarget(url: "postgres://ann:s%40cret@db.example:6543/app?sslmode=require&schema=shop&connect_timeout=3", environment: [:])
        #expect(target.host == "db.example")
        #expect(target.port == 6543)
        #expect(target.username == "ann")
        #expect(target.password == "s@cret")
        #expect(target.database == "app")
        #expect(target.schema == "shop")
        #expect(target.tls == .require)
        #expect(target.connectTimeout == .seconds(3))
        #expect(!target.description.contains("cret"))
        let fromEnvironment = try PostgresTarget.fromEnvironment(["PGHOST": "h", "PGPORT": "7", "PGUSER": "u", "PGPASSWORD": "p", "PGDATABASE": "d"])
        #expect(fromEnvironment.host == "h" && fromEnvironment.port == 7 && fromEnvironment.username == "u" && fromEnvironment.password == "p")
        #expect(throws: PostgresStoreError.self) { try PostgresTarget(url: "mysql://x", environment: [:]) }
        #expect(throws: PostgresStoreError.self) { try PostgresTarget(url: "postgres://x/?sslmode=sometimes", environment: [:]) }
    }
}
#endif

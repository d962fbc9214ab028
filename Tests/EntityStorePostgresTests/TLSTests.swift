#if PostgreSQL
import EntityStore
@testable import EntityStorePostgres
import EntityStoreTestSupport
import Foundation
import Testing

/// `verify-ca` and `verify-full` verify the server's certificate, as libpq does, against
/// the throwaway cluster's self-signed one (`server.crt`, issued to 127.0.0.1).
@Suite("TLS certificate verification", .enabled(if: TestServer.enabled, postgresSkipNote), .threadsOfItsOwn)
struct TLSTests {
    /// The cluster's certificate, when this run started a cluster that offers TLS.
    static func certificate() async throws -> String? {
        guard TestServer.configuredURL == nil else { return nil }
        _ = try await TestServer.url()
        let path = ThrowawayCluster.shared.directory + "/server.crt"
        guard FileManager.default.fileExists(atPath: path) else {
            // The cluster offers TLS when openssl is installed, as it is with PostgreSQL's packages.
            if TestServer.isCI { Issue.record("the throwaway cluster offers no TLS (is openssl installed?)") }
            return nil
        }
        return path
    }

    static func connects(_ target: PostgresTarget) async -> PostgresStoreError? {
        do {
            try await target.withSession { session in _ = try session.execute("SELECT 1") }
            return nil
        } catch {
            return error
        }
    }

    @Test("verify-ca and verify-full connect with the server's root certificate, and refuse without it or with another")
    func verification() async throws {
        guard let certificate = try await Self.certificate() else { return }
        var target = try await TestServer.target("tls")
        target.host = "127.0.0.1"
        for mode in [PostgresTarget.TLSMode.verifyCA, .verifyFull] {
            target.tls = mode
            target.rootCertificate = certificate
            let verified = await Self.connects(target)
            #expect(verified == nil, "\(mode.rawValue) with the right root certificate: \(String(describing: verified))")

            target.rootCertificate = FileManager.default.temporaryDirectory.appendingPathComponent("absent-\(UUID().uuidString).crt").path
            let missing = await Self.connects(target)
            #expect(missing != nil, "\(mode.rawValue) connected without a root certificate")
            #expect(missing?.description.contains("\n") == false)
            #expect(missing?.description.contains(mode.rawValue) == true || missing?.description.contains("certificate") == true, "\(String(describing: missing))")

            let other = FileManager.default.temporaryDirectory.appendingPathComponent("other-\(UUID().uuidString)")
            let made = try await onOwnThread { () throws -> Int32 in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                // An EC key, as the cluster's own: made in milliseconds, an RSA one in a fifth of a second.
                process.arguments = ["openssl", "req", "-new", "-x509", "-days", "1", "-nodes", "-subj", "/CN=127.0.0.1",
                                     "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                     "-keyout", other.path + ".key", "-out", other.path + ".crt"]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                process.waitUntilExit()
                return process.terminationStatus
            }
            guard made == 0 else { continue }
            target.rootCertificate = other.path + ".crt"
            let wrong = await Self.connects(target)
            #expect(wrong != nil, "\(mode.rawValue) connected with another root certificate")
            #expect(wrong?.description.contains("\n") == false)
        }
    }

    @Test("verify-full refuses a certificate that does not name the host")
    func hostName() async throws {
        guard let certificate = try await Self.certificate() else { return }
        var target = try await TestServer.target("tlshost")
        target.host = "localhost"  // the certificate names 127.0.0.1
        target.tls = .verifyFull
        target.rootCertificate = certificate
        let refused = await Self.connects(target)
        #expect(refused != nil, "verify-full accepted a certificate for another host")
        target.tls = .verifyCA
        let accepted = await Self.connects(target)
        #expect(accepted == nil, "verify-ca checks the chain, not the host: \(String(describing: accepted))")
    }
}
#endif

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock time in nanoseconds since 1970 (`CLOCK_REALTIME`): unlike the monotonic
/// clock, its instants mean the same in every process of the machine.
func realtimeNanoseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return now.tv_sec &* 1_000_000_000 &+ now.tv_nsec
}

/// Seconds of CPU (user and system) this process used so far.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// A child process running this executable in a hidden role (`--fanout-child ROLE`),
/// spoken to by lines: commands on its standard input, reports on its standard output.
/// Its standard error is this process's. Closing its input tells it to end.
final class ChildProcess {
    let name: String
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    /// Starts this executable with `arguments`, its environment plus `environment` (URLs
    /// travel there, never on a command line other users can read).
    init(name: String, arguments: [String], environment: [String: String]) throws {
        self.name = name
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// Sends one line.
    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// The next line the child prints, waiting up to `seconds`; nil at its end of output.
    func readLine(seconds: Double) throws -> String? {
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        let descriptor = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let now = monotonicNanoseconds()
            guard now < deadline else { throw BenchFailure("\(name): no line within \(String(seconds, decimals: 0)) s") }
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, Int32(min(1_000, (deadline - now) / 1_000_000 + 1)))
            if ready < 0 && errno != EINTR { throw BenchFailure("\(name): poll failed (errno \(errno))") }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw BenchFailure("\(name): read failed (errno \(errno))")
            }
            if count == 0 {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// The next line, which must start with `word`; its other words.
    func expect(_ word: String, seconds: Double) throws -> [Substring] {
        guard let line = try readLine(seconds: seconds) else { throw BenchFailure("\(name) ended before '\(word)'") }
        let words = line.split(separator: " ")
        guard words.first.map(String.init) == word else { throw BenchFailure("\(name): expected '\(word)', got '\(line.prefix(200))'") }
        return Array(words.dropFirst())
    }

    /// Ends the child: closes its input (it ends by itself on that), then terminates it if
    /// it has not ended within `seconds`, and waits for it.
    func stop(seconds: Double = 10) {
        try? input.fileHandleForWriting.close()
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        while process.isRunning && monotonicNanoseconds() < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            usleep(200_000)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
    }
}

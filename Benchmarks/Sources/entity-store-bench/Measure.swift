import CBenchSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic time in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Seconds taken by `body`.
@inline(__always)
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = monotonicNanoseconds()
    try body()
    return Double(monotonicNanoseconds() - start) / 1e9
}

/// The median of `values` (the mean of the two middle values for an even count).
func median(_ values: [Double]) -> Double {
    precondition(!values.isEmpty)
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The `p`-th percentile (0...100) of `values`, nearest-rank.
func percentile(_ values: [Double], _ p: Double) -> Double {
    precondition(!values.isEmpty)
    let sorted = values.sorted()
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank, 1), sorted.count) - 1]
}

/// How many times each timed figure is repeated after its warm-up run.
struct Repetitions {
    let warmUp: Int
    let measured: Int

    /// Runs `body` warm-up times, then `measured` times, and returns the median of what
    /// the measured runs returned (each run times its own work, leaving set-up out).
    func medianOf(_ body: () throws -> Double) rethrows -> Double {
        for _ in 0..<warmUp { _ = try body() }
        var results: [Double] = []
        for _ in 0..<measured { results.append(try body()) }
        return median(results)
    }

    /// Runs `baseline` and `ours` alternately (warm-up runs, then `measured` pairs) and
    /// returns the median of each. Alternating puts both sides of a ratio through the same
    /// moments of a shared machine, whose speed drifts by tens of percent over seconds.
    func pairedMedians(baseline: () throws -> Double, ours: () throws -> Double) rethrows -> (baseline: Double, ours: Double) {
        for _ in 0..<warmUp {
            _ = try baseline()
            _ = try ours()
        }
        var baselines: [Double] = []
        var oursResults: [Double] = []
        for _ in 0..<measured {
            baselines.append(try baseline())
            oursResults.append(try ours())
        }
        return (median(baselines), median(oursResults))
    }
}

/// Keeps the optimizer from discarding a computed value.
@inline(never)
func consume<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

// MARK: Memory

/// The process's resident memory in bytes, from `/proc/self/statm` (resident pages ×
/// page size), after handing freed heap memory back to the system so that it measures
/// what is live. Nil where `/proc` is unavailable.
func residentBytes() -> Int? {
    #if canImport(Glibc)
    _ = bench_release_free_memory()
    guard let file = fopen("/proc/self/statm", "r") else { return nil }
    defer { fclose(file) }
    var size = 0
    var resident = 0
    guard fscanf_two(file, &size, &resident) else { return nil }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
    return nil
    #endif
}

#if canImport(Glibc)
/// Reads the first two integers of a statm line.
private func fscanf_two(_ file: UnsafeMutablePointer<FILE>, _ first: inout Int, _ second: inout Int) -> Bool {
    var buffer = [CChar](repeating: 0, count: 256)
    guard fgets(&buffer, Int32(buffer.count), file) != nil else { return false }
    let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let fields = line.split(separator: " ").compactMap { Int($0) }
    guard fields.count >= 2 else { return false }
    first = fields[0]
    second = fields[1]
    return true
}
#endif

// MARK: Progress

/// Writes one progress line to standard error (never to standard output, which the
/// JSON mode keeps for results).
func progress(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

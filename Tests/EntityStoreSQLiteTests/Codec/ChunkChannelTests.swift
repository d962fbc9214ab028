import Foundation
import Synchronization
import Testing
import EntityStoreCodec

/// The hand-off between the threads of both back ends' restores and snapshots.
@Suite("Chunk channel")
struct ChunkChannelTests {
    @Test func chunksArriveInOrderAndEmptiedBuffersComeBack() throws {
        let channel = ChunkChannel<Int>(capacity: 2)
        let sentFull = 50
        let producer = Thread {
            var chunk: [Int] = []
            var recycled = 0
            for number in 0..<sentFull {
                chunk.append(contentsOf: [number * 2, number * 2 + 1])
                guard channel.send(&chunk) else { return }
                // What comes back is empty: a recycled buffer keeps its capacity.
                precondition(chunk.isEmpty)
                if chunk.capacity > 0 { recycled += 1 }
            }
            // Stored before the exit is signalled, which orders it before the test reads it.
            recycledCount.withLock { $0 = recycled }
            channel.finish()
            channel.producerExited()
        }
        producer.start()
        var received: [Int] = []
        var chunk: [Int] = []
        while channel.receive(into: &chunk) {
            received.append(contentsOf: chunk)
            chunk.removeAll(keepingCapacity: true)
        }
        #expect(channel.waitForProducer() == nil)
        #expect(received == Array(0..<(sentFull * 2)))
        #expect(recycledCount.withLock { $0 } > 0)
    }

    @Test func aProducerErrorReachesTheConsumerAfterTheChunksSentBeforeIt() {
        struct Broken: Error {}
        let channel = ChunkChannel<Int>(capacity: 4)
        var chunk = [1, 2]
        #expect(channel.send(&chunk))
        channel.finish(throwing: Broken())
        channel.producerExited()
        var received: [Int] = []
        var incoming: [Int] = []
        while channel.receive(into: &incoming) { received += incoming; incoming.removeAll() }
        #expect(received == [1, 2])
        #expect(channel.waitForProducer() is Broken)
    }

    @Test func withoutACapacityTheProducerNeverWaitsAndChunksArriveInOrder() {
        // PostgreSQL's reading side must keep draining the server: thousands of chunks can
        // wait, and taking them one by one must keep their order across compactions.
        let channel = ChunkChannel<Int>()
        var received: [Int] = []
        var incoming: [Int] = []
        var next = 0
        for round in 0..<5 {
            for _ in 0..<(300 * (round + 1)) {
                var chunk = [next, next + 1]
                next += 2
                #expect(channel.send(&chunk))
            }
            // Take a part of what waits, so the queue's head moves past its compaction point.
            for _ in 0..<(200 * (round + 1)) {
                #expect(channel.receive(into: &incoming))
                received += incoming
                incoming.removeAll(keepingCapacity: true)
            }
        }
        channel.finish()
        while channel.receive(into: &incoming) {
            received += incoming
            incoming.removeAll(keepingCapacity: true)
        }
        #expect(received == Array(0..<next))
    }

    @Test func aJoinableThreadReturnsWhatItsBodyReturnedOrThrew() {
        struct Broken: Error {}
        let channel = ChunkChannel<Int>()
        let builder = JoinableThread(name: "test builder") {
            var total = 0
            var chunk: [Int] = []
            while channel.receive(into: &chunk) {
                total += chunk.reduce(0, +)
                chunk.removeAll(keepingCapacity: true)
            }
            return total
        }
        for value in 1...100 {
            var chunk = [value]
            #expect(channel.send(&chunk))
        }
        channel.finish()
        #expect((try? builder.join().get()) == 5050)
        let failing = JoinableThread<Int>(name: "test failure") { throw Broken() }
        #expect(throws: Broken.self) { try failing.join().get() }
    }

    @Test func aCancelledChannelRefusesChunksAndEndsTheConsumer() {
        let channel = ChunkChannel<Int>(capacity: 1)
        var chunk = [7]
        #expect(channel.send(&chunk))
        channel.cancel()
        var next = [8]
        #expect(!channel.send(&next))
        var incoming: [Int] = []
        #expect(!channel.receive(into: &incoming))
    }
}

/// How many emptied buffers the producer got back, read once it is done.
private let recycledCount = Mutex(0)

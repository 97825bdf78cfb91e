import Testing
@testable import HearthGRPC

/// Messages framed back to back as gRPC's Length-Prefixed-Message, read back one by one.
@Suite struct GRPCMessageBatchTests {
    @Test func eachMessageIsFramedWithItsLengthInOrder() {
        var batch = GRPCMessageBatch()
        batch.append([1, 2, 3])
        batch.append([])
        batch.append(writing: { $0 += [UInt8](repeating: 7, count: 300) })
        #expect(batch.count == 3)
        #expect(batch.framed.count == 3 * 5 + 3 + 300)
        #expect(Array(batch.framed[0..<8]) == [0, 0, 0, 0, 3, 1, 2, 3])
        #expect(Array(batch.framed[8..<13]) == [0, 0, 0, 0, 0])
        #expect(Array(batch.framed[13..<18]) == [0, 0, 0, 1, 44])
        var messages: [[UInt8]] = []
        batch.forEachMessage { messages.append(Array($0)) }
        #expect(messages == [[1, 2, 3], [], [UInt8](repeating: 7, count: 300)])
    }

    /// A unary answer's single message framed on its own (`GRPCCall.framed`) as a batch frames it.
    @Test func aSingleMessageIsFramedAsInABatch() {
        for message in [[], [1, 2, 3], [UInt8](repeating: 7, count: 300), [UInt8](repeating: 9, count: 70_000)] as [[UInt8]] {
            var batch = GRPCMessageBatch()
            batch.append(message)
            #expect(GRPCCall.framed(message) == batch.framed)
        }
    }

    @Test func anEmptyBatchHoldsNothing() {
        let batch = GRPCMessageBatch(capacity: 64)
        var seen = 0
        batch.forEachMessage { _ in seen += 1 }
        #expect(batch.count == 0 && batch.framed.isEmpty && seen == 0)
    }
}

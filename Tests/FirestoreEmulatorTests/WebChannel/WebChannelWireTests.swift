import Foundation
import HearthGRPC
import Testing
@testable import FirestoreEmulator

/// The WebChannel framing read and written exactly as Closure's `wirev8.js` / `channelrequest.js`
/// make and read it (bodies copied from what the Firebase web SDK sends).
struct WebChannelWireTests {
    @Test func handshakeBodyWithEncodedHeaders() throws {
        // encodeInitMessageHeaders: `headers=` first, then the raw-JSON message (encodeURIComponent).
        let body = "headers=Authorization%3ABearer%20owner%0D%0AX-Goog-Api-Client%3Agl-js%2F%20fire%2F11.0.0%0D%0A"
            + "&count=1&ofs=0&req0___data__=%7B%22database%22%3A%22projects%2Fp%2Fdatabases%2F(default)%22%7D"
        let parsed = try WebChannelWire.parseForward(Array(body.utf8))
        #expect(parsed.offset == 0)
        #expect(parsed.messages == [#"{"database":"projects/p/databases/(default)"}"#])
        #expect(parsed.headers.map { [$0.name, $0.value] } == [["Authorization", "Bearer owner"], ["X-Goog-Api-Client", "gl-js/ fire/11.0.0"]])
    }

    @Test func forwardBodyWithSeveralMessages() throws {
        let parsed = try WebChannelWire.parseForward(Array("count=2&ofs=7&req0___data__=%7B%7D&req1___data__=%7B%22a%22%3A1%7D".utf8))
        #expect(parsed == WebChannelWire.ForwardBody(offset: 7, messages: ["{}", #"{"a":1}"#], headers: []))
    }

    @Test func handshakeWithoutMessages() throws {
        #expect(try WebChannelWire.parseForward(Array("count=0".utf8)) == WebChannelWire.ForwardBody(offset: 0, messages: [], headers: []))
        #expect(try WebChannelWire.parseForward([]) == WebChannelWire.ForwardBody(offset: 0, messages: [], headers: []))
    }

    @Test(arguments: [
        ("count=x", "Invalid count."),
        ("count=-1", "Invalid count."),
        ("count=1&ofs=-2&req0___data__=%7B%7D", "Invalid ofs."),
        ("count=2&ofs=0&req0___data__=%7B%7D", "Message 1 has no __data__ field."),
        ("count=1&ofs=0&req0_key=value", "Message 0 has no __data__ field."),
    ])
    func badBodies(body: String, reason: String) {
        #expect(throws: WebChannelWire.BadRequest(reason: reason)) { try WebChannelWire.parseForward(Array(body.utf8)) }
    }

    @Test func headerBlockLines() {
        let h = WebChannelWire.parseHeaderBlock("Authorization:Bearer a:b\r\nbroken\r\n x-goog-request-params : projects/p/databases/d\r\n")
        #expect(h.map { [$0.name, $0.value] } == [["Authorization", "Bearer a:b"], ["x-goog-request-params", "projects/p/databases/d"]])
    }

    @Test func chunkLengthCountsUTF16Units() {
        // "é" is one unit, "😀" two (a JavaScript string's length), though 2 and 4 bytes in UTF-8.
        #expect(WebChannelWire.chunk("[\"é😀\"]") == Array("7\n[\"é😀\"]".utf8))
        #expect(WebChannelWire.chunk("[1,2,7]") == Array("7\n[1,2,7]".utf8))
    }

    @Test func arraysAndHandshake() {
        #expect(WebChannelWire.arrays([(id: 0, payload: WebChannelWire.handshake(sid: "Ab-_x=="))])
                == #"[[0,["c","Ab-_x==","",8,12,30000]]]"#)
        #expect(WebChannelWire.arrays([(id: 5, payload: WebChannelWire.noop), (id: 6, payload: WebChannelWire.close)])
                == #"[[5,["noop"]],[6,["close"]]]"#)
        #expect(WebChannelWire.forwardAnswer(backchannel: true, lastArrayID: 3, outstanding: 0) == "[1,3,0]")
    }

    @Test func errorPayloadAsTheEmulatorWordsIt() {
        #expect(WebChannelWire.error(GRPCStatus(.permissionDenied, "No matching allow statements"))
                == #"[{"error":{"message":"PERMISSION_DENIED: No matching allow statements","status":"PERMISSION_DENIED"}}]"#)
    }

    @Test func everyStatusHasItsName() {
        let names = GRPCStatus.Code.allCases.map(WebChannelWire.statusName)
        #expect(Set(names).count == names.count)
        #expect(WebChannelWire.statusName(.unauthenticated) == "UNAUTHENTICATED")
    }
}

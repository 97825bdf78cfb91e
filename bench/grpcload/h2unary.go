// The light client for Commit, the Write stream, GetDocument, RunQuery and BatchGetDocuments (-client h2
// with -mode commit, write, get, query or batchget): the same calls as runCommit, runWrite and runGet in
// main.go and runQueryCalls and runBatchGetCalls in reads.go, on raw HTTP/2 connections (golang.org/x/net/http2's
// Framer and hpack, as h2listen.go) with one goroutine per connection doing all of its work.
//
// Why: grpc-go spends per call a goroutine hand-off each way, a protobuf marshal and a full unmarshal
// into Go structs and its own flow-control bookkeeping; on the bench's two cores that CPU is taken
// from the server being measured (docs/benchmarks.md, "gRPC Commit and the Write stream, round two").
// This client does per call what a benchmark client must: one HEADERS and one DATA frame out (header
// fields through one HPACK encoder per connection, so repeated fields are sent indexed as grpc-go
// sends them; the request body from a template with the document id patched in), and the answer read
// and checked in full.
//
// Checks, per call (a failure is counted under its gRPC code name, as main.go counts grpc-go's
// errors; a protocol violation ends the run with exit status 1): :status 200 and a gRPC content-type;
// exactly one uncompressed response message for a Commit, one per request on a Write stream; trailers
// with grpc-status 0 (a Trailers-Only answer or another status is a failure with that code). A
// CommitResponse must carry one WriteResult with an update_time and a commit_time; a WriteResponse a
// stream token — on the handshake a stream id and no results, after each write a new token, one
// WriteResult with an update_time and a commit_time — and the next request sends that token. A
// GetDocument answer must be the requested document (its name, a create_time and an update_time) and
// byte for byte the same message as the run's first answer (nothing writes it during the run), the
// check h2load's get rows make by length. A RunQuery call counts only when its messages carried exactly
// -expect documents, a BatchGetDocuments call only when every document named came back found (as
// reads.go counts them); each such document must be a Document with a name under the documents root, a
// create_time and an update_time, in a message with a read_time. HTTP/2 flow control is kept both ways
// (requests wait for the server's windows).
//
// The request header fields go through Go's HPACK encoder, which indexes every field that fits its
// table, authorization included, as grpc-go's transport does: from the second call on, the ~1 KB ID
// token is sent as a table reference. h2load (nghttp2's encoder) sends it never-indexed and Huffman-coded on
// every call, and the server decodes it every time (docs/benchmarks.md, grpcs1c).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang/protobuf/proto"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	pb "google.golang.org/genproto/googleapis/firestore/v1"
	"google.golang.org/grpc/codes"
)

// idDigits is the width of the sequence number patched into each request's document id.
const idDigits = 12

// h2slot is one of a connection's -streams workers: one call (Commit) or one Write stream in flight.
type h2slot struct {
	stream  *h2call
	token   []byte // the Write stream's last token
	closing bool   // the Write stream was half-closed and waits for its trailers
	done    bool
}

// h2call is one HTTP/2 stream: a unary Commit or a Write stream.
type h2call struct {
	id       uint32
	slot     *h2slot
	window   int64 // what we may still send on it
	unacked  int   // DATA bytes received since its last WINDOW_UPDATE
	buf      []byte
	headers  bool
	messages int
	docs     int // RunQuery: documents; BatchGetDocuments: found documents
	started  time.Time
	failed   bool
}

// h2pending is a DATA frame waiting for the server's flow-control window.
type h2pending struct {
	call      *h2call
	body      []byte
	endStream bool
}

// h2client is one connection and its slots; only its goroutine touches it.
type h2client struct {
	write     bool   // Write streams, else unary Commits (or the calls of `fixed`)
	kind      string // the mode: commit, write, get, query or batchget
	fixed     []byte // the framed request of a get, query or batchget, the same for every call
	want      int    // query: the documents each call must answer; batchget: the documents named
	answer    []byte // GetDocument: the run's first answer, which every later one must equal
	c         net.Conn
	r         *bufio.Reader
	w         *bufio.Writer
	fr        *http2.Framer
	enc       *hpack.Encoder
	hbuf      bytes.Buffer
	fields    []hpack.HeaderField
	calls     map[uint32]*h2call
	next      uint32
	connWin   int64
	initWin   int64
	unacked   int
	pending   []h2pending
	slots     []*h2slot
	live      int
	stop      *int32
	counts    *counts
	template  []byte // the request body with a placeholder id
	idAt      int    // where the placeholder's digits start
	seq       *int64
	handshake []byte
}

// h2template marshals m (built around a document id of idDigits '#') and finds that id in the bytes.
func h2template(build func(id string) proto.Message) ([]byte, int) {
	mark := strings.Repeat("#", idDigits)
	b, err := proto.Marshal(build(*tag + "-" + mark))
	if err != nil {
		die("marshal: %v", err)
	}
	at := bytes.Index(b, []byte(mark))
	if at < 0 || bytes.Count(b, []byte(mark)) != 1 {
		die("request template: the document id is not found exactly once")
	}
	return b, at
}

// body is the next request's message: the template with the next sequence number as the id.
func (hc *h2client) body() []byte {
	out := make([]byte, len(hc.template), len(hc.template)+32)
	copy(out, hc.template)
	n := atomic.AddInt64(hc.seq, 1)
	for i := hc.idAt + idDigits - 1; i >= hc.idAt; i-- {
		out[i] = byte('0' + n%10)
		n /= 10
	}
	return out
}

func framed(m []byte) []byte {
	out := make([]byte, 5+len(m))
	out[1], out[2], out[3], out[4] = byte(len(m)>>24), byte(len(m)>>16), byte(len(m)>>8), byte(len(m))
	copy(out[5:], m)
	return out
}

// runH2Unary runs -mode commit, write or get through the light client: warm-up, then the timed phase.
func runH2Unary(mode string) {
	write := mode == "write"
	var fixed []byte
	want := 0
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		die("-addr must be a loopback host:port, got %q", *addr)
	}
	var template []byte
	var idAt int
	switch mode {
	case "get":
		// One goroutine per connection does all the work: one P, as wrk runs one thread, so that no
		// idle P's thread spins looking for work (polling the socket) while the call is in flight —
		// the client then waits for each answer as wrk does, asleep in epoll (grpcs1c).
		runtime.GOMAXPROCS(1)
		b, err := proto.Marshal(&pb.GetDocumentRequest{Name: docsRoot() + "/" + *doc})
		if err != nil {
			die("marshal: %v", err)
		}
		fixed = framed(b)
	case "query", "batchget":
		// As get: one P.
		runtime.GOMAXPROCS(1)
		var m proto.Message = queryRequest()
		want = *expect
		if mode == "batchget" {
			r := batchGetRequest()
			m, want = r, len(r.Documents)
		}
		b, err := proto.Marshal(m)
		if err != nil {
			die("marshal: %v", err)
		}
		fixed = framed(b)
	case "write":
		// The writes only; each request appends its stream token (field 4) after them.
		template, idAt = h2template(func(id string) proto.Message { return &pb.WriteRequest{Writes: []*pb.Write{createWrite(id)}} })
	default:
		template, idAt = h2template(func(id string) proto.Message {
			return &pb.CommitRequest{Database: database(), Writes: []*pb.Write{createWrite(id)}}
		})
	}
	handshake, _ := proto.Marshal(&pb.WriteRequest{Database: database()})
	var seq int64
	per := *perConn
	if per < 1 {
		per = 1
	}
	phase := func(seconds float64) (*counts, float64, int) {
		var stop int32
		c := &counts{}
		var wg sync.WaitGroup
		start := time.Now()
		nconns := 0
		for first := 0; first < *streams; first += per {
			n := per
			if *streams-first < n {
				n = *streams - first
			}
			hc := &h2client{write: write, kind: mode, fixed: fixed, want: want, template: template, idAt: idAt, seq: &seq, handshake: handshake,
				stop: &stop, counts: c}
			hc.dial(n)
			nconns++
			wg.Add(1)
			go func() { defer wg.Done(); hc.run() }()
		}
		time.Sleep(time.Duration(seconds * float64(time.Second)))
		atomic.StoreInt32(&stop, 1)
		wg.Wait()
		return c, time.Since(start).Seconds(), nconns
	}
	if *warmup > 0 {
		phase(*warmup)
	}
	c, secs, nconns := phase(*duration)
	emit(c.summary(secs, map[string]interface{}{"streams": *streams, "connections": nconns, "client": "h2"}))
}

func (hc *h2client) dial(slots int) {
	c, err := net.Dial("tcp", *addr)
	if err != nil {
		die("dial %s: %v", *addr, err)
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	hc.c = c
	hc.r = bufio.NewReaderSize(c, h2ReadBuf)
	hc.w = bufio.NewWriterSize(c, 64<<10)
	hc.fr = http2.NewFramer(hc.w, hc.r)
	hc.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	hc.fr.MaxHeaderListSize = 1 << 20
	hc.fr.SetMaxReadFrameSize(1 << 24)
	hc.enc = hpack.NewEncoder(&hc.hbuf)
	path := "/google.firestore.v1.Firestore/" + map[string]string{"commit": "Commit", "write": "Write", "get": "GetDocument",
		"query": "RunQuery", "batchget": "BatchGetDocuments"}[hc.kind]
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", path}, {":authority", *addr},
		{"content-type", "application/grpc"}, {"te", "trailers"}, {"user-agent", "grpcload-h2"},
		{"google-cloud-resource-prefix", database()}, {"x-goog-request-params", "database=" + database()}} {
		hc.fields = append(hc.fields, hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if *token != "" {
		hc.fields = append(hc.fields, hpack.HeaderField{Name: "authorization", Value: "Bearer " + *token})
	}
	hc.calls = map[uint32]*h2call{}
	hc.next = 1
	hc.connWin, hc.initWin = 65535, 65535
	if _, err := hc.w.WriteString(http2.ClientPreface); err != nil {
		die("h2 write: %v", err)
	}
	hc.check(hc.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window},
		http2.Setting{ID: http2.SettingEnablePush, Val: 0}))
	hc.check(hc.fr.WriteWindowUpdate(0, h2Window-65535))
	for i := 0; i < slots; i++ {
		hc.slots = append(hc.slots, &h2slot{})
	}
	hc.live = slots
	for _, s := range hc.slots {
		hc.start(s)
	}
}

func (hc *h2client) check(err error) {
	if err != nil {
		die("h2 write: %v", err)
	}
}

// open starts a stream for slot s with the request headers.
func (hc *h2client) open(s *h2slot) *h2call {
	call := &h2call{id: hc.next, slot: s, window: hc.initWin, started: time.Now()}
	hc.next += 2
	hc.calls[call.id] = call
	s.stream = call
	hc.hbuf.Reset()
	for _, f := range hc.fields {
		hc.enc.WriteField(f)
	}
	hc.check(hc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: call.id, BlockFragment: hc.hbuf.Bytes(), EndHeaders: true}))
	return call
}

// start begins slot s's work: a Commit call, or a Write stream with its handshake.
func (hc *h2client) start(s *h2slot) {
	call := hc.open(s)
	if hc.write {
		hc.send(call, framed(hc.handshake), false)
	} else if hc.fixed != nil {
		hc.send(call, hc.fixed, true)
	} else {
		hc.send(call, framed(hc.body()), true)
	}
}

// next is slot s's next call after an answer (or its end when the run is stopping).
func (hc *h2client) again(s *h2slot) {
	if atomic.LoadInt32(hc.stop) != 0 {
		if hc.write && s.stream != nil {
			// Half-close; the trailers (grpc-status 0) end the slot.
			s.closing = true
			hc.send(s.stream, nil, true)
			return
		}
		hc.finishSlot(s)
		return
	}
	if !hc.write {
		hc.start(s)
		return
	}
	body := hc.body()
	body = append(body, 0x22)
	body = append(body, proto.EncodeVarint(uint64(len(s.token)))...)
	body = append(body, s.token...)
	s.stream.started = time.Now()
	hc.send(s.stream, framed(body), false)
}

func (hc *h2client) finishSlot(s *h2slot) {
	if !s.done {
		s.done = true
		hc.live--
	}
}

// send writes a DATA frame now, or queues it until the windows allow it.
func (hc *h2client) send(call *h2call, body []byte, end bool) {
	if len(hc.pending) > 0 || !hc.fits(call, len(body)) {
		hc.pending = append(hc.pending, h2pending{call, body, end})
		return
	}
	hc.writeData(call, body, end)
}

func (hc *h2client) fits(call *h2call, n int) bool {
	return int64(n) <= hc.connWin && int64(n) <= call.window && n <= 16384
}

func (hc *h2client) writeData(call *h2call, body []byte, end bool) {
	hc.connWin -= int64(len(body))
	call.window -= int64(len(body))
	hc.check(hc.fr.WriteData(call.id, end, body))
}

// flushPending sends the queued frames the windows now allow, in order.
func (hc *h2client) flushPending() {
	for len(hc.pending) > 0 && hc.fits(hc.pending[0].call, len(hc.pending[0].body)) {
		p := hc.pending[0]
		hc.pending = hc.pending[1:]
		hc.writeData(p.call, p.body, p.endStream)
	}
}

// run reads frames and answers them until every slot is done; writes are flushed whenever no read
// input is left to handle (one socket write per batch of answers).
func (hc *h2client) run() {
	defer hc.c.Close()
	for hc.live > 0 {
		if hc.r.Buffered() == 0 {
			if err := hc.w.Flush(); err != nil {
				die("h2 write: %v", err)
			}
			hc.c.SetReadDeadline(time.Now().Add(time.Duration(*timeoutSec * float64(time.Second))))
		}
		f, err := hc.fr.ReadFrame()
		if err != nil {
			die("h2 read: %v", err)
		}
		hc.frame(f)
	}
	hc.w.Flush()
}

func (hc *h2client) frame(f http2.Frame) {
	switch f := f.(type) {
	case *http2.SettingsFrame:
		if f.IsAck() {
			return
		}
		f.ForeachSetting(func(s http2.Setting) error {
			switch s.ID {
			case http2.SettingInitialWindowSize:
				delta := int64(s.Val) - hc.initWin
				hc.initWin = int64(s.Val)
				for _, c := range hc.calls {
					c.window += delta
				}
			case http2.SettingMaxConcurrentStreams:
				if int(s.Val) < len(hc.slots) {
					die("the server allows %d streams per connection, fewer than %d", s.Val, len(hc.slots))
				}
			case http2.SettingHeaderTableSize:
				hc.enc.SetMaxDynamicTableSizeLimit(s.Val)
			case http2.SettingMaxFrameSize:
				// Requests are far below the 16 KiB every peer accepts.
			}
			return nil
		})
		hc.check(hc.fr.WriteSettingsAck())
		hc.flushPending()
	case *http2.PingFrame:
		if !f.IsAck() {
			hc.check(hc.fr.WritePing(true, f.Data))
		}
	case *http2.WindowUpdateFrame:
		if f.StreamID == 0 {
			hc.connWin += int64(f.Increment)
		} else if c := hc.calls[f.StreamID]; c != nil {
			c.window += int64(f.Increment)
		}
		hc.flushPending()
	case *http2.PriorityFrame:
	case *http2.GoAwayFrame:
		die("GOAWAY from the server: %v %q", f.ErrCode, f.DebugData())
	case *http2.RSTStreamFrame:
		c := hc.calls[f.StreamID]
		if c == nil {
			return // a stream already ended on our side
		}
		hc.fail(c, "RST_STREAM "+f.ErrCode.String(), fmt.Sprintf("stream reset by the server: %v", f.ErrCode))
	case *http2.MetaHeadersFrame:
		c := hc.calls[f.StreamID]
		if c == nil {
			die("headers on unknown stream %d", f.StreamID)
		}
		hc.headers(c, f)
	case *http2.DataFrame:
		n := int(f.Length)
		hc.unacked += n
		c := hc.calls[f.StreamID]
		if c != nil {
			c.unacked += n
			c.buf = append(c.buf, f.Data()...)
			if f.StreamEnded() {
				hc.fail(c, "Internal", "stream ended without trailers")
			} else {
				hc.messages(c)
			}
		}
		if hc.unacked >= h2TopUp {
			hc.check(hc.fr.WriteWindowUpdate(0, uint32(hc.unacked)))
			hc.unacked = 0
		}
		if c != nil && hc.calls[c.id] != nil && c.unacked >= h2TopUp {
			hc.check(hc.fr.WriteWindowUpdate(c.id, uint32(c.unacked)))
			c.unacked = 0
		}
	default:
		die("unexpected frame %v", f.Header())
	}
}

// headers handles response headers or trailers.
func (hc *h2client) headers(c *h2call, f *http2.MetaHeadersFrame) {
	if !c.headers {
		c.headers = true
		if st := f.PseudoValue("status"); st != "200" {
			die("stream %d: :status %q", c.id, st)
		}
		if ct := headerValue(f, "content-type"); !strings.HasPrefix(ct, "application/grpc") {
			die("stream %d: content-type %q", c.id, ct)
		}
		if !f.StreamEnded() {
			return
		}
		// Trailers-Only: the status is in these headers.
	} else if !f.StreamEnded() {
		die("stream %d: a second HEADERS frame that does not end the stream", c.id)
	}
	delete(hc.calls, c.id)
	status, message := headerValue(f, "grpc-status"), headerValue(f, "grpc-message")
	if m, err := url.PathUnescape(message); err == nil {
		message = m // grpc-message is percent-encoded
	}
	if status == "" {
		die("stream %d ended without grpc-status", c.id)
	}
	s := c.slot
	if status != "0" {
		var code codes.Code
		fmt.Sscan(status, (*uint32)(&code))
		s.stream = nil
		hc.failure(code.String(), fmt.Sprintf("rpc error: code = %s desc = %s", code, message))
		hc.after(s)
		return
	}
	if len(c.buf) != 0 {
		die("stream %d: trailers inside a message", c.id)
	}
	if hc.write {
		if !s.closing {
			die("Write stream %d ended OK before it was half-closed", c.id)
		}
		s.stream = nil
		hc.finishSlot(s)
		return
	}
	s.stream = nil
	switch hc.kind {
	case "query", "batchget":
		// A wrong count is a failed call, as reads.go counts it.
		if c.docs != hc.want {
			hc.failure("WrongCount", fmt.Sprintf("%s answered %d documents, not %d", hc.kind, c.docs, hc.want))
			hc.again(s)
			return
		}
	default:
		if c.messages != 1 {
			die("unary call on stream %d: %d response messages", c.id, c.messages)
		}
	}
	hc.counts.add(nil, time.Since(c.started))
	hc.again(s)
}

// fail ends call c (reset, or a broken answer) as a failed call; a Write stream's slot is then done,
// a Commit slot goes on with a new call.
func (hc *h2client) fail(c *h2call, code, example string) {
	delete(hc.calls, c.id)
	s := c.slot
	s.stream = nil
	hc.failure(code, example)
	hc.after(s)
}

func (hc *h2client) after(s *h2slot) {
	if hc.write {
		hc.finishSlot(s) // a failed Write stream is over (as in main.go)
		return
	}
	hc.again(s)
}

func (hc *h2client) failure(code, example string) {
	hc.counts.mu.Lock()
	defer hc.counts.mu.Unlock()
	if hc.counts.failed == nil {
		hc.counts.failed = map[string]int64{}
	}
	hc.counts.failed[code]++
	if hc.counts.example == "" {
		hc.counts.example = example
	}
}

// messages decodes every whole response message in c's buffer.
func (hc *h2client) messages(c *h2call) {
	off := 0
	for len(c.buf)-off >= 5 {
		if c.buf[off] != 0 {
			die("stream %d: compressed message (flag %d), not requested", c.id, c.buf[off])
		}
		size := int(c.buf[off+1])<<24 | int(c.buf[off+2])<<16 | int(c.buf[off+3])<<8 | int(c.buf[off+4])
		if len(c.buf)-off-5 < size {
			break
		}
		m := c.buf[off+5 : off+5+size]
		off += 5 + size
		c.messages++
		if hc.write {
			hc.writeResponse(c, m)
		} else if hc.kind == "get" {
			hc.document(c, m)
		} else if hc.kind == "query" || hc.kind == "batchget" {
			if err := hc.readResponse(c, m); err != nil {
				die("%s on stream %d, message %d: %v", hc.kind, c.id, c.messages, err)
			}
		} else if err := checkCommitResponse(m); err != nil {
			die("Commit on stream %d: %v", c.id, err)
		}
	}
	if off > 0 {
		rest := copy(c.buf, c.buf[off:])
		c.buf = c.buf[:rest]
	}
}

// writeResponse checks one WriteResponse and sends the slot's next request (or its half-close).
func (hc *h2client) writeResponse(c *h2call, m []byte) {
	s := c.slot
	var streamID, tok []byte
	results, commitTime := 0, false
	err := walk(m, func(field int, wire int, v uint64, b []byte) error {
		switch field {
		case 1:
			streamID = b
		case 2:
			tok = b
		case 3:
			results++
			return checkWriteResult(b)
		case 4:
			return checkTimestamp(b, &commitTime)
		}
		return nil
	})
	if err == nil {
		switch {
		case len(tok) == 0:
			err = errors.New("no stream token")
		case c.messages == 1 && (len(streamID) == 0 || results != 0 || commitTime):
			err = fmt.Errorf("handshake answer with stream id %q, %d results, commit time %v", streamID, results, commitTime)
		case c.messages > 1 && (results != 1 || !commitTime):
			err = fmt.Errorf("write answer with %d results, commit time %v", results, commitTime)
		case c.messages > 1 && bytes.Equal(tok, s.token):
			err = errors.New("the stream token did not change")
		}
	}
	if err != nil {
		die("Write stream %d, answer %d: %v", c.id, c.messages, err)
	}
	s.token = append(s.token[:0], tok...)
	if c.messages > 1 {
		hc.counts.add(nil, time.Since(c.started))
	}
	hc.again(s)
}

// document checks one GetDocument answer: the requested document, and the same bytes as the first.
func (hc *h2client) document(c *h2call, m []byte) {
	if hc.answer != nil {
		if !bytes.Equal(m, hc.answer) {
			die("GetDocument on stream %d: the answer (%d bytes) differs from the first (%d bytes)", c.id, len(m), len(hc.answer))
		}
		return
	}
	name, created, updated, err := documentHead(m)
	if err == nil && (string(name) != docsRoot()+"/"+*doc || !created || !updated) {
		err = fmt.Errorf("a document named %q (create_time %v, update_time %v), not %s/%s", name, created, updated, docsRoot(), *doc)
	}
	if err != nil {
		die("GetDocument on stream %d: %v", c.id, err)
	}
	hc.answer = append([]byte(nil), m...)
}

// documentHead reads a Document's name and whether its create_time and update_time are set.
func documentHead(d []byte) (name []byte, created, updated bool, err error) {
	err = walk(d, func(field int, wire int, v uint64, b []byte) error {
		switch field {
		case 1:
			name = b
		case 3:
			return checkTimestamp(b, &created)
		case 4:
			return checkTimestamp(b, &updated)
		}
		return nil
	})
	return
}

// readResponse checks one RunQueryResponse (document 1, read_time 3) or BatchGetDocumentsResponse
// (found 1, missing 2, read_time 4) and counts its document.
func (hc *h2client) readResponse(c *h2call, m []byte) error {
	readTimeField := 3
	if hc.kind == "batchget" {
		readTimeField = 4
	}
	var document []byte
	readTime := false
	err := walk(m, func(field int, wire int, v uint64, b []byte) error {
		switch field {
		case 1:
			document = b
		case readTimeField:
			return checkTimestamp(b, &readTime)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if document == nil {
		return nil // RunQuery's progress or final message without a document, a missing document
	}
	if !readTime {
		return errors.New("a document without a read_time")
	}
	name, created, updated, err := documentHead(document)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(name, []byte(docsRoot()+"/")) || !created || !updated {
		return fmt.Errorf("a document named %q (create_time %v, update_time %v)", name, created, updated)
	}
	c.docs++
	return nil
}

// checkCommitResponse: one WriteResult with an update_time, and a commit_time.
func checkCommitResponse(m []byte) error {
	results, commitTime := 0, false
	err := walk(m, func(field int, wire int, v uint64, b []byte) error {
		switch field {
		case 1:
			results++
			return checkWriteResult(b)
		case 2:
			return checkTimestamp(b, &commitTime)
		}
		return nil
	})
	if err == nil && (results != 1 || !commitTime) {
		err = fmt.Errorf("CommitResponse with %d write results, commit time %v", results, commitTime)
	}
	return err
}

// checkWriteResult: a WriteResult whose update_time (field 1) is set.
func checkWriteResult(b []byte) error {
	updated := false
	if err := walk(b, func(field int, wire int, v uint64, body []byte) error {
		if field == 1 {
			return checkTimestamp(body, &updated)
		}
		return nil
	}); err != nil {
		return err
	}
	if !updated {
		return errors.New("WriteResult without an update_time")
	}
	return nil
}

// checkTimestamp: a Timestamp with positive seconds; sets *seen.
func checkTimestamp(b []byte, seen *bool) error {
	var seconds uint64
	if err := walk(b, func(field int, wire int, v uint64, _ []byte) error {
		if field == 1 {
			seconds = v
		}
		return nil
	}); err != nil {
		return err
	}
	if seconds == 0 {
		return errors.New("timestamp without seconds")
	}
	*seen = true
	return nil
}

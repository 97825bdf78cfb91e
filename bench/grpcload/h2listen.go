// The light Listen client (-client h2): the same Listen streams and the same timed event as the
// grpc-go listeners in main.go, on raw HTTP/2 connections (golang.org/x/net/http2's Framer and hpack,
// Debian's golang-golang-x-net-dev) with one reader goroutine per connection and a ListenResponse
// decoder that reads only the fields the measurement needs.
//
// Why: at 1,000 listeners grpc-go spent 21–24 ms of CPU per commit decoding 2,000 messages (a
// goroutine wake-up, a full protobuf unmarshal into a tree of Go structs and several channel hops
// per message), more than twice what the server spent producing them, on the same two cores — the
// harness, not the server, bounded the latency it reported. This client does per message what a
// benchmark client must: frame parsing, HTTP/2 flow control, hpack state, and a honest protobuf
// walk of every field of every ListenResponse (unknown fields skipped by their wire type), decoding
// fully the parts the check needs (target change type, target ids, read time, cause; a document's
// name and target ids).
//
// Checks (any failure ends the run with exit status 1): every response's :status is 200; no stream
// is reset, ends (trailers: its grpc-status and message are printed) or has a target error; no
// GOAWAY; no compressed or malformed message; every DocumentChange names this stream's target; and
// each listener sees the timed documents in commit order, each before the global snapshot that
// delivers it (the harness then checks that every (listener, commit) pair arrived).
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/golang/protobuf/proto"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	pb "google.golang.org/genproto/googleapis/firestore/v1"
)

const (
	// Our receive windows (per stream through SETTINGS, and the connection's), topped up whenever a
	// quarter has been consumed, so that neither server ever waits on this client's flow control.
	h2Window   = 1 << 24
	h2TopUp    = h2Window / 4
	h2ReadBuf  = 256 << 10
	listenPath = "/google.firestore.v1.Firestore/Listen"
)

// h2stream is one Listen stream's state, touched only by its connection's reader goroutine.
type h2stream struct {
	id       uint32
	target   int32
	index    int // listener number, for messages
	buf      []byte
	unacked  int // DATA bytes consumed since the last WINDOW_UPDATE of this stream
	headers  bool
	current  bool
	currentC chan struct{}
	pending  []string
	seen     map[string]bool
	lastSeq  int
}

// h2conn is one HTTP/2 connection carrying up to -per-conn Listen streams.
type h2conn struct {
	c       net.Conn
	fr      *http2.Framer
	wmu     sync.Mutex
	w       *bufio.Writer
	streams map[uint32]*h2stream
	unacked int
}

// delivery reports that a listener's global snapshot delivered document `name` at `at`; it returns
// the document's commit sequence number (-1 when the document is not one the writer created).
type delivery func(name string, at time.Time) int

func (hc *h2conn) write(f func(fr *http2.Framer) error) {
	hc.wmu.Lock()
	defer hc.wmu.Unlock()
	if err := f(hc.fr); err == nil {
		err = hc.w.Flush()
		if err != nil {
			die("h2 write: %v", err)
		}
	} else {
		die("h2 write: %v", err)
	}
}

func hpackBlock(fields [][2]string) []byte {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	for _, f := range fields {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	return b.Bytes()
}

// grpcFrame is a message with gRPC's 5-byte prefix (uncompressed).
func grpcFrame(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		die("marshal: %v", err)
	}
	out := make([]byte, 5+len(b))
	binary.BigEndian.PutUint32(out[1:5], uint32(len(b)))
	copy(out[5:], b)
	return out
}

func listenAdd(target int32) []byte {
	return grpcFrame(&pb.ListenRequest{Database: database(), TargetChange: &pb.ListenRequest_AddTarget{AddTarget: &pb.Target{
		TargetId: target,
		TargetType: &pb.Target_Query{Query: &pb.Target_QueryTarget{
			Parent: docsRoot() + "/users/" + *uid,
			QueryType: &pb.Target_QueryTarget_StructuredQuery{StructuredQuery: &pb.StructuredQuery{
				From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "files"}},
			}},
		}},
	}}})
}

// openH2Listeners opens n Listen streams, -per-conn to a connection, and waits until each is current.
func openH2Listeners(n int, delivered delivery) {
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		die("-addr must be a loopback host:port, got %q", *addr)
	}
	per := *perConn
	if per < 1 {
		per = 1
	}
	fields := [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", listenPath}, {":authority", *addr},
		{"content-type", "application/grpc"}, {"te", "trailers"}, {"user-agent", "grpcload-h2"},
		{"google-cloud-resource-prefix", database()}, {"x-goog-request-params", "database=" + database()}}
	if *token != "" {
		fields = append(fields, [2]string{"authorization", "Bearer " + *token})
	}
	// Every request carries the same header list; each is encoded by a fresh encoder (no dynamic
	// table entries), so one block serves every stream whatever the server's table holds.
	block := hpackBlock(fields)
	var currents []chan struct{}
	for first := 0; first < n; first += per {
		count := per
		if n-first < count {
			count = n - first
		}
		c, err := net.Dial("tcp", *addr)
		if err != nil {
			die("dial %s: %v", *addr, err)
		}
		hc := &h2conn{c: c, w: bufio.NewWriterSize(c, 64<<10), streams: map[uint32]*h2stream{}}
		hc.fr = http2.NewFramer(hc.w, bufio.NewReaderSize(c, h2ReadBuf))
		hc.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
		hc.fr.MaxHeaderListSize = 1 << 20
		hc.fr.SetMaxReadFrameSize(1 << 24)
		for i := 0; i < count; i++ {
			s := &h2stream{id: uint32(1 + 2*i), target: int32(1 + (first+i)%1000), index: first + i,
				currentC: make(chan struct{}), seen: map[string]bool{}, lastSeq: -1}
			hc.streams[s.id] = s
			currents = append(currents, s.currentC)
		}
		hc.write(func(fr *http2.Framer) error {
			if _, err := io.WriteString(hc.w, http2.ClientPreface); err != nil {
				return err
			}
			if err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window},
				http2.Setting{ID: http2.SettingEnablePush, Val: 0}); err != nil {
				return err
			}
			if err := fr.WriteWindowUpdate(0, h2Window-65535); err != nil {
				return err
			}
			for i := 0; i < count; i++ {
				id := uint32(1 + 2*i)
				if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndHeaders: true}); err != nil {
					return err
				}
				if err := fr.WriteData(id, false, listenAdd(hc.streams[id].target)); err != nil {
					return err
				}
			}
			return nil
		})
		go hc.read(delivered)
	}
	deadline := time.After(time.Duration(*timeoutSec * float64(time.Second)))
	for i, ch := range currents {
		select {
		case <-ch:
		case <-deadline:
			die("only %d of %d listeners became current within %.0fs", i, n, *timeoutSec)
		}
	}
}

// read is the connection's one reader: frames in, flow control and acks out, messages decoded.
func (hc *h2conn) read(delivered delivery) {
	for {
		f, err := hc.fr.ReadFrame()
		if err != nil {
			die("h2 read: %v", err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			if v, ok := f.Value(http2.SettingMaxConcurrentStreams); ok && int(v) < len(hc.streams) {
				die("the server allows %d streams per connection, fewer than -per-conn %d", v, len(hc.streams))
			}
			hc.write(func(fr *http2.Framer) error { return fr.WriteSettingsAck() })
		case *http2.PingFrame:
			if !f.IsAck() {
				hc.write(func(fr *http2.Framer) error { return fr.WritePing(true, f.Data) })
			}
		case *http2.WindowUpdateFrame, *http2.PriorityFrame:
		case *http2.GoAwayFrame:
			die("GOAWAY from the server: %v %q", f.ErrCode, f.DebugData())
		case *http2.RSTStreamFrame:
			die("stream %d reset by the server: %v", f.StreamID, f.ErrCode)
		case *http2.MetaHeadersFrame:
			s := hc.streams[f.StreamID]
			if s == nil {
				die("headers on unknown stream %d", f.StreamID)
			}
			if f.StreamEnded() || s.headers {
				die("listener %d ended: :status %q, grpc-status %q, grpc-message %q", s.index, f.PseudoValue("status"),
					headerValue(f, "grpc-status"), headerValue(f, "grpc-message"))
			}
			if st := f.PseudoValue("status"); st != "200" {
				die("listener %d: :status %s", s.index, st)
			}
			s.headers = true
		case *http2.DataFrame:
			s := hc.streams[f.StreamID]
			if s == nil {
				die("data on unknown stream %d", f.StreamID)
			}
			// Flow control counts the whole payload (padding included).
			n := int(f.Length)
			hc.unacked += n
			s.unacked += n
			s.buf = append(s.buf, f.Data()...)
			if f.StreamEnded() {
				die("listener %d: stream ended without trailers", s.index)
			}
			s.consume(delivered)
			connUp, streamUp := hc.unacked >= h2TopUp, s.unacked >= h2TopUp
			if connUp || streamUp {
				hc.write(func(fr *http2.Framer) error {
					if connUp {
						if err := fr.WriteWindowUpdate(0, uint32(hc.unacked)); err != nil {
							return err
						}
						hc.unacked = 0
					}
					if streamUp {
						if err := fr.WriteWindowUpdate(s.id, uint32(s.unacked)); err != nil {
							return err
						}
						s.unacked = 0
					}
					return nil
				})
			}
		default:
			die("unexpected frame %v", f.Header())
		}
	}
}

func headerValue(f *http2.MetaHeadersFrame, name string) string {
	for _, hf := range f.RegularFields() {
		if hf.Name == name {
			return hf.Value
		}
	}
	return ""
}

// consume decodes every whole gRPC message in the stream's buffer.
func (s *h2stream) consume(delivered delivery) {
	off := 0
	for len(s.buf)-off >= 5 {
		if s.buf[off] != 0 {
			die("listener %d: compressed message (flag %d), not requested", s.index, s.buf[off])
		}
		size := int(binary.BigEndian.Uint32(s.buf[off+1 : off+5]))
		if len(s.buf)-off-5 < size {
			break
		}
		if err := s.message(s.buf[off+5:off+5+size], delivered); err != nil {
			die("listener %d: %v", s.index, err)
		}
		off += 5 + size
	}
	if off > 0 {
		rest := copy(s.buf, s.buf[off:])
		s.buf = s.buf[:rest]
	}
}

// message handles one ListenResponse.
func (s *h2stream) message(m []byte, delivered delivery) error {
	var kind int
	var body []byte
	err := walk(m, func(field int, wire int, v uint64, b []byte) error {
		switch field {
		case 2, 3, 4, 5, 6: // target_change, document_change, document_delete, filter, document_remove
			if wire != 2 {
				return fmt.Errorf("ListenResponse field %d has wire type %d", field, wire)
			}
			kind, body = field, b
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch kind {
	case 2:
		tc, err := decodeTargetChange(body)
		if err != nil {
			return err
		}
		if tc.cause != "" {
			return fmt.Errorf("target change %d for %v with cause %s", tc.kind, tc.targets, tc.cause)
		}
		if tc.kind == int(pb.TargetChange_REMOVE) {
			return fmt.Errorf("target %v removed", tc.targets)
		}
		if tc.kind == int(pb.TargetChange_CURRENT) {
			s.current = true
		}
		if tc.kind == int(pb.TargetChange_NO_CHANGE) && len(tc.targets) == 0 && tc.readTime {
			now := time.Now()
			if s.current && s.currentC != nil {
				close(s.currentC)
				s.currentC = nil
			}
			for _, name := range s.pending {
				if seq := delivered(name, now); seq >= 0 {
					if seq <= s.lastSeq {
						return fmt.Errorf("commit %d delivered after commit %d", seq, s.lastSeq)
					}
					s.lastSeq = seq
				}
			}
			s.pending = s.pending[:0]
		}
	case 3:
		name, targets, err := decodeDocumentChange(body)
		if err != nil {
			return err
		}
		ours := false
		for _, t := range targets {
			ours = ours || t == s.target
		}
		if !ours {
			return fmt.Errorf("document change of %s for targets %v, not %d", name, targets, s.target)
		}
		// Only a document's first arrival is timed, as in main.go (the official emulator re-sends
		// the whole result with every snapshot).
		if !s.seen[name] {
			s.seen[name] = true
			s.pending = append(s.pending, name)
		}
	case 0:
		return errors.New("empty ListenResponse")
	}
	return nil
}

type targetChange struct {
	kind     int
	targets  []int32
	readTime bool
	cause    string
}

func decodeTargetChange(b []byte) (tc targetChange, err error) {
	err = walk(b, func(field int, wire int, v uint64, body []byte) error {
		switch field {
		case 1:
			tc.kind = int(v)
		case 2:
			ids, err := int32s(wire, v, body)
			tc.targets = append(tc.targets, ids...)
			return err
		case 3:
			var code uint64
			var msg string
			if err := walk(body, func(f int, _ int, v uint64, b []byte) error {
				if f == 1 {
					code = v
				} else if f == 2 {
					msg = string(b)
				}
				return nil
			}); err != nil {
				return err
			}
			tc.cause = fmt.Sprintf("code %d %q", code, msg)
		case 6:
			if wire != 2 {
				return errors.New("read_time is not a message")
			}
			tc.readTime = true
		}
		return nil
	})
	return
}

func decodeDocumentChange(b []byte) (name string, targets []int32, err error) {
	err = walk(b, func(field int, wire int, v uint64, body []byte) error {
		switch field {
		case 1:
			return walk(body, func(f int, w int, _ uint64, b []byte) error {
				if f == 1 {
					if w != 2 {
						return errors.New("document name is not a string")
					}
					name = string(b)
				}
				return nil
			})
		case 5:
			ids, err := int32s(wire, v, body)
			targets = append(targets, ids...)
			return err
		}
		return nil
	})
	if err == nil && name == "" {
		err = errors.New("document change without a document name")
	}
	return
}

// int32s reads a repeated int32 field occurrence, packed or not.
func int32s(wire int, v uint64, body []byte) ([]int32, error) {
	if wire == 0 {
		return []int32{int32(v)}, nil
	}
	var out []int32
	for len(body) > 0 {
		x, n := proto.DecodeVarint(body)
		if n == 0 {
			return nil, errors.New("truncated packed varint")
		}
		out = append(out, int32(x))
		body = body[n:]
	}
	return out, nil
}

// walk calls f for every field of a protobuf message: varints with v, length-delimited fields with
// their bytes; fixed-width fields are checked and skipped. Groups are an error (proto3 has none).
func walk(b []byte, f func(field int, wire int, v uint64, body []byte) error) error {
	for len(b) > 0 {
		key, n := proto.DecodeVarint(b)
		if n == 0 {
			return errors.New("truncated field key")
		}
		b = b[n:]
		field, wire := int(key>>3), int(key&7)
		if field == 0 {
			return errors.New("field number 0")
		}
		var v uint64
		var body []byte
		switch wire {
		case 0:
			v, n = proto.DecodeVarint(b)
			if n == 0 {
				return errors.New("truncated varint")
			}
			b = b[n:]
		case 1, 5:
			size := 8
			if wire == 5 {
				size = 4
			}
			if len(b) < size {
				return errors.New("truncated fixed-width field")
			}
			b = b[size:]
		case 2:
			l, n := proto.DecodeVarint(b)
			if n == 0 || uint64(len(b)-n) < l {
				return errors.New("truncated length-delimited field")
			}
			body = b[n : n+int(l)]
			b = b[n+int(l):]
		default:
			return fmt.Errorf("wire type %d", wire)
		}
		if err := f(field, wire, v, body); err != nil {
			return err
		}
	}
	return nil
}

// lightClient reports whether -client asks for this file's listeners (or h2unary.go's calls).
func lightClient() bool { return lightClientNamed("h2") }

// lightClientNamed: whether -client names the mode's light client `light` rather than the default
// (grpc: grpc-go, or net/http for -mode txn); any other name ends the run.
func lightClientNamed(light string) bool {
	switch strings.ToLower(*client) {
	case light:
		return true
	case "grpc", "":
		return false
	}
	die("unknown -client %q for -mode %s (grpc or %s)", *client, *mode, light)
	return false
}

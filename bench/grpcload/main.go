// grpcload: the gRPC load and latency driver of `make bench` (bench/benchlib/grpcbench.py), the same
// program against Hearth and the official Firestore emulator. Built in GOPATH mode from Debian's
// golang-google-grpc / golang-google-genproto packages (no module download). Talks to loopback only.
//
// Modes (each prints one line "GRPCLOAD {json}" on stdout):
//
//	frame   -doc NAME                        write a 5-byte-framed GetDocumentRequest to stdout (h2load -d)
//	get     -doc NAME -streams S             GetDocument for -duration seconds, S calls in flight
//	        [-client h2|grpc]                h2: the light client of h2unary.go, grpc: grpc-go's
//	commit  -uid U -streams S                Commit creating users/U/files/<unique id> (serverTimestamp)
//	write   -uid U -streams S                the same creates through S Write streams (one write in flight each)
//	        [-client h2|grpc]                h2: the light client of h2unary.go (make bench's rows), grpc: grpc-go's
//	listen  -uid U -listeners N -commits K   commit → snapshot latency over N Listen streams on users/U/files
//	        [-warm W -gate]                  W untimed commits first; -gate: print CURRENT, wait for a stdin line
//	        [-client h2|grpc]                h2: the light listeners of h2listen.go (make bench's rows), grpc: grpc-go's
//	                                         before the timed commits, and after them hold the streams until
//	                                         stdin closes (bench/callgrind_listen.py counts only the commits)
//	idle    -uid U -listeners N              N Listen streams, all current; prints READY, holds until stdin closes
//	txn     -uid U -streams S                REST read-write transactions (beginTransaction, batchGet, commit of an
//	                                         update), each worker on its own document users/U/files/<tag>-w<i> (txn.go)
//	        [-client grpc|raw]               grpc (the default): Go's net/http client (make bench's fs.txn.c16), raw:
//	                                         the light HTTP/1.1 client of txnraw.go (fs.txn.light.c16)
//	query   -uid U -streams S [-expect N]    RunQuery (status == "ready", newest N by n) on users/U/files (reads.go)
//	batchget -doc A,B,… -streams S           BatchGetDocuments of those documents, each call checked to find all
//	        [-client grpc|h2]                grpc: grpc-go's (make bench's grpc.query / grpc.batchget rows), h2: the
//	                                         light client of h2unary.go (the .light rows)
//
// Every call's gRPC status is counted: "ok" is the number of calls that ended with status 0, "failed"
// maps each other status to its count, and rates count only successes.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang/protobuf/proto"
	pb "google.golang.org/genproto/googleapis/firestore/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

var (
	addr        = flag.String("addr", "", "host:port (loopback only)")
	project     = flag.String("project", "demo-hearth", "project id")
	token       = flag.String("token", "", "ID token sent as 'authorization: Bearer <token>'")
	mode        = flag.String("mode", "", "frame, get, commit, write, listen or idle")
	doc         = flag.String("doc", "", "document name relative to the documents root (get, frame)")
	uid         = flag.String("uid", "", "the user whose users/{uid}/files collection is written and watched")
	streams     = flag.Int("streams", 1, "calls or streams in flight")
	perConn     = flag.Int("per-conn", 100, "streams per connection (listen, idle, write; unary calls share one connection per this many)")
	duration    = flag.Float64("duration", 5, "seconds of load (get, commit, write)")
	warmup      = flag.Float64("warmup", 0, "seconds of the same load before the timed run (not counted)")
	listeners   = flag.Int("listeners", 1, "Listen streams (listen, idle)")
	commits     = flag.Int("commits", 100, "commits whose delivery is timed (listen)")
	tag         = flag.String("tag", "run", "prefix of the document ids this run creates (unique per run)")
	timeoutSec  = flag.Float64("timeout", 60, "seconds allowed for set-up (listeners becoming current)")
	warmCommits = flag.Int("warm", 0, "untimed commits delivered to every listener before the timed ones (listen)")
	gate        = flag.Bool("gate", false, "listen: after the warm commits print CURRENT and wait for a line on stdin")
	commitWait  = flag.Float64("commit-wait", 10, "listen: seconds a timed commit may take to reach every listener before it counts as missing")
	expect      = flag.Int("expect", 10, "query: the documents each RunQuery must answer (its limit)")
	client      = flag.String("client", "grpc", "get, listen, commit, write: the client, grpc (grpc-go) or h2 (raw HTTP/2 and a light decoder, h2listen.go and h2unary.go); txn: grpc (net/http) or raw (txnraw.go)")
)

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "grpcload: "+format+"\n", args...)
	os.Exit(1)
}

func emit(v interface{}) {
	b, _ := json.Marshal(v)
	fmt.Printf("GRPCLOAD %s\n", b)
}

func database() string { return "projects/" + *project + "/databases/(default)" }
func docsRoot() string { return database() + "/documents" }

func callContext(ctx context.Context) context.Context {
	md := metadata.Pairs("google-cloud-resource-prefix", database(), "x-goog-request-params", "database="+database())
	if *token != "" {
		md.Append("authorization", "Bearer "+*token)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

func dial(ctx context.Context) *grpc.ClientConn {
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		die("-addr must be a loopback host:port, got %q", *addr)
	}
	conn, err := grpc.DialContext(ctx, *addr, grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		die("dial %s: %v", *addr, err)
	}
	return conn
}

// conns opens ceil(n / per) connections (each grpc.ClientConn is one HTTP/2 connection).
func conns(ctx context.Context, n int) []pb.FirestoreClient {
	per := *perConn
	if per < 1 {
		per = 1
	}
	count := (n + per - 1) / per
	if count < 1 {
		count = 1
	}
	out := make([]pb.FirestoreClient, count)
	for i := range out {
		out[i] = pb.NewFirestoreClient(dial(ctx))
	}
	return out
}

func str(s string) *pb.Value { return &pb.Value{ValueType: &pb.Value_StringValue{StringValue: s}} }

// createWrite is the seed app's create of users/{uid}/files/{id}: the fields the shipped create rule
// requires, createdAt = serverTimestamp, and the exists=false precondition.
func createWrite(id string) *pb.Write {
	return &pb.Write{
		Operation: &pb.Write_Update{Update: &pb.Document{
			Name: docsRoot() + "/users/" + *uid + "/files/" + id,
			Fields: map[string]*pb.Value{
				"ownerUid":    str(*uid),
				"storage":     str("s3"),
				"s3Key":       str("users/" + *uid + "/uploads/0b5c7d1e-6a6b-4c1e-9d55-0123456789ab.jpg"),
				"contentType": str("image/jpeg"),
				"status":      str("ready"),
			},
		}},
		UpdateTransforms: []*pb.DocumentTransform_FieldTransform{{
			FieldPath: "createdAt",
			TransformType: &pb.DocumentTransform_FieldTransform_SetToServerValue{
				SetToServerValue: pb.DocumentTransform_FieldTransform_REQUEST_TIME},
		}},
		CurrentDocument: &pb.Precondition{ConditionType: &pb.Precondition_Exists{Exists: false}},
	}
}

// counts tallies outcomes by gRPC status code and keeps latencies of the successes.
type counts struct {
	mu      sync.Mutex
	ok      int64
	failed  map[string]int64
	example string
	lat     []time.Duration
}

func (c *counts) add(err error, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.ok++
		c.lat = append(c.lat, d)
		return
	}
	if c.failed == nil {
		c.failed = map[string]int64{}
	}
	code := status.Code(err).String()
	c.failed[code]++
	if c.example == "" {
		c.example = err.Error()
	}
}

func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p / 100 * float64(len(sorted)-1))
	return float64(sorted[i].Microseconds())
}

func (c *counts) summary(secs float64, extra map[string]interface{}) map[string]interface{} {
	sort.Slice(c.lat, func(i, j int) bool { return c.lat[i] < c.lat[j] })
	var sum time.Duration
	for _, d := range c.lat {
		sum += d
	}
	mean := 0.0
	if len(c.lat) > 0 {
		mean = float64(sum.Microseconds()) / float64(len(c.lat))
	}
	out := map[string]interface{}{
		"ok": c.ok, "failed": c.failed, "failed_example": c.example, "seconds": secs,
		"rps": float64(c.ok) / secs, "lat_mean_us": mean,
		"lat_p50_us": percentile(c.lat, 50), "lat_p99_us": percentile(c.lat, 99),
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// timed runs `work(worker, stop)` on `streams` goroutines for -warmup then -duration seconds and
// returns the counts of the timed part only.
func timed(work func(w int, c *counts, stop *int32)) (*counts, float64) {
	if *warmup > 0 {
		var stop int32
		c := &counts{}
		var wg sync.WaitGroup
		for w := 0; w < *streams; w++ {
			wg.Add(1)
			go func(w int) { defer wg.Done(); work(w, c, &stop) }(w)
		}
		time.Sleep(time.Duration(*warmup * float64(time.Second)))
		atomic.StoreInt32(&stop, 1)
		wg.Wait()
	}
	var stop int32
	c := &counts{}
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < *streams; w++ {
		wg.Add(1)
		go func(w int) { defer wg.Done(); work(w, c, &stop) }(w)
	}
	time.Sleep(time.Duration(*duration * float64(time.Second)))
	atomic.StoreInt32(&stop, 1)
	wg.Wait()
	return c, time.Since(start).Seconds()
}

// runUnary keeps -streams calls of `call` in flight (over ceil(streams / per-conn) connections).
func runUnary(ctx context.Context, call func(client pb.FirestoreClient, seq int64) error) {
	clients := conns(ctx, *streams)
	var seq int64
	c, secs := timed(func(w int, c *counts, stop *int32) {
		client := clients[w%len(clients)]
		for atomic.LoadInt32(stop) == 0 {
			t := time.Now()
			err := call(client, atomic.AddInt64(&seq, 1))
			c.add(err, time.Since(t))
		}
	})
	emit(c.summary(secs, map[string]interface{}{"streams": *streams, "connections": len(clients)}))
}

func runGet(ctx context.Context) {
	req := &pb.GetDocumentRequest{Name: docsRoot() + "/" + *doc}
	runUnary(ctx, func(client pb.FirestoreClient, _ int64) error {
		_, err := client.GetDocument(callContext(ctx), req)
		return err
	})
}

func runCommit(ctx context.Context) {
	runUnary(ctx, func(client pb.FirestoreClient, seq int64) error {
		id := fmt.Sprintf("%s-%d", *tag, seq)
		_, err := client.Commit(callContext(ctx), &pb.CommitRequest{Database: database(), Writes: []*pb.Write{createWrite(id)}})
		return err
	})
}

// runWrite: S Write streams, each doing the handshake and then one create at a time.
func runWrite(ctx context.Context) {
	clients := conns(ctx, *streams)
	var seq int64
	var setupErr atomic.Value
	c, secs := timed(func(w int, c *counts, stop *int32) {
		sctx, cancel := context.WithCancel(callContext(ctx))
		defer cancel()
		s, err := clients[w%len(clients)].Write(sctx)
		if err != nil {
			setupErr.Store(err.Error())
			return
		}
		if err := s.Send(&pb.WriteRequest{Database: database()}); err != nil {
			setupErr.Store(err.Error())
			return
		}
		hs, err := s.Recv()
		if err != nil {
			setupErr.Store(err.Error())
			return
		}
		tokenBytes := hs.StreamToken
		for atomic.LoadInt32(stop) == 0 {
			id := fmt.Sprintf("%s-%d", *tag, atomic.AddInt64(&seq, 1))
			t := time.Now()
			err := s.Send(&pb.WriteRequest{StreamToken: tokenBytes, Writes: []*pb.Write{createWrite(id)}})
			var r *pb.WriteResponse
			if err == nil {
				r, err = s.Recv()
			}
			c.add(err, time.Since(t))
			if err != nil {
				return // a failed Write stream is over
			}
			tokenBytes = r.StreamToken
		}
		s.CloseSend()
	})
	extra := map[string]interface{}{"streams": *streams, "connections": len(clients)}
	if e, ok := setupErr.Load().(string); ok {
		extra["setup_error"] = e
	}
	emit(c.summary(secs, extra))
}

// listener is one Listen stream on users/{uid}/files. It reports each document's delivery time: the
// first global snapshot (a NO_CHANGE target change with no target ids and a read time) after the
// document's change, which is when an SDK raises the snapshot event.
type listener struct {
	stream  pb.Firestore_ListenClient
	current chan struct{}
}

func openListener(ctx context.Context, client pb.FirestoreClient, id int32, delivered func(name string, at time.Time)) (*listener, error) {
	s, err := client.Listen(callContext(ctx))
	if err != nil {
		return nil, err
	}
	target := &pb.Target{
		TargetId: id,
		TargetType: &pb.Target_Query{Query: &pb.Target_QueryTarget{
			Parent: docsRoot() + "/users/" + *uid,
			QueryType: &pb.Target_QueryTarget_StructuredQuery{StructuredQuery: &pb.StructuredQuery{
				From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "files"}},
			}},
		}},
	}
	if err := s.Send(&pb.ListenRequest{Database: database(), TargetChange: &pb.ListenRequest_AddTarget{AddTarget: target}}); err != nil {
		return nil, err
	}
	l := &listener{stream: s, current: make(chan struct{})}
	go func() {
		var pending []string
		// Only a document's first arrival is timed: a server that re-sends the whole result with each
		// snapshot (the official emulator does) would otherwise count old documents again.
		seen := map[string]bool{}
		isCurrent := false
		for {
			r, err := s.Recv()
			if err != nil {
				if !isCurrent {
					fmt.Fprintf(os.Stderr, "grpcload: listener %d ended before current: %v\n", id, err)
				}
				return
			}
			switch x := r.ResponseType.(type) {
			case *pb.ListenResponse_DocumentChange:
				if name := x.DocumentChange.Document.Name; !seen[name] {
					seen[name] = true
					pending = append(pending, name)
				}
			case *pb.ListenResponse_TargetChange:
				tc := x.TargetChange
				if tc.TargetChangeType == pb.TargetChange_CURRENT {
					isCurrent = true
				}
				if tc.TargetChangeType == pb.TargetChange_NO_CHANGE && len(tc.TargetIds) == 0 && tc.ReadTime != nil {
					now := time.Now()
					if isCurrent && l.current != nil {
						close(l.current)
						l.current = nil
					}
					for _, name := range pending {
						delivered(name, now)
					}
					pending = pending[:0]
				}
				if tc.Cause != nil {
					fmt.Fprintf(os.Stderr, "grpcload: listener %d target error: %v\n", id, tc.Cause)
				}
			}
		}
	}()
	return l, nil
}

// openListeners opens n listeners and waits until every one has had its first snapshot.
func openListeners(ctx context.Context, n int, delivered func(name string, at time.Time)) []*listener {
	clients := conns(ctx, n)
	out := make([]*listener, n)
	for i := range out {
		l, err := openListener(ctx, clients[i%len(clients)], int32(1+i%1000), delivered)
		if err != nil {
			die("listen %d: %v", i, err)
		}
		out[i] = l
	}
	deadline := time.After(time.Duration(*timeoutSec * float64(time.Second)))
	for i, l := range out {
		ch := l.current
		if ch == nil {
			continue
		}
		select {
		case <-ch:
		case <-deadline:
			die("only %d of %d listeners became current within %.0fs", i, n, *timeoutSec)
		}
	}
	return out
}

func runListen(ctx context.Context) {
	var mu sync.Mutex
	sent := map[string]time.Time{}
	got := map[string]int{}
	seq := map[string]int{}
	var lat []time.Duration
	// Per commit, when its last listener had it: the fan-out's whole span.
	var last []time.Duration
	// Per timed commit (in commit order), every listener's latency: whether the tail is a few slow
	// commits or every commit's last listeners.
	var perCommit [][]time.Duration
	var commitStart []time.Time
	done := make(chan string, 1<<16)
	delivered := func(name string, at time.Time) int {
		mu.Lock()
		defer mu.Unlock()
		t0, ok := sent[name]
		if !ok {
			return -1
		}
		lat = append(lat, at.Sub(t0))
		if i, ok := seq[name]; ok && i >= *warmCommits {
			for len(perCommit) <= i-*warmCommits {
				perCommit = append(perCommit, nil)
			}
			perCommit[i-*warmCommits] = append(perCommit[i-*warmCommits], at.Sub(t0))
		}
		got[name]++
		if got[name] == *listeners {
			last = append(last, at.Sub(t0))
			done <- name
		}
		return seq[name]
	}
	light := lightClient()
	if light {
		openH2Listeners(*listeners, delivered)
	} else {
		openListeners(ctx, *listeners, func(name string, at time.Time) { delivered(name, at) })
	}
	send := func(name string) {
		mu.Lock()
		seq[name] = len(seq)
		sent[name] = time.Now()
		mu.Unlock()
	}
	writer := pb.NewFirestoreClient(dial(ctx))
	// Warm commits: delivered to every listener like the timed ones, then forgotten.
	for i := 0; i < *warmCommits; i++ {
		id := fmt.Sprintf("%s-warm-%d", *tag, i)
		send(docsRoot() + "/users/" + *uid + "/files/" + id)
		if _, err := writer.Commit(callContext(ctx), &pb.CommitRequest{Database: database(), Writes: []*pb.Write{createWrite(id)}}); err != nil {
			die("warm commit: %v", err)
		}
		select {
		case <-done:
		case <-time.After(time.Duration(*timeoutSec * float64(time.Second))):
			die("warm commit %d was not delivered to every listener", i)
		}
	}
	mu.Lock()
	lat = lat[:0]
	last = last[:0]
	mu.Unlock()
	if *gate {
		fmt.Println("CURRENT")
		os.Stdout.Sync()
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			die("gate: %v", err)
		}
	}
	c := &counts{}
	missing := 0
	for i := 0; i < *commits; i++ {
		id := fmt.Sprintf("%s-%d", *tag, i)
		send(docsRoot() + "/users/" + *uid + "/files/" + id)
		t := time.Now()
		commitStart = append(commitStart, t)
		_, err := writer.Commit(callContext(ctx), &pb.CommitRequest{Database: database(), Writes: []*pb.Write{createWrite(id)}})
		c.add(err, time.Since(t))
		if err != nil {
			continue
		}
		select {
		case <-done:
		case <-time.After(time.Duration(*commitWait * float64(time.Second))):
			missing++
		}
		time.Sleep(2 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	sort.Slice(last, func(i, j int) bool { return last[i] < last[j] })
	sort.Slice(c.lat, func(i, j int) bool { return c.lat[i] < c.lat[j] })
	// Per commit: its first listener, median, 90th percentile and last listener (µs), and when the
	// Commit call started (Unix µs, to line up with a trace of the server).
	spans := [][5]float64{}
	for i, d := range perCommit {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		spans = append(spans, [5]float64{percentile(d, 0), percentile(d, 50), percentile(d, 90), percentile(d, 100),
			float64(commitStart[i].UnixMicro())})
	}
	emit(map[string]interface{}{
		"per_commit_us": spans,
		// The Commit call's own latency, and per commit the delivery to its last listener.
		"commit_p50_us": percentile(c.lat, 50), "commit_p99_us": percentile(c.lat, 99),
		"last_p50_us": percentile(last, 50), "last_max_us": percentile(last, 100),
		"listeners": *listeners, "client": map[bool]string{true: "h2", false: "grpc"}[light], "commits_ok": c.ok, "commit_failed": c.failed, "failed_example": c.example,
		"samples": len(lat), "expected_samples": int(c.ok) * *listeners, "timed_out_commits": missing,
		"p50_us": percentile(lat, 50), "p99_us": percentile(lat, 99), "max_us": percentile(lat, 100),
	})
	if *gate {
		// Hold the streams until stdin closes, so a counter can stop before their teardown.
		os.Stdout.Sync()
		io.Copy(io.Discard, os.Stdin)
	}
}

func runIdle(ctx context.Context) {
	t := time.Now()
	ls := openListeners(ctx, *listeners, func(string, time.Time) {})
	emit(map[string]interface{}{"listeners": len(ls), "setup_seconds": time.Since(t).Seconds(), "ready": true})
	os.Stdout.Sync()
	// Hold every stream open until the harness has measured and closes our stdin.
	io.Copy(io.Discard, bufio.NewReader(os.Stdin))
}

func runFrame() {
	b, err := proto.Marshal(&pb.GetDocumentRequest{Name: docsRoot() + "/" + *doc})
	if err != nil {
		die("marshal: %v", err)
	}
	var head [5]byte
	binary.BigEndian.PutUint32(head[1:], uint32(len(b)))
	os.Stdout.Write(head[:])
	os.Stdout.Write(b)
}

func main() {
	flag.Parse()
	ctx := context.Background()
	switch strings.ToLower(*mode) {
	case "frame":
		runFrame()
	case "get":
		if lightClient() {
			runH2Unary("get")
		} else {
			runGet(ctx)
		}
	case "commit":
		if lightClient() {
			runH2Unary("commit")
		} else {
			runCommit(ctx)
		}
	case "write":
		if lightClient() {
			runH2Unary("write")
		} else {
			runWrite(ctx)
		}
	case "listen":
		runListen(ctx)
	case "idle":
		runIdle(ctx)
	case "txn":
		runTxn()
	case "query", "batchget":
		if lightClient() {
			runH2Unary(strings.ToLower(*mode))
		} else if strings.ToLower(*mode) == "query" {
			runQueryCalls(ctx)
		} else {
			runBatchGetCalls(ctx)
		}
	default:
		die("unknown -mode %q", *mode)
	}
}

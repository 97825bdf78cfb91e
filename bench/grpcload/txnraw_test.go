package main

// The transaction checks of -mode txn through both clients (txn.go, txnraw.go) against a fake REST
// server: what counts as a success, that a wrong answer counts as a failure, and that the light client
// sends net/http's request bodies and headers and follows chunked answers and Connection: close.
// Run by Tests/CompatTests/test_bench_grpcload.py (GOPATH mode, as make bench builds grpcload).

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const testDocsPath = "projects/demo-hearth/databases/(default)/documents"
const testName = "projects/demo-hearth/databases/(default)/documents/users/u1/files/t-w0"

// fakeFirestore answers beginTransaction, batchGet, commit and rollback as Firestore's REST API does,
// each answer open to one change by the test (`spoil`: verb → a replacement answer body or status).
type fakeFirestore struct {
	mu       sync.Mutex
	spoil    map[string]func(w http.ResponseWriter) bool // true: answered
	chunked  bool
	close    bool
	requests []string // "verb body" per request
	headers  []http.Header
	conns    map[string]bool
}

func (f *fakeFirestore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	verb := r.URL.Path[strings.LastIndex(r.URL.Path, ":")+1:]
	f.mu.Lock()
	f.requests = append(f.requests, verb+" "+string(body))
	f.headers = append(f.headers, r.Header.Clone())
	f.conns[r.RemoteAddr] = true
	spoil, chunked, closing := f.spoil[verb], f.chunked, f.close
	f.mu.Unlock()
	if r.URL.Path != "/v1/"+testDocsPath+":"+verb || r.Method != "POST" {
		http.Error(w, "bad path "+r.URL.Path, 404)
		return
	}
	if closing {
		w.Header().Set("Connection", "close")
	}
	if spoil != nil && spoil(w) {
		return
	}
	var answer string
	switch verb {
	case "beginTransaction":
		answer = `{"transaction":"EYx+/abc="}`
	case "batchGet":
		var req struct {
			Documents   []string `json:"documents"`
			Transaction string   `json:"transaction"`
		}
		json.Unmarshal(body, &req)
		if req.Transaction != "EYx+/abc=" {
			http.Error(w, "no transaction", 400)
			return
		}
		answer = `[{"found":{"name":"` + req.Documents[0] + `","fields":{"status":{"stringValue":"pending"}},` +
			`"createTime":"2026-12-05T09:00:00Z","updateTime":"2026-12-05T09:00:00Z"},"readTime":"2026-12-05T09:00:01Z"}]`
	case "commit":
		answer = `{"writeResults":[{"updateTime":"2026-12-05T09:00:02Z"}],"commitTime":"2026-12-05T09:00:02Z"}`
	case "rollback":
		answer = `{}`
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if chunked {
		// Two writes with a flush between: the answer goes out chunked, without a Content-Length.
		io.WriteString(w, answer[:5])
		w.(http.Flusher).Flush()
		io.WriteString(w, answer[5:])
		return
	}
	io.WriteString(w, answer)
}

func answer(status int, body string) func(w http.ResponseWriter) bool {
	return func(w http.ResponseWriter) bool {
		w.WriteHeader(status)
		io.WriteString(w, body)
		return true
	}
}

func newFake(t *testing.T) (*fakeFirestore, string) {
	f := &fakeFirestore{spoil: map[string]func(http.ResponseWriter) bool{}, conns: map[string]bool{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, strings.TrimPrefix(srv.URL, "http://")
}

// peers: the two clients against the fake at `hostPort`.
func peers(t *testing.T, hostPort string) map[string]txnPeer {
	*addr, *token = hostPort, "tok.en"
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	return map[string]txnPeer{
		"net/http": &netHTTPPeer{client, testDocsPath, testName},
		"raw":      newRawPeer(hostPort, "tok.en", testDocsPath, testName),
	}
}

// outcome: the failure key addREST files the transaction's error under, "" for a success.
func outcome(err error) string {
	c := &counts{}
	c.addREST(err, 0)
	for k := range c.failed {
		return k
	}
	return ""
}

func TestTransactionSucceedsThroughBothClients(t *testing.T) {
	f, hp := newFake(t)
	for name, p := range peers(t, hp) {
		status := "pending"
		for i := 0; i < 3; i++ {
			if err := transact(p, testName, &status); err != nil {
				t.Fatalf("%s: transaction %d: %v", name, i, err)
			}
		}
		p.close()
		if status != "ready" {
			t.Fatalf("%s: status after three transactions %q", name, status)
		}
	}
	if len(f.requests) != 18 {
		t.Fatalf("requests %d, want 18", len(f.requests))
	}
}

func TestLightClientSendsWhatNetHTTPSends(t *testing.T) {
	f, hp := newFake(t)
	ps := peers(t, hp)
	for _, name := range []string{"net/http", "raw"} {
		status := "pending"
		if err := transact(ps[name], testName, &status); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ps[name].rollback("EYx+/abc=")
	}
	if len(f.requests) != 8 {
		t.Fatalf("requests %d: %q", len(f.requests), f.requests)
	}
	for i := 0; i < 4; i++ {
		if f.requests[i] != f.requests[i+4] {
			t.Errorf("request %d: net/http sent %q, the light client %q", i, f.requests[i], f.requests[i+4])
		}
		for _, h := range []string{"Authorization", "Content-Type", "Content-Length"} {
			if a, b := f.headers[i].Get(h), f.headers[i+4].Get(h); a != b || a == "" {
				t.Errorf("request %d %s: net/http %q, the light client %q", i, h, a, b)
			}
		}
	}
	if !strings.Contains(f.requests[2], `"transaction":"EYx+/abc="`) {
		t.Errorf("commit body %q", f.requests[2])
	}
}

func TestWrongAnswersAreFailures(t *testing.T) {
	cases := map[string]struct {
		verb, want string
		spoil      func(w http.ResponseWriter) bool
	}{
		"begin without an id":          {"beginTransaction", "answer", answer(200, `{}`)},
		"begin not JSON":               {"beginTransaction", "answer", answer(200, `<html>`)},
		"begin refused":                {"beginTransaction", "HTTP 403", answer(403, `{"error":{}}`)},
		"read of another document":     {"batchGet", "answer", answer(200, `[{"found":{"name":"`+testName+`x"}}]`)},
		"read missing":                 {"batchGet", "answer", answer(200, `[{"missing":"`+testName+`","readTime":"x"}]`)},
		"read of two documents":        {"batchGet", "answer", answer(200, `[{"found":{"name":"`+testName+`"}},{"found":{"name":"`+testName+`"}}]`)},
		"read denied":                  {"batchGet", "HTTP 403", answer(403, `{}`)},
		"commit without write results": {"commit", "answer", answer(200, `{"commitTime":"2026-12-05T09:00:02Z"}`)},
		"commit without a commit time": {"commit", "answer", answer(200, `{"writeResults":[{"updateTime":"2026-12-05T09:00:02Z"}]}`)},
		"commit result without a time": {"commit", "answer", answer(200, `{"writeResults":[{}],"commitTime":"2026-12-05T09:00:02Z"}`)},
		"commit aborted":               {"commit", "HTTP 409", answer(409, `{"error":{"status":"ABORTED"}}`)},
		"commit cut short": {"commit", "transport", func(w http.ResponseWriter) bool {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(200)
			io.WriteString(w, `{"writeResults":`)
			return true
		}},
	}
	for label, tc := range cases {
		f, hp := newFake(t)
		f.spoil[tc.verb] = tc.spoil
		for name, p := range peers(t, hp) {
			status := "pending"
			if got := outcome(transact(p, testName, &status)); got != tc.want {
				t.Errorf("%s through %s: counted %q, want %q", label, name, got, tc.want)
			}
			p.close()
		}
		// A failure after the begin is rolled back by both clients, a failed begin by neither.
		rollbacks := 0
		for _, r := range f.requests {
			if strings.HasPrefix(r, "rollback ") {
				rollbacks++
			}
		}
		if want := map[bool]int{true: 0, false: 2}[tc.verb == "beginTransaction"]; rollbacks != want {
			t.Errorf("%s: %d rollbacks, want %d", label, rollbacks, want)
		}
	}
}

func TestLightClientReadsChunkedAnswersAndRedialsAfterClose(t *testing.T) {
	f, hp := newFake(t)
	f.chunked, f.close = true, true
	p := newRawPeer(hp, "tok.en", testDocsPath, testName)
	defer p.close()
	status := "pending"
	for i := 0; i < 2; i++ {
		if err := transact(p, testName, &status); err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
	}
	if len(f.conns) != 6 {
		t.Fatalf("%d connections for 6 answers with Connection: close", len(f.conns))
	}
	f.close = false
	if err := transact(p, testName, &status); err != nil {
		t.Fatal(err)
	}
	if len(f.conns) != 7 {
		t.Fatalf("%d connections: keep-alive should have served the third transaction on one", len(f.conns))
	}
}

func TestQuoteJSONSplicesBase64AndEscapesTheRest(t *testing.T) {
	for in, want := range map[string]string{"EYx+/abc=": `"EYx+/abc="`, "a-b_c": `"a-b_c"`, `a"b`: `"a\"b"`, "é<": `"é\u003c"`} {
		if got := string(quoteJSON(in)); got != want {
			t.Errorf("quoteJSON(%q) = %s, want %s", in, got, want)
		}
	}
}

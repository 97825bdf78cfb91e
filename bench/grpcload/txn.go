// REST read-write transactions (-mode txn): each worker creates its document once, then loops over
// transactions that read it and flip its status (the shipped update rule allows status and size
// changes). The requests go through a txnPeer: Go's net/http client (-client grpc, the default and
// make bench's fs.txn.c16 row) or the light HTTP/1.1 client of txnraw.go (-client raw, fs.txn.light.c16).
// Both send the same bodies (txnBodies) and count a transaction as a success on the same checks of
// every answer (transact): HTTP 200 each time, the begin's transaction id, the batchGet's one found
// document with the worker's name, the commit's one write result with an update time and its commit time.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// txnPeer sends one worker's requests. Each call returns the answer's body on HTTP 200 (valid until
// the peer's next call), a *restError on another status and any other error for a transport failure.
type txnPeer interface {
	begin() ([]byte, error)
	read(txn string) ([]byte, error)
	commit(txn, status string) ([]byte, error)
	rollback(txn string)
	close()
}

type restError struct {
	status int
	body   string
}

func (e *restError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

// badAnswer is an HTTP 200 answer that is not what the request must get.
type badAnswer struct {
	what string
	body []byte
}

func (e *badAnswer) Error() string {
	b := e.body
	if len(b) > 200 {
		b = b[:200]
	}
	return fmt.Sprintf("%s: %s", e.what, b)
}

// txnBodies are the request bodies, as JSON values; the light client marshals each once with a
// placeholder transaction id and splices the real one in (txnraw.go).
func beginBody() interface{} { return map[string]interface{}{} }

func readBody(name, txn string) interface{} {
	// The read inside the transaction is a batchGet naming it, as the SDKs send it (Transaction.get
	// in firebase-admin and the web SDK): the official emulator's REST gateway never answers a GET
	// with ?transaction= (it cannot map the bytes parameter; docs/benchmarks.md, listbench), so that
	// form would time out there.
	return map[string]interface{}{"documents": []string{name}, "transaction": txn}
}

func commitBody(name, txn, status string) interface{} {
	return map[string]interface{}{
		"writes": []interface{}{map[string]interface{}{
			"update":     map[string]interface{}{"name": name, "fields": map[string]interface{}{"status": jstr(status)}},
			"updateMask": map[string]interface{}{"fieldPaths": []string{"status"}},
		}},
		"transaction": txn,
	}
}

func rollbackBody(txn string) interface{} { return map[string]interface{}{"transaction": txn} }

// transact runs one transaction on the worker's document `name`, flipping *status when the read
// succeeded; nil only when every answer passed its check.
func transact(p txnPeer, name string, status *string) error {
	body, err := p.begin()
	if err != nil {
		return err
	}
	txn, err := beginID(body)
	if err != nil {
		return err
	}
	body, err = p.read(txn)
	if err == nil {
		err = checkRead(body, name)
	}
	if err == nil {
		if *status == "pending" {
			*status = "ready"
		} else {
			*status = "pending"
		}
		body, err = p.commit(txn, *status)
		if err == nil {
			err = checkCommit(body)
		}
	}
	if err != nil {
		// As a client does: a transaction that failed before its commit is rolled back, so it
		// holds no lock on the document (the emulator's are pessimistic) into the next one.
		p.rollback(txn)
	}
	return err
}

// netHTTPPeer: Go's net/http client, keep-alive, shared by the workers (make bench's fs.txn.c16).
type netHTTPPeer struct {
	client   *http.Client
	docsPath string
	name     string
}

func (p *netHTTPPeer) call(verb string, body interface{}) ([]byte, error) {
	return restCall(p.client, "POST", p.docsPath+":"+verb, body)
}

func (p *netHTTPPeer) begin() ([]byte, error) { return p.call("beginTransaction", beginBody()) }
func (p *netHTTPPeer) read(txn string) ([]byte, error) {
	return p.call("batchGet", readBody(p.name, txn))
}
func (p *netHTTPPeer) commit(txn, status string) ([]byte, error) {
	return p.call("commit", commitBody(p.name, txn, status))
}
func (p *netHTTPPeer) rollback(txn string) { p.call("rollback", rollbackBody(txn)) }
func (p *netHTTPPeer) close()              {}

func restCall(client *http.Client, method, path string, body interface{}) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+*addr+"/v1/"+path, rd)
	if *token != "" {
		req.Header.Set("Authorization", "Bearer "+*token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, &restError{resp.StatusCode, string(data)}
	}
	return data, nil
}

func jstr(s string) map[string]interface{} { return map[string]interface{}{"stringValue": s} }

func fileFields(status string) map[string]interface{} {
	return map[string]interface{}{
		"ownerUid": jstr(*uid), "storage": jstr("s3"),
		"s3Key":       jstr("users/" + *uid + "/uploads/0b5c7d1e-6a6b-4c1e-9d55-0123456789ab.jpg"),
		"contentType": jstr("image/jpeg"), "status": jstr(status),
	}
}

func runTxn() {
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || (host != "127.0.0.1" && host != "localhost") {
		die("-addr must be a loopback host:port, got %q", *addr)
	}
	raw := lightClientNamed("raw")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *streams + 4, DisableCompression: true},
		Timeout: 30 * time.Second}
	docsPath := "projects/" + *project + "/databases/(default)/documents"
	created := 0
	docNames := make([]string, *streams)
	for w := range docNames {
		docNames[w] = fmt.Sprintf("%s/users/%s/files/%s-w%d", docsRoot(), *uid, *tag, w)
		body := map[string]interface{}{"writes": []interface{}{map[string]interface{}{
			"update":           map[string]interface{}{"name": docNames[w], "fields": fileFields("pending")},
			"updateTransforms": []interface{}{map[string]interface{}{"fieldPath": "createdAt", "setToServerValue": "REQUEST_TIME"}},
			"currentDocument":  map[string]interface{}{"exists": false},
		}}}
		if _, err := restCall(client, "POST", docsPath+":commit", body); err != nil {
			die("creating %s: %v", docNames[w], err)
		}
		created++
	}
	if raw {
		// The set-up's keep-alive connections would otherwise sit idle on the server during the run.
		client.CloseIdleConnections()
	}
	c, secs := timed(func(w int, c *counts, stop *int32) {
		name := docNames[w]
		var p txnPeer = &netHTTPPeer{client, docsPath, name}
		if raw {
			p = newRawPeer(*addr, *token, docsPath, name)
		}
		defer p.close()
		status := "pending"
		for atomic.LoadInt32(stop) == 0 {
			t := time.Now()
			c.addREST(transact(p, name, &status), time.Since(t))
		}
	})
	emit(c.summary(secs, map[string]interface{}{"streams": *streams, "documents": created,
		"client": map[bool]string{true: "raw", false: "net/http"}[raw]}))
}

// addREST counts a REST outcome: failures by HTTP status ("HTTP 409"), "answer" for an HTTP 200
// answer that failed its check, or "transport".
func (c *counts) addREST(err error, d time.Duration) {
	if err == nil {
		c.add(nil, d)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed == nil {
		c.failed = map[string]int64{}
	}
	key := "transport"
	switch e := err.(type) {
	case *restError:
		key = fmt.Sprintf("HTTP %d", e.status)
	case *badAnswer:
		key = "answer"
	}
	c.failed[key]++
	if c.example == "" {
		c.example = err.Error()
		if len(c.example) > 300 {
			c.example = c.example[:300]
		}
	}
}

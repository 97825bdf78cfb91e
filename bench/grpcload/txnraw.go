// The light HTTP/1.1 client of -mode txn (-client raw): the same requests as net/http sends them in
// txn.go, from one net.Conn per worker, keep-alive.
//
// Why: Go's net/http client spends per request a hand-off between the worker's goroutine and the
// connection's read and write loops, a header map, a URL parse and its transport's bookkeeping —
// 108–174 µs of CPU per transaction (three requests), about as much as Hearth's server spends on it
// (docs/benchmarks.md, restfloor and txnlight). On the bench's two cores that CPU is taken from the
// servers being measured, as grpc-go's was on the gRPC rows (h2unary.go). This client does per
// request what a benchmark client must: the request's bytes — method line, Host, Authorization,
// Content-Type, Content-Length and body, built once per worker — written with the transaction id
// spliced in, and the answer read in full with the standard library's http.ReadResponse (no
// hand-written HTTP parsing: it handles Content-Length, chunked bodies and Connection: close, after
// which the next request dials again). The answers are checked as net/http's are (transact, txn.go).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"time"
)

// txnPlaceholder stands for the transaction id while a body template is marshalled.
const txnPlaceholder = "txnlight-transaction-id"

// rawRequest is one request's bytes around the transaction id: head up to the Content-Length value,
// then the body before and after the id (a JSON string, quotes included).
type rawRequest struct {
	head, pre, post []byte
}

func newRawRequest(addr, token, path string, body interface{}) rawRequest {
	b, err := json.Marshal(body)
	if err != nil {
		die("marshal: %v", err)
	}
	var r rawRequest
	quoted, _ := json.Marshal(txnPlaceholder)
	if i := bytes.Index(b, quoted); i >= 0 {
		r.pre, r.post = b[:i], b[i+len(quoted):]
	} else {
		r.pre = b
	}
	head := "POST /v1/" + path + " HTTP/1.1\r\nHost: " + addr + "\r\n"
	if token != "" {
		head += "Authorization: Bearer " + token + "\r\n"
	}
	r.head = []byte(head + "Content-Type: application/json\r\nContent-Length: ")
	return r
}

// appendTo appends the request with `txn` in place of the placeholder (none for a body without one).
func (r *rawRequest) appendTo(out []byte, txn string) []byte {
	var id []byte
	if r.post != nil {
		id = quoteJSON(txn)
	}
	out = append(out, r.head...)
	out = strconv.AppendInt(out, int64(len(r.pre)+len(id)+len(r.post)), 10)
	out = append(out, "\r\n\r\n"...)
	out = append(out, r.pre...)
	out = append(out, id...)
	return append(out, r.post...)
}

// quoteJSON: `s` as a JSON string. A transaction id is base64 (standard or URL alphabet), which
// needs no escape; anything else goes through the JSON encoder.
func quoteJSON(s string) []byte {
	out := make([]byte, 0, len(s)+2)
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' ||
			c == '=' || c == '-' || c == '_') {
			b, _ := json.Marshal(s)
			return b
		}
		out = append(out, c)
	}
	return append(out, '"')
}

// rawPeer is one worker's connection and its prepared requests.
type rawPeer struct {
	addr                     string
	conn                     net.Conn
	br                       *bufio.Reader
	out                      []byte
	body                     bytes.Buffer
	beginReq, readReq, rbReq rawRequest
	commitReq                map[string]rawRequest // by the status written
}

func newRawPeer(addr, token, docsPath, name string) *rawPeer {
	req := func(verb string, body interface{}) rawRequest {
		return newRawRequest(addr, token, docsPath+":"+verb, body)
	}
	return &rawPeer{
		addr:     addr,
		beginReq: req("beginTransaction", beginBody()),
		readReq:  req("batchGet", readBody(name, txnPlaceholder)),
		rbReq:    req("rollback", rollbackBody(txnPlaceholder)),
		commitReq: map[string]rawRequest{
			"ready":   req("commit", commitBody(name, txnPlaceholder, "ready")),
			"pending": req("commit", commitBody(name, txnPlaceholder, "pending")),
		},
	}
}

func (p *rawPeer) begin() ([]byte, error)          { return p.do(&p.beginReq, "") }
func (p *rawPeer) read(txn string) ([]byte, error) { return p.do(&p.readReq, txn) }
func (p *rawPeer) commit(txn, status string) ([]byte, error) {
	r, ok := p.commitReq[status]
	if !ok {
		die("no commit template for status %q", status)
	}
	return p.do(&r, txn)
}
func (p *rawPeer) rollback(txn string) { p.do(&p.rbReq, txn) }

func (p *rawPeer) close() {
	if p.conn != nil {
		p.conn.Close()
		p.conn = nil
	}
}

// do sends one request and reads its answer in full: the body on HTTP 200.
func (p *rawPeer) do(r *rawRequest, txn string) ([]byte, error) {
	p.out = r.appendTo(p.out[:0], txn)
	if p.conn == nil {
		conn, err := net.Dial("tcp", p.addr)
		if err != nil {
			return nil, err
		}
		p.conn = conn
		if p.br == nil {
			p.br = bufio.NewReaderSize(conn, 16<<10)
		} else {
			p.br.Reset(conn)
		}
	}
	// As net/http's Client.Timeout in txn.go: 30 s for the request and its whole answer.
	p.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := p.conn.Write(p.out); err != nil {
		p.close()
		return nil, err
	}
	resp, err := http.ReadResponse(p.br, nil)
	if err != nil {
		p.close()
		return nil, err
	}
	p.body.Reset()
	_, err = p.body.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		p.close()
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, &restError{resp.StatusCode, p.body.String()}
	}
	return p.body.Bytes(), nil
}

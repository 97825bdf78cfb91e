package main

// The scanner's checks (txncheck.go) against the encoding/json checks they replace (kept here as the
// reference): the same outcome on the servers' answers (testdata: Hearth's compact answers recorded
// from a debug build, the official emulator's pretty-printed shape written by hand), on hand-made
// edge cases and on thousands of mutations of all of them; json.Valid's verdict on every input.

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// hearthName is the document of the recorded Hearth batchGet (its worker's suffix -w1).
const hearthName = "projects/demo-hearth/databases/(default)/documents/users/u1/files/t-w1"

func refBeginID(body []byte) (string, bool) {
	var begin struct {
		Transaction string `json:"transaction"`
	}
	if err := json.Unmarshal(body, &begin); err != nil || begin.Transaction == "" {
		return "", false
	}
	return begin.Transaction, true
}

func refCheckRead(body []byte, name string) bool {
	var got []struct {
		Found struct {
			Name string `json:"name"`
		} `json:"found"`
	}
	return json.Unmarshal(body, &got) == nil && len(got) == 1 && got[0].Found.Name == name
}

func refCheckCommit(body []byte) bool {
	var got struct {
		WriteResults []struct {
			UpdateTime string `json:"updateTime"`
		} `json:"writeResults"`
		CommitTime string `json:"commitTime"`
	}
	return json.Unmarshal(body, &got) == nil && len(got.WriteResults) == 1 &&
		got.WriteResults[0].UpdateTime != "" && got.CommitTime != ""
}

func recorded(t testing.TB) map[string][]byte {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) != 6 {
		t.Fatalf("testdata: %d answers, want 6", len(files))
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = b
	}
	return out
}

// edgeCases: inputs on which a field-by-field reading could part from encoding/json's.
var edgeCases = []string{
	`{"transaction":"a","transaction":null}`, `{"transaction":null,"transaction":"b"}`,
	`{"transaction":"a","transaction":""}`, `{"TRANSACTION":"a"}`, `{"tranſaction":"a"}`, `{"tran\u017Faction":"a"}`,
	`{"tran\u017faction":"a"}`, `{"trans\u0061ction":"a"}`, `{"transaction":"a\u002fb"}`, `{"transaction":"\ud800"}`,
	`{"transaction":"\ud83d\ude00x"}`, `{"transaction":"\udc00\ud800"}`, "{\"transaction\":\"\xff\"}",
	"{\"transaction\":\"\xe2\x82\"}", `{"transaction":"\""}`, `{"transaction":1}`, `{"transaction":true}`,
	`{"transaction":{}}`, `{"transaction":["a"]}`, `{"transaction":"a"} x`, `{"transaction":"a"}}`,
	`{"transaction":"a",}`, ` {"transaction" : "a" } `, `null`, ` null `, `[]`, `"a"`, `{}`, ``, ` `,
	`{"transaction":"a","x":[1,-0.5e+3,true,false,null,{"y":{}}]}`, `{"transaction":"a","x":01}`,
	`{"transaction":"a","x":1.}`, `{"transaction":"a","x":-}`, `{"transaction":"a","x":1e}`, `{"transaction":"a\u00"}`,
	`{"transaction":"a\x"}`, "{\"transaction\":\"a\tb\"}", `{"transaction":"a",` + `"x":nul}`,
	`{"transaction":"a","transaction":1}`, `{"transaction":"a","TRANSACTION":"b"}`, `{"transactionx":"a"}`,
	`[{"found":{"name":"` + testName + `"}}]`, `[{"found":{"name":"` + testName + `"},"found":null}]`,
	`[{"found":{"name":"` + testName + `"},"found":{"x":1}}]`, `[{"found":{"name":"` + testName + `"},"found":{"name":null}}]`,
	`[{"found":{"name":"` + testName + `"},"found":{"name":"x"}}]`, `[{"found":{"name":"` + testName + `"}},null]`,
	`[null]`, `[{}]`, `[{"found":null}]`, `[{"found":{"name":1}}]`, `[{"found":"x"}]`, `[{"found":[]}]`, `["x"]`, `[1]`,
	`[{"found":{"name":"` + testName + `"}},1]`, `[{"FOUND":{"NAME":"` + testName + `"}}]`,
	`[{"found":{"name":"` + strings.ReplaceAll(testName, "/", `\u002f`) + `"}}]`,
	`[{"found":{"name":"` + strings.ReplaceAll(testName, "/", `\/`) + `"}}]`,
	`[{"f\u006fund":{"n\u0041me":"` + testName + `"}}]`, `[{"found":{"name":"` + testName + `\u0000"}}]`,
	`{"writeResults":[{"updateTime":"t"}],"commitTime":"c"}`,
	`{"writeResults":[{"updateTime":"t"}],"writeResults":[{}],"commitTime":"c"}`,
	`{"writeResults":[{"updateTime":"t"}],"writeResults":[null],"commitTime":"c"}`,
	`{"writeResults":[{"updateTime":"t"}],"writeResults":[],"writeResults":[{}],"commitTime":"c"}`,
	`{"writeResults":[{"updateTime":"t"}],"writeResults":null,"writeResults":[{}],"commitTime":"c"}`,
	`{"writeResults":[{"updateTime":"t"},{}],"writeResults":[{}],"commitTime":"c"}`,
	`{"writeResults":[{},{"updateTime":"t"}],"writeResults":[{}],"commitTime":"c"}`,
	`{"writeResults":[{"updateTime":"t"}],"writeResults":null,"commitTime":"c"}`,
	`{"writeResults":[{"updateTime":"t"}],"commitTime":"c","commitTime":null}`,
	`{"writeResults":[{"updateTime":"t"}],"commitTime":"c","commitTime":""}`,
	`{"writeResults":[{"updateTime":"t","updateTime":null}],"commitTime":"c"}`,
	`{"writeResults":[{"updateTime":"t","updateTime":""}],"commitTime":"c"}`,
	`{"writeResults":[{"updateTime":"t"},null],"commitTime":"c"}`, `{"writeResults":[{"updateTime":1}],"commitTime":"c"}`,
	`{"writeResults":{},"commitTime":"c"}`, `{"writeResults":[[]],"commitTime":"c"}`, `{"writeResults":[{"updateTime":"t"}],"commitTime":2}`,
	`{"writeReſults":[{"UPDATETIME":"t"}],"COMMITTIME":"c"}`, `{"writeResults":[{"updateTime":"\u0000"}],"commitTime":"\n"}`,
	`{"writeResults":[{"updateTime":"t"}],"commitTime":"c","x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"writeResults":[{"updateTime":"t"}],"commitTime":"c","x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// tokens inserted by the mutations: JSON's punctuation, escapes, literals and the checks' own members.
var tokens = []string{
	`null`, `"`, `\`, `\u0061`, `\u002f`, `\/`, `\ud800`, `\udc00`, `\ud83d\ude00`, `\u00`, `\n`, `,`, `:`, `{}`, `[]`,
	`[`, `]`, `{`, `}`, `1`, `0`, `-0.5e+3`, `1.`, `true`, `false`, ` `, "\t", "\r\n", "\x00", "\x1f", "\xff", "\xc3\xa9",
	"ſ", "K", `"x":1,`, `"found":null,`, `"found":{},`, `"name":null,`, `"name":"",`, `"transaction":null,`,
	`"transaction":"",`, `"transaction":"q",`, `"writeResults":[],`, `"writeResults":null,`, `"writeResults":[{}],`,
	`"writeResults":[{"updateTime":"u"}],`, `"commitTime":"",`, `"commitTime":null,`, `"updateTime":null,`,
	`"updateTime":"",`, `{"found":{"name":"` + testName + `"}},`, `null,`, `{},`, `"NAME":`, `"Found":`, `"tranſaction"`,
	`"writeReſults"`, `"\u0066ound"`, `"commit\u0054ime"`, `"updateTime"`, `"commitTime"`, `"name"`, `"found"`,
}

// short: at most 300 bytes of an input, for a failure's message.
func short(b []byte) []byte {
	if len(b) > 300 {
		return append(append([]byte(nil), b[:300]...), "…"...)
	}
	return b
}

func mutate(r *rand.Rand, b []byte) []byte {
	m := append([]byte(nil), b...)
	for n := 1 + r.Intn(3); n > 0; n-- {
		if len(m) == 0 {
			m = append(m, tokens[r.Intn(len(tokens))]...)
			continue
		}
		i := r.Intn(len(m))
		switch r.Intn(8) {
		case 0: // a bit flipped
			m[i] ^= 1 << uint(r.Intn(8))
		case 1: // a byte replaced by one of JSON's
			m[i] = `{}[]",:\ ntuflrse0123456789-+.E`[r.Intn(31)]
		case 2: // a span deleted
			j := i + 1 + r.Intn(8)
			if j > len(m) {
				j = len(m)
			}
			m = append(m[:i], m[j:]...)
		case 3, 4: // a token inserted
			m = append(m[:i], append([]byte(tokens[r.Intn(len(tokens))]), m[i:]...)...)
		case 5: // truncated
			m = m[:i]
		case 6: // a span repeated elsewhere
			j := i + 1 + r.Intn(40)
			if j > len(m) {
				j = len(m)
			}
			k := r.Intn(len(m) + 1)
			m = append(m[:k], append(append([]byte(nil), m[i:j]...), m[k:]...)...)
		case 7: // a letter's case changed, or a character escaped
			if c := m[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
				m[i] ^= 0x20
			} else if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
				m = append(m[:i], append([]byte(`\u00`+string("0123456789abcdef"[c>>4])+
					string("0123456789abcdef"[c&15])), m[i+1:]...)...)
			}
		}
	}
	return m
}

// compare fails the test where a check's outcome differs from the reference's on `b`.
func compare(t *testing.T, what string, b []byte) (accepted int) {
	t.Helper()
	what = fmt.Sprintf("%s %q", what, short(b))
	if got, want := jsonValid(b), json.Valid(b); got != want {
		t.Errorf("%s: jsonValid %v, json.Valid %v", what, got, want)
	}
	wantID, wantOK := refBeginID(b)
	id, err := beginID(b)
	if (err == nil) != wantOK || id != wantID {
		t.Errorf("%s: beginID %q (error %s), encoding/json %q (accepted %v) — accepting what the reference rejects "+
			"or the reverse", what, id, short([]byte(fmt.Sprint(err))), wantID, wantOK)
	}
	for _, name := range []string{testName, hearthName} {
		if got, want := checkRead(b, name) == nil, refCheckRead(b, name); got != want {
			t.Errorf("%s: checkRead(%s) accepts %v, encoding/json %v", what, name[len(name)-4:], got, want)
		}
		if wantOK = refCheckRead(b, name); wantOK {
			accepted++
		}
	}
	if got, want := checkCommit(b) == nil, refCheckCommit(b); got != want {
		t.Errorf("%s: checkCommit accepts %v, encoding/json %v", what, got, want)
	}
	if refCheckCommit(b) {
		accepted++
	}
	if id != "" {
		accepted++
	}
	return accepted
}

func TestChecksAcceptTheServersAnswers(t *testing.T) {
	rec := recorded(t)
	for _, server := range []string{"hearth", "emulator"} {
		name := map[string]string{"hearth": hearthName, "emulator": testName}[server]
		if id, err := beginID(rec[server+"-begin"]); err != nil || !strings.HasPrefix(string(rec[server+"-begin"]), "{") || id == "" {
			t.Errorf("%s begin: %q %v", server, id, err)
		}
		if err := checkRead(rec[server+"-batchget"], name); err != nil {
			t.Errorf("%s batchGet: %v", server, err)
		}
		if err := checkCommit(rec[server+"-commit"]); err != nil {
			t.Errorf("%s commit: %v", server, err)
		}
		for label, b := range rec {
			compare(t, label, b)
		}
	}
}

func TestChecksMatchEncodingJSONOnEdgeCases(t *testing.T) {
	accepted := 0
	for _, c := range edgeCases {
		accepted += compare(t, "edge case", []byte(c))
	}
	if accepted < 20 {
		t.Errorf("only %d acceptances among the edge cases: the cases do not reach the checks' fields", accepted)
	}
}

// TestChecksMatchEncodingJSONOnMutations: 60,000 mutants of the recorded answers and the edge cases;
// every check must accept exactly what its encoding/json reference accepts, and json.Valid's verdict hold.
func TestChecksMatchEncodingJSONOnMutations(t *testing.T) {
	var seeds [][]byte
	for _, b := range recorded(t) {
		seeds = append(seeds, b)
	}
	for _, c := range edgeCases {
		if len(c) < 1000 {
			seeds = append(seeds, []byte(c))
		}
	}
	r := rand.New(rand.NewSource(34))
	accepted, valid := 0, 0
	for n := 0; n < 60000 && !t.Failed(); n++ {
		m := mutate(r, seeds[r.Intn(len(seeds))])
		accepted += compare(t, "mutant", m)
		if json.Valid(m) {
			valid++
		}
	}
	t.Logf("%d mutants valid JSON, %d acceptances by the reference checks", valid, accepted)
	if !t.Failed() && (valid < 5000 || accepted < 2000) {
		t.Errorf("mutations too destructive: %d valid, %d accepted", valid, accepted)
	}
}

// TestStringsDecodeAsEncodingJSON: transaction ids of random escapes, surrogates and invalid UTF-8.
func TestStringsDecodeAsEncodingJSON(t *testing.T) {
	pieces := []string{"a", "Z", "/", "+", "=", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0041`, `\u00e9`,
		`\uFFFD`, `\ud800`, `\udbff\udfff`, `\ud83d\ude00`, `\udc00`, `\ud800\u0041`, `\ud800\ud800`, "\xff", "\xc3",
		"\xc3\xa9", "\xe2\x82\xac", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ſ", "\u212a"}
	r := rand.New(rand.NewSource(20))
	for n := 0; n < 5000; n++ {
		var s strings.Builder
		for k := r.Intn(6); k >= 0; k-- {
			s.WriteString(pieces[r.Intn(len(pieces))])
		}
		b := []byte(`{"transaction":"` + s.String() + `"}`)
		compare(t, "string", b)
		var want string
		if json.Unmarshal([]byte(`"`+s.String()+`"`), &want) == nil {
			name := jstring{raw: []byte(s.String())}
			if !name.is(want) || name.decoded() != want || !utf8.ValidString(name.decoded()) {
				t.Errorf("%q decoded %q, encoding/json %q", s.String(), name.decoded(), want)
			}
		}
	}
}

func TestChecksDoNotAllocate(t *testing.T) {
	rec := recorded(t)
	for _, server := range []string{"hearth", "emulator"} {
		read, commit, begin := rec[server+"-batchget"], rec[server+"-commit"], rec[server+"-begin"]
		name := map[string]string{"hearth": hearthName, "emulator": testName}[server]
		if a := testing.AllocsPerRun(100, func() {
			if !scanRead(read, name) || !scanCommit(commit) {
				t.Fatal("rejected")
			}
		}); a != 0 {
			t.Errorf("%s: %.1f allocations per read and commit check", server, a)
		}
		if a := testing.AllocsPerRun(100, func() { beginID(begin) }); a != 1 {
			t.Errorf("%s: %.1f allocations per begin check, want 1 (the id)", server, a)
		}
	}
}

// BenchmarkChecks: one transaction's three checks, the scanner's against encoding/json's.
func BenchmarkChecks(b *testing.B) {
	rec := recorded(b)
	for _, server := range []string{"hearth", "emulator"} {
		begin, read, commit := rec[server+"-begin"], rec[server+"-batchget"], rec[server+"-commit"]
		name := map[string]string{"hearth": hearthName, "emulator": testName}[server]
		b.Run(server+"/scanner", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := beginID(begin); err != nil || checkRead(read, name) != nil || checkCommit(commit) != nil {
					b.Fatal("rejected")
				}
			}
		})
		b.Run(server+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, ok := refBeginID(begin); !ok || !refCheckRead(read, name) || !refCheckCommit(commit) {
					b.Fatal("rejected")
				}
			}
		})
	}
}

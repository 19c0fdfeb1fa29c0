package codeindex

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Zoekt webserver's JSON API, answered as zoekt-webserver -rpc does
// (the reply's lines are []byte, so base64 in JSON).
func TestZoektSearchSpeaksTheJSONAPI(t *testing.T) {
	var got struct {
		Q    string
		Opts map[string]int
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/search" {
			http.Error(w, "wrong endpoint", http.StatusNotFound)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		w.Write([]byte(`{"Result":{"MatchCount":3,"Files":[{"FileName":"net/http/request.go","Repository":"go","Language":"Go","Score":12.5,
			"LineMatches":[{"Line":"ZnVuYyByZWFkUmVxdWVzdChiICpidWZpby5SZWFkZXIp","LineNumber":1062},{"Line":"cmVxdWVzdC5nbw==","LineNumber":0,"FileName":true}]}]}}`))
	}))
	defer srv.Close()
	res, err := Zoekt{URL: srv.URL, Repo: "go.dev/x"}.Search(context.Background(), mustParse(t, "readRequest"), 5)
	if err != nil {
		t.Fatal(err)
	}
	if got.Q != `repo:^go\.dev/x$ (readRequest)` || got.Opts["MaxDocDisplayCount"] != 5 {
		t.Errorf("request: %+v", got)
	}
	if len(res.Hits) != 1 || res.Hits[0].String() != "net/http/request.go:1062: func readRequest(b *bufio.Reader)" || res.Total != 3 {
		t.Errorf("hits: %+v", res)
	}
	// An error reply is an error, with Zoekt's message.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"Error":"parse error: unbalanced parenthesis"}`))
	}))
	defer bad.Close()
	if _, err := (Zoekt{URL: bad.URL}).Search(context.Background(), mustParse(t, "x"), 5); err == nil || !strings.Contains(err.Error(), "unbalanced") {
		t.Errorf("error reply: %v", err)
	}
}

// WithSearch serves searches from the remote and the rest from the local index.
func TestWithSearchSplitsTheIndex(t *testing.T) {
	_, local, _ := newIndex(t, true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"Result":{"Files":[{"FileName":"remote/only.go","LineMatches":[{"Line":"cmVtb3Rl","LineNumber":7}]}]}}`))
	}))
	defer srv.Close()
	ix := WithSearch(local, Zoekt{URL: srv.URL})
	out, err := SearchText(context.Background(), ix, "anything", 5)
	if err != nil || !strings.Contains(out, "remote/only.go:7: remote") {
		t.Errorf("search: %q %v", out, err)
	}
	if len(ix.Definitions([]string{"Gross"})) != 1 || !IsReady(ix) {
		t.Error("the map is not served by the local index")
	}
}

// The real thing, when zoekt-index and zoekt-webserver are at hand
// ($ZOEKT_BIN; see scripts/bench-index.sh for building them).
func TestZoektSearchAgainstARealWebserver(t *testing.T) {
	bin := zoektBin(t)
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "tax.go"), []byte("package tax\n\n// Gross adds the value added tax.\nfunc Gross(net int) int { return net * 120 / 100 }\n"), 0o644)
	idx := t.TempDir()
	if out, err := exec.Command(filepath.Join(bin, "zoekt-index"), "-index", idx, src).CombinedOutput(); err != nil {
		t.Fatalf("zoekt-index: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "zoekt-webserver"), "-index", idx, "-listen", addr, "-rpc")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	z := Zoekt{URL: "http://" + addr, Client: &http.Client{Timeout: 10 * time.Second}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := z.Search(ctx, mustParse(t, "Gross"), 5)
		if err == nil && len(res.Hits) > 0 {
			if res.Hits[0].Path != "tax.go" || !strings.Contains(res.Hits[0].Text, "Gross") {
				t.Fatalf("hits: %+v", res.Hits)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer from zoekt-webserver: %v %+v", err, res)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func mustParse(t testing.TB, text string) Query {
	t.Helper()
	q, err := ParseQuery(text)
	if err != nil {
		t.Fatalf("parsing %q: %v", text, err)
	}
	return q
}

// The query tree becomes Zoekt's syntax, every value a quoted regexp
// unless it is a plain identifier.
func TestZoektQuerySyntax(t *testing.T) {
	for text, want := range map[string]string{
		`readRequest`:                     `readRequest`,
		`a.b "x y" path:net/http lang:go`: `"a\\.b" "x y" file:"net/http" lang:go`,
		`path:*_test.go sym:Serve*`:       `file:"^.*_test\\.go$" sym:"(?i)^Serve.*$"`,
		`path:net/*.go`:                   `file:"(^|/)net/.*\\.go$"`,
		`"a\b"`:                           `"a\\\\b"`,
	} {
		got, err := zoektQuery(mustParse(t, text).Root)
		if err != nil || got != want {
			t.Errorf("%s: got %s (%v), want %s", text, got, err, want)
		}
	}
}

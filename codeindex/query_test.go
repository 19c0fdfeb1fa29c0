package codeindex

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cairn-dev/cairn/search"
)

// ParseQuery reads Cairn's syntax into the tree, and the embedded index
// gets back exactly what its own parser reads from the text.
func TestParseQuery(t *testing.T) {
	q, err := ParseQuery(`parseRequest "read the body" path:net/http lang:Go sym:Serve* file:x.go`)
	if err != nil {
		t.Fatal(err)
	}
	want := And{Children: []Q{Word{"parseRequest"}, Phrase{"read the body"}, File{"net/http"}, File{"x.go"}, Lang{"go"}, Sym{"Serve*"}}}
	if !reflect.DeepEqual(q.Root, want) {
		t.Errorf("tree: %s, want %s", q, want)
	}
	for _, text := range []string{`parseRequest "read the body" path:net/http lang:Go sym:Serve*`, `"unbalanced quote`, `a b`, `sym:X`} {
		q, err := ParseQuery(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		got, err := q.parsed()
		engine, _ := search.ParseQuery(text)
		if err != nil || !reflect.DeepEqual(got, engine) {
			t.Errorf("%s: the engine gets %+v (%v), its parser reads %+v", text, got, err, engine)
		}
	}
	for _, bad := range []string{"", "nope:x", "***"} {
		if _, err := ParseQuery(bad); !errors.Is(err, ErrBadQuery) {
			t.Errorf("%q: %v, want ErrBadQuery", bad, err)
		}
	}
	if _, err := (Query{}).parsed(); !errors.Is(err, ErrBadQuery) {
		t.Errorf("empty tree: %v, want ErrBadQuery", err)
	}
}

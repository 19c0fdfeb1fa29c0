package repomap

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestExampleNames checks what each language's documentation examples
// name, and that prose, other languages' fences and code outside the
// documentation do not count.
func TestExampleNames(t *testing.T) {
	cases := []struct {
		path, src string
		want      string // name:lines, sorted
	}{
		{"map.rs", "/// A map.\n///\n/// # Examples\n///\n/// ```\n/// use std::collections::HashMap;\n/// let mut m = HashMap::new();\n/// m.entry(\"a\").and_modify(|e| *e += 1).or_insert(42); // The count\n/// # m.len();\n/// ```\n///\n/// ```text\n/// Output: Printed(1)\n/// ```\n/// Prose after: Later(2)\npub struct HashMap;\nfn main() { let x = Hidden::new(); }\n",
			"HashMap:2 and_modify:1 collections:1 entry:1 len:1 new:1 or_insert:1"},
		{"HttpRequest.java", "/**\n * A request. {@code Inline} is prose.\n * <pre>{@code HttpRequest request = HttpRequest.newBuilder()\n *      .uri(URI.create(\"http://x/\"))\n *      .POST(BodyPublishers.ofString(\"a.b(c)\"))\n *      .build();}</pre>\n * Then prose(1).\n */\npublic abstract class HttpRequest { void notDoc() { Outside.call(); } }\n",
			"BodyPublishers:1 HttpRequest:1 POST:1 URI:1 build:1 create:1 newBuilder:1 ofString:1 uri:1"},
		{"op.ts", "/**\n * Waits.\n *\n * ## Example\n *\n * ```ts\n * import { interval, take } from 'rxjs';\n * interval(1000).pipe(take(3)).subscribe(x => console.log(x));\n * ```\n *\n * ```html\n * <div>Markup(1)</div>\n * ```\n * @param dueTime Prose(2).\n * @example\n * debounceTime(10)\n * @returns Other(3)\n */\nexport function debounceTime() {}\n",
			"debounceTime:1 interval:1 log:1 pipe:1 subscribe:1 take:1"},
		{"tasks.py", "def run(main):\n    \"\"\"Run it.\n\n    >>> loop = asyncio.new_event_loop()\n    ... loop.run_until_complete(main())  # Comment(1)\n    Prose(2)\n    \"\"\"\n    Outside()\n",
			"main:1 new_event_loop:1 run_until_complete:1"},
		{"http.rb", "# Net::HTTP.\n#\n#   http = Net::HTTP.new(host)\n#   http.read_timeout = 5\n#   http.started? and http.finish\n#   puts \"#{Interp(1)}\"\n#  Prose(2) two spaces is text\nclass HTTP\nend\n",
			"HTTP:1 Net:1 finish:1 new:1 read_timeout=:1 started?:1"},
		{"core.c", "/**\n * f - does it\n * Example: g(1);\n */\nint f(void) { return 0; }\n", ""},
	}
	for _, c := range cases {
		ft, err := ParseFile(c.path, []byte(c.src))
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		var got []string
		for _, x := range ft.Examples {
			got = append(got, fmt.Sprintf("%s:%d", x.Name(), x.Count))
		}
		sort.Strings(got)
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: examples\n got %s\nwant %s", c.path, g, c.want)
		}
	}
}

// TestExamplesRaiseUnfocusedAPI: of two public methods nothing in the
// package calls, the one its documentation shows in use comes first in
// the unfocused map; a focused map does not read examples.
func TestExamplesRaiseUnfocusedAPI(t *testing.T) {
	m := mapOfFiles(t, map[string]string{
		"src/Client.java": `package x;

/**
 * A client.
 * <pre>{@code
 * Client c = Client.open();
 * c.send("hi");
 * }</pre>
 */
public class Client {
    /** Opens one. */
    public static Client open() { return new Client(); }
    /** Sends. */
    public void send(String s) {}
    /** Receives. */
    public String receive() { return ""; }
}
`,
		"src/Use.java": `package x;

public class Use {
    public void run(Client c) { c.toString(); }
}
`,
	})
	g, r := m.rank(Focus{})
	score := scoresBy(g, r, func(d Def) string { return d.Name() })
	if score["send"] <= score["receive"] {
		t.Errorf("unfocused: send (shown in an example) %g, receive %g: want send first", score["send"], score["receive"])
	}
	g, r = m.rank(Focus{Files: []string{"src/Use.java"}})
	score = scoresBy(g, r, func(d Def) string { return d.Name() })
	if score["send"] != score["receive"] {
		t.Errorf("focused: send %g, receive %g: examples should not count", score["send"], score["receive"])
	}
}

// TestMarkdownExamples: a README's code fences in a language the map tags
// count as examples (a shell session's do not), and raise what they use
// in the unfocused map.
func TestMarkdownExamples(t *testing.T) {
	m := mapOfFiles(t, map[string]string{
		"src/schema.ts": `/** A schema. */
export class Schema {
  /** Parses. */
  parse(data: unknown) { return data; }
  /** Checks. */
  check(data: unknown) { return true; }
}
`,
		"src/use.ts": `import { Schema } from "./schema";
export function run(s: Schema) { return s.toString(); }
`,
		"README.md":          "# schema\n\n```sh\nnpm install check\n```\n\n```ts\nconst s = new Schema();\ns.parse(input); // or check(x) in a comment\n```\n\nProse: check(it).\n",
		"docs/deep/guide.md": "```ts\nother.deepName()\n```\n",
	})
	var got []string
	for _, x := range m.docExamples {
		got = append(got, fmt.Sprintf("%s:%d", x.Name(), x.Count))
	}
	sort.Strings(got)
	if g, want := strings.Join(got, " "), "Schema:1 deepName:1 parse:1"; g != want {
		t.Errorf("Markdown examples %q, want %q", g, want)
	}
	g, r := m.rank(Focus{})
	score := scoresBy(g, r, func(d Def) string { return d.Name() })
	if score["parse"] <= score["check"] {
		t.Errorf("unfocused: parse (in the README's example) %g, check %g: want parse first", score["parse"], score["check"])
	}
}

// An edited, created or deleted Markdown file reaches the overview's
// ranking at once (Update with the editor's text, Refresh from disk),
// not at the next build.
func TestMarkdownEditReachesRanking(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"src/schema.ts": "/** A schema. */\nexport class Schema {\n  /** Parses. */\n  parse(data: unknown) { return data; }\n  /** Checks. */\n  check(data: unknown) { return true; }\n}\n",
		"src/use.ts":    "import { Schema } from \"./schema\";\nexport function run(s: Schema) { return s.toString(); }\n",
		"README.md":     "# schema\n\n```ts\ns.parse(input)\n```\n",
	})
	m := newMap(t, root, Options{})
	build(t, m)
	first := func() string {
		t.Helper()
		g, r := m.rank(Focus{})
		score := scoresBy(g, r, func(d Def) string { return d.Name() })
		switch {
		case score["parse"] > score["check"]:
			return "parse"
		case score["check"] > score["parse"]:
			return "check"
		}
		return "tie"
	}
	if got := first(); got != "parse" {
		t.Fatalf("after the build %s ranks first, want parse (the README's example)", got)
	}
	// Unsaved text in the editor (open, as the server keeps it, and
	// passed to Update).
	edited := "# schema\n\n```ts\ns.check(input)\ns.check(other)\n```\n"
	m.ws.Docs.Open(filepath.Join(root, "README.md"), "markdown", 1, edited)
	if err := m.Update("README.md", []byte(edited)); err != nil {
		t.Fatal(err)
	}
	if got := first(); got != "check" {
		t.Errorf("after the README's edit %s ranks first, want check", got)
	}
	// A new guide on disk, then the README deleted.
	writeFiles(t, root, map[string]string{"docs/guide.md": "```ts\ns.parse(a)\ns.parse(b)\ns.parse(c)\n```\n"})
	m.Refresh("docs/guide.md")
	if got := first(); got != "parse" {
		t.Errorf("after a new guide %s ranks first, want parse", got)
	}
	if err := os.Remove(filepath.Join(root, "docs", "guide.md")); err != nil {
		t.Fatal(err)
	}
	m.Refresh("docs/guide.md")
	if got := first(); got != "check" {
		t.Errorf("after the guide's removal %s ranks first, want check (the README's edit)", got)
	}
}

// A second build reads the Markdown files again only when one changed.
func TestMarkdownReadAgainOnlyWhenChanged(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"a.ts":      "export function run() { return 1; }\n",
		"README.md": "```ts\nrun()\n```\n",
	})
	m := newMap(t, root, Options{})
	reads := 0
	read := m.readFile
	m.readFile = func(abs string) ([]byte, error) {
		if strings.HasSuffix(abs, "README.md") {
			reads++
		}
		return read(abs)
	}
	build(t, m)
	build(t, m)
	if reads != 1 {
		t.Errorf("two builds of an unchanged workspace read README.md %d times, want 1", reads)
	}
	writeFiles(t, root, map[string]string{"README.md": "```ts\nrun()\nrun()\n```\n"})
	build(t, m)
	if reads != 2 {
		t.Errorf("a build after README.md changed read it %d times in all, want 2", reads)
	}
	if len(m.docExamples) != 1 || m.docExamples[0].Count != 2 {
		t.Errorf("examples after the change: %v", m.docExamples)
	}
}

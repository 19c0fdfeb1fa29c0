package repomap

import (
	"fmt"
	"strings"
	"testing"
)

// The return type after a macro the C parser cannot expand is no variable,
// and a file-scope operations table names entry points as an export list.
func TestTagsCTypeNamesAndOpsTables(t *testing.T) {
	src := `notrace u64 sched_clock_cpu(int cpu)
{
	return 0;
}

int ext4_setattr(struct dentry *d, struct iattr *attr)
{
	return 0;
}

unsigned long counter = 0;

const struct inode_operations ext4_file_inode_operations = {
	.setattr	= ext4_setattr,
	.flags		= FS_REQUIRES_DEV,
};
`
	ft, err := ParseFile("fs/ext4/file.c", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]string{}
	for _, d := range ft.Defs {
		defs[d.Name()] = d.Kind()
	}
	if k, ok := defs["u64"]; ok {
		t.Errorf("u64 tagged as a %s: it is the return type of sched_clock_cpu", k)
	}
	for _, n := range []string{"sched_clock_cpu", "ext4_setattr", "counter", "ext4_file_inode_operations"} {
		if _, ok := defs[n]; !ok {
			t.Errorf("%s not tagged (defs %v)", n, defs)
		}
	}
	exports := map[string]bool{}
	for _, r := range ft.Refs {
		if r.Export {
			exports[r.Name()] = true
		}
	}
	if !exports["ext4_setattr"] {
		t.Errorf("ext4_setattr in an operations table is not an export (refs %+v)", ft.Refs)
	}
	if exports["FS_REQUIRES_DEV"] {
		t.Error("an all-caps constant in an operations table is not an entry point")
	}
}

// A capitalized receiver is a use of the class: Collections.sort(l).
func TestTagsJavaClassQualifier(t *testing.T) {
	src := `class A {
  void f(java.util.List<String> l) {
    Collections.sort(l);
    TimeUnit u = TimeUnit.SECONDS;
    l.size();
  }
}
`
	ft, err := ParseFile("A.java", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]bool{}
	for _, r := range ft.Refs {
		refs[r.Name()] = true
	}
	for _, n := range []string{"Collections", "TimeUnit"} {
		if !refs[n] {
			t.Errorf("no reference to %s (refs %+v)", n, ft.Refs)
		}
	}
	if refs["l"] {
		t.Error("a lowercase receiver (a variable) is no class reference")
	}
}

// Functions reached through the type rather than an instance are entry
// points; a Rust trait impl's items and a class's constructors are not
// what an overview shows first.
func TestTypeLevelEntriesAndSecondaryItems(t *testing.T) {
	cases := []struct {
		path, src string
		entry     map[string]bool
		secondary map[string]bool
	}{
		{"HttpClient.java", `public abstract class HttpClient {
  protected HttpClient() {}
  public static Builder newBuilder() { return null; }
  public abstract int send(int r);
  @Override
  public String toString() { return ""; }
}
`, map[string]bool{"HttpClient": true, "newBuilder": true, "send": false}, map[string]bool{"HttpClient": true, "send": false, "toString": true}},
		{"net/http.rb", `module Net
  class HTTP
    def HTTP.get(uri)
    end
    def self.start(address)
    end
    def request(req)
    end
  end
end
`, map[string]bool{"Net": true, "HTTP": true, "get": true, "start": true, "request": false}, nil},
		{"map.rs", `pub struct HashMap { n: usize }
impl HashMap {
    pub fn with_capacity(capacity: usize) -> HashMap { HashMap { n: capacity } }
    pub fn new() -> HashMap { HashMap { n: 0 } }
    pub fn len(&self) -> usize { self.n }
    pub fn clear(&mut self) {}
}
impl Default for HashMap {
    fn default() -> HashMap { HashMap::new() }
}
`, map[string]bool{"HashMap": true, "with_capacity": true, "new": true, "len": false, "clear": false}, map[string]bool{"default": true, "len": false}},
	}
	for _, c := range cases {
		ft, err := ParseFile(c.path, []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		for i := range ft.Defs {
			d := &ft.Defs[i]
			if w, ok := c.entry[d.Name()]; ok && d.Kind() != "constructor" {
				if got := isEntry(ft.Language, d); got != w {
					t.Errorf("%s: %s (%s %q) entry %v, want %v", c.path, d.Name(), d.Kind(), d.Signature(), got, w)
				}
			}
			if w, ok := c.secondary[d.Name()]; ok && d.Kind() != "class" {
				if got := isConstructor(d) || inTraitImpl(ft, d) || d.Override; got != w {
					t.Errorf("%s: %s (%s) secondary %v, want %v", c.path, d.Name(), d.Kind(), got, w)
				}
			}
		}
	}
}

func TestElideParams(t *testing.T) {
	for _, c := range []struct{ in, name, want string }{
		{"int __wake_up(struct wait_queue_head *wq_head, unsigned int mode,", "__wake_up", "int __wake_up(…)"},
		{"long wait_woken(struct wait_queue_entry *wq_entry, unsigned mode, long timeout)", "wait_woken", "long wait_woken(…)"},
		{"func (c *Client) Do(req *Request) (*Response, error)", "Do", "func (c *Client) Do(…) (*Response, error)"},
		{"pub fn with_capacity(capacity: usize) -> HashMap<K, V, RandomState> {", "with_capacity", "pub fn with_capacity(…) -> HashMap<K, V, RandomState> {"},
		{"void init(void)", "missing", "void init(void)"},
		{"void run()", "run", "void run()"},
		// Type parameters between the name and its parameters (elided or not).
		{"export declare function custom<…>(check?: (data: any) => any, params?: string | CustomParams,", "custom", "export declare function custom<…>(…)"},
		{"pub fn get<Q: ?Sized>(&self, k: &Q) -> Option<&V>", "get", "pub fn get<Q: ?Sized>(…) -> Option<&V>"},
	} {
		if got := elideParams(c.in, c.name); got != c.want {
			t.Errorf("elideParams(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if !openParams("int f(int a,") || openParams("int f(int a)") {
		t.Error("openParams")
	}
	for _, c := range []struct{ lang, in, want string }{
		{"java", "public class HashMap<K,V> extends AbstractMap<K,V> implements Map<K,V>, Cloneable {", "public class HashMap<K,V>"},
		// A bound inside the type parameters is part of the name.
		{"java", "public abstract class EnumSet<E extends Enum<E>> extends AbstractSet<E>", "public abstract class EnumSet<E extends Enum<E>>"},
		{"java", "public interface Comparable<T> {", "public interface Comparable<T> {"},
		{"csharp", "public class Box<T> : IBox<T> where T : class", "public class Box<T>"},
		{"typescript", "export class Subject<T> extends Observable<T> implements SubscriptionLike {", "export class Subject<T>"},
		{"typescript", "export interface Op<T extends (x: number) => string> extends Base", "export interface Op<T extends (x: number) => string>"},
	} {
		if got := cutHeritage(c.lang, c.in); got != c.want {
			t.Errorf("cutHeritage(%s, %q) = %q, want %q", c.lang, c.in, got, c.want)
		}
	}
}

// A C function a header declares and a .c file defines is shown once,
// by its declaration; an EXPORT_SYMBOL outranks a header declaration.
func TestCHeaderDeclaredAPI(t *testing.T) {
	m := mapOfFiles(t, map[string]string{
		"fs.h":    "extern int fs_open(int fd);\nextern int fs_helper(int fd);\n",
		"open.c":  "#include \"fs.h\"\nint fs_open(int fd)\n{\n\treturn fs_helper(fd);\n}\nEXPORT_SYMBOL(fs_open);\nint fs_helper(int fd)\n{\n\treturn fd;\n}\n",
		"other.c": "#include \"fs.h\"\nint other(int fd)\n{\n\treturn fs_open(fd) + fs_helper(fd);\n}\n",
	})
	out, _ := m.Render(Focus{}, 400)
	if !strings.Contains(out, "fs.h:") || !strings.Contains(out, "fs_open") {
		t.Fatalf("the header's declarations should be shown:\n%s", out)
	}
	g, r := m.rank(Focus{})
	score := scoresBy(g, r, func(d Def) string { return d.Name() + "@" + d.Signature() })
	hOpen, cOpen := score["fs_open@extern int fs_open(int fd);"], score["fs_open@int fs_open(int fd)"]
	if hOpen <= cOpen {
		t.Errorf("the header declaration should stand for the definition: %g vs %g", hOpen, cOpen)
	}
	if hHelper := score["fs_helper@extern int fs_helper(int fd);"]; hOpen <= hHelper {
		t.Errorf("the exported fs_open should outrank fs_helper, which only a header declares: %g vs %g", hOpen, hHelper)
	}
}

// A Java interface's or abstract method is what callers call, whichever
// implementation runs: with no focus it takes its name's flow undivided by
// the implementations, which still share theirs.
func TestAbstractJavaMethodTakesItsFlow(t *testing.T) {
	files := map[string]string{
		"Client.java": `public interface Client {
  Response send(Request r);
  Response sendAsync(Request r);
}
`,
		"Base.java": `public abstract class Base {
  public abstract void close();
  public void open() {}
}
`,
		"impl/FastClient.java": `public class FastClient implements Client {
  public Response send(Request r) { return null; }
  public Response sendAsync(Request r) { return null; }
}
`,
		"impl/SlowClient.java": `public class SlowClient implements Client {
  public Response send(Request r) { return null; }
  public Response sendAsync(Request r) { return null; }
}
`,
	}
	for i := range 4 {
		files[fmt.Sprintf("app/User%d.java", i)] = fmt.Sprintf(`public class User%d {
  void run(Client c, Base b) { c.send(null); b.close(); }
}
`, i)
	}
	for path, want := range map[string]map[string]bool{
		"Client.java":          {"send": true, "sendAsync": true},
		"Base.java":            {"close": true, "open": false, "Base": false},
		"impl/FastClient.java": {"send": false, "FastClient": false},
	} {
		ft, err := ParseFile(path, []byte(files[path]))
		if err != nil {
			t.Fatal(err)
		}
		for di := range ft.Defs {
			if w, ok := want[ft.Defs[di].Name()]; ok {
				if got := isAbstract(ft, di); got != w {
					t.Errorf("%s: %s abstract %v, want %v", path, ft.Defs[di].Name(), got, w)
				}
			}
		}
	}
	m := mapOfFiles(t, files)
	g, r := m.rank(Focus{})
	score := scoresBy(g, r, func(d Def) string { return d.Scope() + "." + d.Name() })
	// The interface's send is credited with send's whole flow; an
	// implementation's with a third (three files define send), on top of
	// the same file baseline shared by three API definitions.
	if score["Client.send"] < 2*score["FastClient.send"] {
		t.Errorf("the interface's send should take the flow its callers send: %g vs an implementation's %g", score["Client.send"], score["FastClient.send"])
	}
	if score["Client.send"] <= score["Client.sendAsync"] {
		t.Errorf("a called interface method should outrank an uncalled one: %g vs %g", score["Client.send"], score["Client.sendAsync"])
	}
}

// An overview shows a Ruby namespace that many files reopen once it has
// been shown: a later file whose reopening holds nothing shown is left
// out (errors.rb's `module Shop` alone, at 80 tokens before), and a
// reopening that holds something shown stays as its parent.
func TestOverviewDropsEmptyRubyReopenings(t *testing.T) {
	files := map[string]string{
		"lib/shop/cart.rb":    "module Shop\n  # A cart of items.\n  class Cart\n    # Adds an item.\n    def add(item)\n      item\n    end\n  end\nend\n",
		"lib/shop/version.rb": "module Shop\n  VERSION = '1.0'\nend\n",
		"lib/shop/errors.rb":  "module Shop\n  LIMIT = 3\nend\n",
		"lib/shop/order.rb":   "module Shop\n  # An order.\n  class Order\n    def place(cart)\n      cart.add(1)\n    end\n  end\nend\n",
		"app/main.rb":         "cart = Shop::Cart.new\norder = Shop::Order.new\norder.place(cart)\nShop::Cart.new.add(2)\n",
	}
	m := mapOfFiles(t, files)
	for _, budget := range []int{40, 60, 80, 200} {
		out, _ := m.Render(Focus{}, budget)
		// Each file's block: its path line, then its items ("12: module Shop").
		empty := 0
		var items []string
		flush := func() {
			if len(items) == 1 && strings.HasSuffix(items[0], ": module Shop") {
				empty++
			}
			items = nil
		}
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if strings.HasSuffix(l, ".rb:") {
				flush()
				continue
			}
			items = append(items, l)
		}
		flush()
		if empty > 0 {
			t.Errorf("at %d tokens, %d files show only `module Shop`:\n%s", budget, empty, out)
		}
		if !strings.Contains(out, "class Cart") {
			t.Errorf("at %d tokens, the overview lost Shop::Cart:\n%s", budget, out)
		}
	}
}

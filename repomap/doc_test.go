package repomap

import "testing"

// TestDocLines checks each language's documentation count on the
// definitions ParseFile returns.
func TestDocLines(t *testing.T) {
	cases := []struct {
		path, src string
		want      map[string]int // definition name → documentation lines
	}{
		{"List.java", `package java.util;

import java.util.function.UnaryOperator;

/**
 * An ordered collection.
 *
 * @since 1.2
 */

public interface List<E> {
    /**
     * Returns the number of elements.
     */
    @Override
    @SuppressWarnings("unchecked")
    int size();

    int undocumented();
}
`, map[string]int{"List": 5, "size": 3, "undocumented": 0}},
		{"map.rs", `// A licence line, then a blank one.

/// A hash map.
///
/// # Examples
#[stable(feature = "rust1", since = "1.0.0")]
#[derive(Clone)]
pub struct HashMap<K, V> {
    base: u8,
}

impl<K, V> HashMap<K, V> {
    /// Returns the number of elements.
    pub fn len(&self) -> usize { 0 }
    pub fn helper(&self) {}
}
`, map[string]int{"HashMap": 3, "len": 1, "helper": 0}},
		{"core.c", `#include <linux/sched.h>

/**
 * wake_up_process - Wake up a specific process
 * @p: The process to be woken up.
 */
int wake_up_process(struct task_struct *p)
{
	return 0;
}

/* ---- helpers ---- */

static int helper(void)
{
	return 1;
}
`, map[string]int{"wake_up_process": 4, "helper": 0}},
		{"a.go", `package a

// Section comment, not documentation.

// New returns a T.
// It never fails.
func New() *T { return nil }

type T struct{}
`, map[string]int{"New": 2, "T": 0}},
		{"http.rb", `module Net
  # Sends a GET request.
  # Returns the response.
  def get(path)
  end

  def helper
  end
end
`, map[string]int{"get": 2, "helper": 0}},
		{"m.py", `def run(main,
        *, debug=None):
    """Execute the coroutine and return the result.

    It always creates a new event loop.
    """
    pass


def one():
    '''One line.'''


def none():
    return 1
`, map[string]int{"run": 4, "one": 1, "none": 0}},
	}
	for _, c := range cases {
		ft, err := ParseFile(c.path, []byte(c.src))
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		got := map[string]int{}
		for _, d := range ft.Defs {
			got[d.Name()] = int(d.docLines)
		}
		for name, want := range c.want {
			if n, ok := got[name]; !ok {
				t.Errorf("%s: no definition %s (have %v)", c.path, name, got)
			} else if n != want {
				t.Errorf("%s: %s has %d documentation lines, want %d", c.path, name, n, want)
			}
		}
	}
}

// TestDeprecated checks each language's deprecation marks on the
// definitions ParseFile returns, and that an overview ranks a deprecated
// definition below its replacement.
func TestDeprecated(t *testing.T) {
	cases := []struct {
		path, src string
		want      map[string]bool // definition name → Deprecated
	}{
		{"Observable.java", `package java.util;

/**
 * An observable object.
 *
 * @deprecated This class and the Observer interface have been deprecated.
 */
@Deprecated(since="9")
public class Observable {
    @Deprecated public void notifyObservers() {}
    public void addObserver(Observer o) {}
}
`, map[string]bool{"Observable": true, "notifyObservers": true, "addObserver": false}},
		{"lib.rs", `/// Old.
#[deprecated(since = "1.0.0", note = "use new_fn")]
pub fn old_fn() {}

/// New.
pub fn new_fn() {}
`, map[string]bool{"old_fn": true, "new_fn": false}},
		{"a.go", `package a

// Old does it.
//
// Deprecated: Use New.
func Old() {}

// New does it.
func New() {}
`, map[string]bool{"Old": true, "New": false}},
		{"m.py", `def old():
    """Do it.

    .. deprecated:: 3.10
       Use new().
    """


def new():
    """Do it."""
`, map[string]bool{"old": true, "new": false}},
		{"u.ts", `/** @deprecated use of() */
export function just(x: number) { return x; }
/** Makes one. */
export function of(x: number) { return x; }
/** @deprecated Use a closure instead of a thisArg. */
export function filter<A>(p: (x: number) => boolean, thisArg: A): number;
export function filter(p: (x: number) => boolean): number;
`, map[string]bool{"just": true, "of": false, "filter": false}},
		{"u.rb", `module U
  # @deprecated Use parse.
  def self.old_parse(s)
  end

  # Parses s.
  def self.parse(s)
  end
end
`, map[string]bool{"old_parse": true, "parse": false}},
	}
	for _, c := range cases {
		ft, err := ParseFile(c.path, []byte(c.src))
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		got := map[string]bool{}
		for _, d := range ft.Defs {
			got[d.Name()] = d.Deprecated
		}
		for name, want := range c.want {
			if dep, ok := got[name]; !ok {
				t.Errorf("%s: no definition %s (have %v)", c.path, name, got)
			} else if dep != want {
				t.Errorf("%s: %s Deprecated = %v, want %v", c.path, name, dep, want)
			}
		}
	}
	// In an overview the replacement comes first, though both are used
	// alike; a focused map ranks them as before.
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"a.go": "package a\n\n// Old does it.\n//\n// Deprecated: Use New.\nfunc Old() {}\n\n// New does it.\nfunc New() {}\n",
		"b.go": "package a\n\nfunc B() { Old(); New() }\n",
		"c.go": "package a\n\nfunc C() { Old(); New() }\n",
	})
	m := newMap(t, root, Options{})
	build(t, m)
	_, r := m.rank(Focus{})
	defs := r.get(r.n)
	pos := map[string]int{}
	g := m.currentGraph()
	for i, x := range defs {
		pos[g.tags[x.file].Defs[x.def].Name()] = i
	}
	if pos["New"] > pos["Old"] {
		t.Errorf("the overview ranks the deprecated Old (#%d) above New (#%d)", pos["Old"], pos["New"])
	}
}

// A Java method that overrides java.lang.Object's is an override with or
// without the annotation; an overload of the same name is not.
func TestJavaObjectMethodsOverride(t *testing.T) {
	ft, err := ParseFile("P.java", []byte(`package p;

public class P {
    public boolean equals(Object o) { return false; }
    public int hashCode() { return 0; }
    public String toString() { return ""; }
    public boolean equals(P other) { return true; }
    public String toString(int indent) { return ""; }
    public int size() { return 0; }
}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]bool{4: true, 5: true, 6: true, 7: false, 8: false, 9: false}
	for _, d := range ft.Defs {
		if w, ok := want[int(d.NameLine)]; ok && d.Override != w {
			t.Errorf("line %d %s: Override = %v, want %v", d.NameLine, d.Signature(), d.Override, w)
		}
	}
}

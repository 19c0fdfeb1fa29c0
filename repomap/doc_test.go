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
			got[d.Name] = int(d.docLines)
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

package shell

import (
	"path/filepath"
	"strings"
)

// opts is a rough getopt view of an argument list: short flag letters,
// long flag names (without value) and operands. Flags that take a separate
// value are named in valued so that the value is not taken for an operand.
type optview struct {
	short    map[byte]bool
	long     map[string]string // name -> value after '=' (or "")
	operands []arg
	values   map[string][]string // flag -> values for flags in valued
}

func parseOpts(args []arg, valued ...string) optview {
	o := optview{short: map[byte]bool{}, long: map[string]string{}, values: map[string][]string{}}
	takes := map[string]bool{}
	for _, f := range valued {
		takes[f] = true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		s := a.s
		switch {
		case a.dyn:
			o.operands = append(o.operands, a)
		case s == "--":
			o.operands = append(o.operands, args[i+1:]...)
			return o
		case strings.HasPrefix(s, "--"):
			name, val, hasEq := strings.Cut(s[2:], "=")
			o.long[name] = val
			if takes["--"+name] && !hasEq && i+1 < len(args) {
				i++
				val = args[i].s
			}
			if takes["--"+name] {
				o.values["--"+name] = append(o.values["--"+name], val)
			}
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				o.short[s[j]] = true
				f := "-" + string(s[j])
				if takes[f] {
					val := s[j+1:]
					if val == "" && i+1 < len(args) {
						i++
						val = args[i].s
					}
					o.values[f] = append(o.values[f], val)
					break
				}
			}
		default:
			o.operands = append(o.operands, a)
		}
	}
	return o
}

func (o optview) has(short string, long ...string) bool {
	for i := 0; i < len(short); i++ {
		if o.short[short[i]] {
			return true
		}
	}
	for _, l := range long {
		if _, ok := o.long[l]; ok {
			return true
		}
	}
	return false
}

// sub splits off the first operand-looking word (a subcommand), skipping
// leading flags; valued flags consume their value.
func sub(args []arg, valued ...string) (string, []arg, bool) {
	takes := map[string]bool{}
	for _, f := range valued {
		takes[f] = true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.dyn {
			return "", args[i:], false
		}
		if strings.HasPrefix(a.s, "-") {
			if takes[a.s] {
				i++
			}
			continue
		}
		return a.s, args[i+1:], true
	}
	return "", nil, true
}

func strs(args []arg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.s
	}
	return out
}

func anyDyn(args []arg) bool {
	for _, a := range args {
		if a.dyn {
			return true
		}
	}
	return false
}

func cmdName(a arg) (string, bool) {
	if a.dyn || (a.glob && a.s != "[") || a.tilde || a.s == "" {
		return "", false
	}
	return filepath.Base(a.s), true
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// anyOptDyn is anyDyn ignoring holes (file names filled in by xargs/find).
func anyOptDyn(args []arg) bool {
	for _, a := range args {
		if a.dyn && !a.hole {
			return true
		}
	}
	return false
}

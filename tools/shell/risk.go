package shell

// Risk is the risk class of a shell command. The classes are ordered:
// Read < Write < Network < Install < Destructive.
type Risk string

// The risk classes, least to most dangerous.
const (
	Read        Risk = "read"
	Write       Risk = "write"
	Network     Risk = "network"
	Install     Risk = "install"
	Destructive Risk = "destructive"
)

// Risks lists every class in ascending order.
var Risks = []Risk{Read, Write, Network, Install, Destructive}

// Rank returns the position of r in the order (0 for Read). A value that is
// not one of the five classes ranks as Destructive, so that an unknown or
// corrupted class never looks harmless.
func (r Risk) Rank() int {
	switch r {
	case Read:
		return 0
	case Write:
		return 1
	case Network:
		return 2
	case Install:
		return 3
	default:
		return 4
	}
}

// Valid reports whether r is one of the five classes.
func (r Risk) Valid() bool {
	switch r {
	case Read, Write, Network, Install, Destructive:
		return true
	}
	return false
}

// AtLeast reports whether r is as dangerous as other or more.
func (r Risk) AtLeast(other Risk) bool { return r.Rank() >= other.Rank() }

// Max returns the most dangerous of the given classes, or Read if none is
// given. An invalid class counts as Destructive and is returned as such.
func Max(rs ...Risk) Risk {
	out := Read
	for _, r := range rs {
		if !r.Valid() {
			return Destructive
		}
		if r.Rank() > out.Rank() {
			out = r
		}
	}
	return out
}

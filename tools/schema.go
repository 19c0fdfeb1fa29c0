package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// inputSchema is a tool's input schema compiled twice: whole, to decide
// whether a call is valid, and per property, to tell a model that got it
// wrong every violation at once (the validator stops at the first), so it
// can fix the call in one turn.
type inputSchema struct {
	whole    *jsonschema.Resolved
	required []string
	props    map[string]*jsonschema.Resolved // nil entry: the property has no schema of its own that resolves alone
	names    []string                        // declared properties, sorted
	closed   bool                            // additionalProperties: false
	extra    *jsonschema.Resolved            // additionalProperties as a schema
	compact  string                          // the schema as compact JSON, shown to the model
}

func compileSchema(raw json.RawMessage) (*inputSchema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("parsing schema: %w", err)
	}
	whole, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("resolving schema: %w", err)
	}
	is := &inputSchema{whole: whole, required: s.Required, props: map[string]*jsonschema.Resolved{}}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		is.compact = buf.String()
	}
	// A sub-schema is resolved alone with the root's definitions, so that
	// its $refs still point somewhere.
	alone := func(sub *jsonschema.Schema) *jsonschema.Resolved {
		c := sub.CloneSchemas()
		if c.Ref == "" {
			c.Defs, c.Definitions = s.Defs, s.Definitions
		}
		r, err := c.Resolve(nil)
		if err != nil {
			return nil
		}
		return r
	}
	for name, sub := range s.Properties {
		is.names = append(is.names, name)
		is.props[name] = alone(sub)
	}
	sort.Strings(is.names)
	if ap := s.AdditionalProperties; ap != nil && len(s.PatternProperties) == 0 {
		if b, _ := json.Marshal(ap); string(b) == "false" || string(b) == `{"not":{}}` {
			is.closed = true
		} else {
			is.extra = alone(ap)
		}
	}
	return is, nil
}

// validate returns nil when inst (a decoded JSON object) is valid, and
// otherwise every violation found, one line each.
func (is *inputSchema) validate(inst map[string]any) []string {
	err := is.whole.Validate(inst)
	if err == nil {
		return nil
	}
	var out []string
	for _, name := range is.required {
		if _, ok := inst[name]; !ok {
			out = append(out, fmt.Sprintf("missing required property %q", name))
		}
	}
	keys := make([]string, 0, len(inst))
	for k := range inst {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub, declared := is.props[k]
		switch {
		case !declared && is.closed:
			out = append(out, fmt.Sprintf("unexpected property %q (the properties are %s)", k, quoteAll(is.names)))
		case !declared && is.extra != nil:
			if err := is.extra.Validate(inst[k]); err != nil {
				out = append(out, fmt.Sprintf("property %q: %s", k, cleanError(err)))
			}
		case sub != nil:
			if err := sub.Validate(inst[k]); err != nil {
				out = append(out, fmt.Sprintf("property %q: %s", k, cleanError(err)))
			}
		}
	}
	if len(out) == 0 {
		// A rule across properties (oneOf, dependencies…): the validator's word.
		out = append(out, cleanError(err))
	}
	return out
}

// cleanError drops the validator's "validating <schema>:" prefixes, which
// name schema locations the model never saw.
func cleanError(err error) string {
	msg := err.Error()
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			return msg
		}
		_, after, found := strings.Cut(rest, ": ")
		if !found {
			return msg
		}
		msg = after
	}
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

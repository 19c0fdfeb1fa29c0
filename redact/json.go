package redact

import (
	"bytes"
	"encoding/json"
)

// JSON masks secrets in every string of a JSON document (values and keys)
// and returns the document re-encoded; doc comes back unchanged when it
// holds nothing to mask or is not JSON. Strings are redacted decoded, so a
// PEM block stored with \n escapes is seen as the lines it is.
func (r *Redactor) JSON(doc []byte) []byte {
	if r == nil || len(doc) == 0 {
		return doc
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber() // keep large integers exact
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return doc
	}
	changed := false
	v = r.walk(v, &changed)
	if !changed {
		return doc
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return doc
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// Value masks secrets in the JSON encoding of v (see JSON) and returns it
// as a json.RawMessage, ready to be marshalled again; on an encoding
// failure it returns v unchanged.
func (r *Redactor) Value(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return json.RawMessage(r.JSON(raw))
}

func (r *Redactor) walk(v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		out, fs := r.Redact(x)
		if len(fs) > 0 {
			*changed = true
		}
		return out
	case []any:
		for i := range x {
			x[i] = r.walk(x[i], changed)
		}
		return x
	case map[string]any:
		for k, e := range x {
			nk := k
			if out, fs := r.Redact(k); len(fs) > 0 {
				*changed, nk = true, out
				delete(x, k)
			}
			x[nk] = r.walk(e, changed)
		}
		return x
	}
	return v
}

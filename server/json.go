package server

import "encoding/json"

// Cairn's own payloads are plain structs encoded with encoding/json and
// handed to the connection as raw messages, so their wire shape is exactly
// what protocol/README.md documents.
func jsonMarshal(v any) ([]byte, error)   { return json.Marshal(v) }
func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

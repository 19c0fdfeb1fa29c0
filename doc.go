// Package cairn is the root of Cairn, an agent runtime for editors. The
// binary is cmd/cairn; the packages and the direction of their imports are
// described in docs/architecture.md and checked by imports_test.go.
package cairn

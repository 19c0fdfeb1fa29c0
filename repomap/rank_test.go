package repomap

import (
	"fmt"
	"strings"
	"testing"
)

// A qualified reference (context.Context) leads to the package it names,
// not to every definition called Context: the method Request.Context no
// longer collects the rank of every context.Context use.
func TestQualifiedReferencesResolveToTheirPackage(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"context/context.go": "package context\n\ntype Context interface{ Done() }\n",
		"web/request.go":     "package web\n\nimport \"example.com/m/context\"\n\ntype Request struct{ ctx context.Context }\n\nfunc (r *Request) Context() context.Context { return r.ctx }\n",
	}
	for i := 0; i < 20; i++ {
		files[fmt.Sprintf("app/f%d.go", i)] = fmt.Sprintf("package app\n\nimport \"example.com/m/context\"\n\nfunc F%d(ctx context.Context) context.Context { return ctx }\n", i)
	}
	writeFiles(t, root, files)
	m := newMap(t, root, Options{})
	build(t, m)
	ft, _ := m.Tags("app/f0.go")
	var names []string
	for _, r := range ft.Refs {
		names = append(names, r.Name)
	}
	if strings.Join(names, " ") != "context.Context" {
		t.Errorf("refs of app/f0.go = %v, want the qualified context.Context", names)
	}
	out, _ := m.Render(Focus{}, 30)
	if !strings.HasPrefix(out, "context/context.go:\n") || strings.Contains(out, "Request) Context()") {
		t.Errorf("the map should open on package context's Context, not Request.Context:\n%s", out)
	}
}

// The unfocused map opens on exported API, not on private helpers, test
// files, or Go's builtin declarations; a focused map leaves out the focus
// file's own definitions.
func TestRankAPIFirstAndFocusFileLeftOut(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"builtin/builtin.go": "package builtin\n\ntype int32 int32\n\ntype string string\n",
		"lib/lib.go":         "package lib\n\n// Serve is the entry point.\nfunc Serve(h Handler) string { return helper(h) }\n\ntype Handler interface{ Handle() string }\n\nfunc helper(h Handler) string { return pad(h.Handle()) }\n\nfunc pad(s string) string { return s }\n",
		"lib/lib_test.go":    "package lib\n\nfunc fakeHandlerForTests() Handler { return nil }\n\nfunc TestServe() { Serve(fakeHandlerForTests()); fakeHandlerForTests(); fakeHandlerForTests() }\n",
	}
	for i := 0; i < 10; i++ {
		files[fmt.Sprintf("app/f%d.go", i)] = fmt.Sprintf("package app\n\nfunc F%d(h lib.Handler) string { var n int32; _ = n; return lib.Serve(h) + pad(\"\") }\n", i)
	}
	writeFiles(t, root, files)
	m := newMap(t, root, Options{})
	build(t, m)
	g, r := m.rank(Focus{})
	top := map[string]int{}
	for i, d := range r.get(4) {
		top[g.tags[d.file].Defs[d.def].Name] = i + 1
	}
	if top["Serve"] == 0 || top["Handler"] == 0 {
		t.Errorf("Serve and Handler should be in the top 4: %v", top)
	}
	for _, name := range []string{"int32", "string", "fakeHandlerForTests"} {
		if top[name] != 0 {
			t.Errorf("%s is in the unfocused top 4: %v", name, top)
		}
	}
	out, _ := m.Render(Focus{Files: []string{"lib/lib.go"}, Known: []string{"lib/lib.go"}}, 200)
	if strings.Contains(out, "lib/lib.go:") || !strings.Contains(out, "app/") {
		t.Errorf("a map focused on a file the prompt holds shows that file's definitions:\n%s", out)
	}
	out, _ = m.Render(Focus{Files: []string{"lib/lib.go"}}, 200)
	if !strings.HasPrefix(out, "lib/lib.go:") {
		t.Errorf("a map focused on a file (the repo_map tool) should open on it:\n%s", out)
	}
}

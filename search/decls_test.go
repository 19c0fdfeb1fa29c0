package search

import "github.com/cairn-dev/cairn/repomap"

// treeSitterDecls is the DeclsFunc production uses (codeindex hands the
// repo map's tags in), so the tests index chunks as the server does.
func treeSitterDecls(rel, lang string, content []byte) []Decl {
	ft, err := repomap.ParseFile(rel, content)
	if err != nil {
		return nil
	}
	out := make([]Decl, 0, len(ft.Decls()))
	for _, d := range ft.Decls() {
		out = append(out, Decl{Symbol: d.Symbol, Kind: d.Kind, StartLine: d.StartLine, EndLine: d.EndLine})
	}
	return out
}

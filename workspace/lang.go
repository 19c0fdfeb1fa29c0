package workspace

import (
	"path"
	"strings"
)

// LanguageOf names the language of a workspace-relative path from its name,
// "" when unknown. It is the one table: the repo map picks a grammar by
// this name and the search index files the path under it (lang: filters).
func LanguageOf(rel string) string {
	base := path.Base(rel)
	switch base {
	case "Makefile", "makefile", "GNUmakefile":
		return "make"
	case "Dockerfile":
		return "dockerfile"
	case "go.mod", "go.sum", "go.work":
		return "gomod"
	}
	return extLanguages[strings.ToLower(path.Ext(base))]
}

var extLanguages = map[string]string{
	".go": "go", ".s": "asm",
	".c": "c", ".h": "c",
	".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp", ".h++": "cpp",
	".py": "python", ".pyi": "python",
	".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
	".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
	".java": "java", ".kt": "kotlin", ".rs": "rust", ".rb": "ruby", ".php": "php", ".cs": "csharp",
	".swift": "swift", ".scala": "scala", ".lua": "lua", ".sh": "bash", ".bash": "bash",
	".zsh": "bash", ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".json": "json", ".yaml": "yaml",
	".yml": "yaml", ".toml": "toml", ".html": "html", ".css": "css", ".sql": "sql",
	".proto": "protobuf", ".xml": "xml", ".el": "elisp", ".ml": "ocaml", ".ex": "elixir",
	".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".vim": "vim", ".scm": "scheme",
	".tmpl": "template", ".rst": "rst",
}

// LanguageFamily is the language a lang: filter names for a language: TSX is
// TypeScript with JSX.
func LanguageFamily(lang string) string {
	if lang == "tsx" {
		return "typescript"
	}
	return lang
}

package codeindex

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/search"
)

// Q is one node of a parsed search query (ParseQuery). Backends read the
// tree, never the text: the embedded index turns it into its engine's
// query, a remote one into its own syntax.
type Q interface {
	String() string
	isQ()
}

// And matches what every child matches: the parts of a query written
// side by side.
type And struct{ Children []Q }

// Word is a plain word or identifier. It matches by its terms:
// case-insensitive, camelCase and snake_case split into parts.
type Word struct{ Text string }

// Phrase is "quoted" text: its words in this order.
type Phrase struct{ Text string }

// File (path: or file:) keeps files whose workspace-relative path holds
// Pattern, or, when Pattern has * or ?, matches it as a glob (the whole
// path or a tail of it starting at a directory). Case-sensitive.
type File struct{ Pattern string }

// Lang (lang:) keeps files of a language, by LanguageOf's name.
type Lang struct{ Name string }

// Sym (sym:) keeps chunks whose declaration is named Name: exact,
// case-insensitive, with * and ? as globs.
type Sym struct{ Name string }

func (And) isQ()    {}
func (Word) isQ()   {}
func (Phrase) isQ() {}
func (File) isQ()   {}
func (Lang) isQ()   {}
func (Sym) isQ()    {}

func (q And) String() string {
	parts := make([]string, len(q.Children))
	for i, c := range q.Children {
		parts[i] = c.String()
	}
	return "(and " + strings.Join(parts, " ") + ")"
}
func (q Word) String() string   { return "word:" + strconv.Quote(q.Text) }
func (q Phrase) String() string { return "phrase:" + strconv.Quote(q.Text) }
func (q File) String() string   { return "path:" + strconv.Quote(q.Pattern) }
func (q Lang) String() string   { return "lang:" + strconv.Quote(q.Name) }
func (q Sym) String() string    { return "sym:" + strconv.Quote(q.Name) }

// Query is a parsed search query.
type Query struct {
	// Root is an And of the query's parts: its words, then its phrases,
	// path:, lang: and sym: filters, each group in the order written.
	Root And
	// Warnings say where the text was read other than as written (an
	// unbalanced quote, words beyond the limit dropped).
	Warnings []string
	// folder, when set, is the workspace folder (by name) whose index runs
	// the query: its path: filters are written over the workspace's paths,
	// which carry that name first (Roots).
	folder string
}

func (q Query) String() string { return q.Root.String() }

// Query limits.
const (
	DefaultLimit = search.DefaultLimit // hits when a search asks for <= 0
	MaxLimit     = search.MaxLimit     // hits a search returns at most
)

// ErrBadQuery wraps every error about the query text itself (as opposed to
// the index), so a tool can hand it back to the model as data.
var ErrBadQuery = search.ErrBadQuery

// ParseQuery reads Cairn's query syntax: plain words and identifiers,
// "quoted phrases", and path: (or file:), lang:, sym: filters, a filter's
// value possibly quoted. The errors wrap ErrBadQuery.
func ParseQuery(text string) (Query, error) {
	p, err := search.ParseQuery(text)
	if err != nil {
		return Query{}, err
	}
	var q Query
	for _, w := range p.Words {
		q.Root.Children = append(q.Root.Children, Word{w})
	}
	for _, s := range p.Phrases {
		q.Root.Children = append(q.Root.Children, Phrase{s})
	}
	for _, s := range p.Paths {
		q.Root.Children = append(q.Root.Children, File{s})
	}
	for _, s := range p.Langs {
		q.Root.Children = append(q.Root.Children, Lang{s})
	}
	for _, s := range p.Syms {
		q.Root.Children = append(q.Root.Children, Sym{s})
	}
	q.Warnings = p.Warnings
	return q, nil
}

// parsed is q as the embedded search engine's query.
func (q Query) parsed() (search.Parsed, error) {
	p := search.Parsed{Warnings: q.Warnings, PathPrefix: q.folder}
	var add func(n Q) error
	add = func(n Q) error {
		switch c := n.(type) {
		case And:
			for _, k := range c.Children {
				if err := add(k); err != nil {
					return err
				}
			}
		case Word:
			p.Words = append(p.Words, c.Text)
		case Phrase:
			p.Phrases = append(p.Phrases, c.Text)
		case File:
			p.Paths = append(p.Paths, c.Pattern)
		case Lang:
			p.Langs = append(p.Langs, c.Name)
		case Sym:
			p.Syms = append(p.Syms, c.Name)
		default:
			return fmt.Errorf("%w: %s is not supported by the search index", ErrBadQuery, n)
		}
		return nil
	}
	if err := add(q.Root); err != nil {
		return p, err
	}
	if len(p.Words)+len(p.Phrases)+len(p.Paths)+len(p.Langs)+len(p.Syms) == 0 {
		return p, fmt.Errorf("%w: empty query", ErrBadQuery)
	}
	return p, nil
}

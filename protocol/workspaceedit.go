package protocol

import "github.com/cairn-dev/cairn/workspace"

// The subset of LSP's WorkspaceEdit that Cairn sends, as plain JSON structs.
// (go.lsp.dev/protocol models documentChanges as a sealed union; these
// structs encode to the same wire shape and are simpler to build and test.)

// WorkspaceEdit is LSP's WorkspaceEdit: versioned documentChanges when the
// client supports them, else plain changes.
type WorkspaceEdit struct {
	Changes         map[string][]TextEdit `json:"changes,omitempty"`
	DocumentChanges []any                 `json:"documentChanges,omitempty"`
}

// TextEdit is LSP's TextEdit.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// ApplyTextEdits applies LSP edits to text (workspace.ApplyTextEdits).
func ApplyTextEdits(text string, edits []TextEdit) (string, error) {
	ws := make([]workspace.TextEdit, len(edits))
	for i, e := range edits {
		ws[i] = workspace.TextEdit(e)
	}
	return workspace.ApplyTextEdits(text, ws)
}

// VersionedTextDocumentIdentifier is LSP's OptionalVersionedTextDocumentIdentifier:
// Version is null when the file is not open in the editor.
type VersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version *int32 `json:"version"`
}

// TextDocumentEdit is LSP's TextDocumentEdit.
type TextDocumentEdit struct {
	TextDocument VersionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []TextEdit                      `json:"edits"`
}

// FileOptions are LSP's CreateFileOptions / DeleteFileOptions.
type FileOptions struct {
	Overwrite         bool `json:"overwrite,omitempty"`
	IgnoreIfExists    bool `json:"ignoreIfExists,omitempty"`
	IgnoreIfNotExists bool `json:"ignoreIfNotExists,omitempty"`
}

// CreateFile is LSP's CreateFile resource operation.
type CreateFile struct {
	Kind    string       `json:"kind"` // "create"
	URI     string       `json:"uri"`
	Options *FileOptions `json:"options,omitempty"`
}

// DeleteFile is LSP's DeleteFile resource operation.
type DeleteFile struct {
	Kind    string       `json:"kind"` // "delete"
	URI     string       `json:"uri"`
	Options *FileOptions `json:"options,omitempty"`
}

// ApplyWorkspaceEditParams is workspace/applyEdit's params.
type ApplyWorkspaceEditParams struct {
	Label string        `json:"label,omitempty"`
	Edit  WorkspaceEdit `json:"edit"`
}

// ApplyWorkspaceEditResult is workspace/applyEdit's result.
type ApplyWorkspaceEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
}

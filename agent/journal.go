package agent

import (
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/cairn-dev/cairn/model"
)

// Journal payloads. Large texts (the built context, tool output, file
// contents) are stored once as content-addressed blobs and referenced by
// hash, so a journal line stays small.

type contextRecord struct {
	System string `json:"system"` // blob hashes
	User   string `json:"user"`
	Report string `json:"report,omitempty"` // the context report (markdown)
}

type toolIntentRecord struct {
	CallID      string          `json:"callId"`
	Tool        string          `json:"tool"`
	Input       json.RawMessage `json:"input"`
	SideEffects bool            `json:"sideEffects"`
	Decision    string          `json:"decision"`
}

type toolResultRecord struct {
	CallID  string `json:"callId"`
	Tool    string `json:"tool,omitempty"`
	OK      bool   `json:"ok"`
	Summary string `json:"summary"`
	Content string `json:"content"` // blob hash
}

type approvalRecord struct {
	CallID   string `json:"callId"`
	Tool     string `json:"tool"`
	Risk     string `json:"risk"`
	Decision string `json:"decision"`
}

type editFileRecord struct {
	Abs          string `json:"abs"`
	Rel          string `json:"rel"`
	Before       string `json:"before"` // blob hash
	BeforeExists bool   `json:"beforeExists"`
	After        string `json:"after"` // blob hash
	Created      bool   `json:"created"`
	// Protected is why Rel is a protected path; set when the edit was
	// confirmed as a protected edit before it was proposed.
	Protected string `json:"protected,omitempty"`
}

type editRecord struct {
	EditID string           `json:"editId"`
	Files  []editFileRecord `json:"files"`
}

type runStartedRecord struct {
	Question  string `json:"question"`
	File      string `json:"file"`
	Selection *struct {
		StartLine int `json:"StartLine"`
		EndLine   int `json:"EndLine"`
	} `json:"selection"`
	// Model is the model the run was asked to use instead of the
	// workspace's (a session's choice); a resume keeps it.
	Model string `json:"model,omitempty"`
}

// modelErrorRecordData is a failed model call: retried or final.
type modelErrorRecordData struct {
	Class        string `json:"class"`
	Message      string `json:"message"`
	Status       int    `json:"status,omitempty"`
	RetryAfterMS int64  `json:"retryAfterMs,omitempty"`
	Attempt      int    `json:"attempt"`
	Retried      bool   `json:"retried"`
}

func modelErrorRecord(err error, attempt int, retried bool) modelErrorRecordData {
	rec := modelErrorRecordData{Class: string(model.ClassOf(err)), Message: err.Error(), Attempt: attempt, Retried: retried}
	var me *model.Error
	if errors.As(err, &me) {
		rec.Status, rec.RetryAfterMS, rec.Message = me.Status, me.RetryAfter.Milliseconds(), me.Message
	}
	return rec
}

// blob stores text and returns its hash ("" when there is no store).
func (r *Run) blob(text string) string {
	if r.m.cps == nil {
		return ""
	}
	h, err := r.m.cps.Blobs.Put(text)
	if err != nil {
		r.logf(slog.LevelError, "storing a journal blob", "err", err)
		return ""
	}
	return h
}

func (r *Run) editRecord(e *Edit) editRecord {
	rec := editRecord{EditID: e.ID}
	for _, f := range e.Files {
		rec.Files = append(rec.Files, editFileRecord{Abs: f.Abs, Rel: f.Rel, Before: r.blob(f.Before), BeforeExists: f.BeforeOK,
			After: r.blob(f.After), Created: f.Created, Protected: f.Protected})
	}
	return rec
}

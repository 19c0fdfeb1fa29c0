package acp

import (
	"context"
	"log/slog"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// configModel is the config option id of the session's model.
const configModel = "model"

// modelListWait bounds how long session/new waits for the endpoint's model
// list: a server without the route, or one that hangs, costs the picker
// its choices, never the session.
const modelListWait = 3 * time.Second

// modelLister is a provider that can list its endpoint's models (the
// OpenAI-compatible one, through GET /models).
type modelLister interface {
	ListModels(ctx context.Context) ([]string, error)
}

// modelList is a workspace's model choices, fetched once per process.
type modelList struct {
	once sync.Once
	ids  []string
}

// models are the model ids a session of w may choose: the endpoint's list
// when it has one, with the configured model first; the configured model
// alone otherwise; none when no model is named (the scripted provider).
func (a *adapter) models(w *workspaceEngines) []string {
	v, _ := a.modelLists.LoadOrStore(w, &modelList{})
	l := v.(*modelList)
	l.once.Do(func() {
		cfg := w.mgr.Config()
		var ids []string
		if cfg.ModelName != "" {
			ids = append(ids, cfg.ModelName)
		}
		lister, ok := cfg.Provider.(modelLister)
		if !ok {
			l.ids = ids
			return
		}
		ctx, cancel := context.WithTimeout(a.ctx, modelListWait)
		defer cancel()
		listed, err := lister.ListModels(ctx)
		if err != nil {
			slog.Info("the endpoint lists no models; offering the configured one", "err", err)
		}
		for _, id := range listed {
			if id != cfg.ModelName {
				ids = append(ids, id)
			}
		}
		l.ids = ids
	})
	return l.ids
}

// currentModel is the model the session's next turn asks.
func (s *session) currentModel() string {
	s.mu.Lock()
	m := s.model
	s.mu.Unlock()
	if m != "" {
		return m
	}
	return s.w.mgr.Config().ModelName
}

// chosenModel is the model chosen for the session, "" when it asks the
// workspace's.
func (s *session) chosenModel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// restoreModel takes up, for a session reopened from disk, the model its
// last run was asked to use, when the endpoint still offers it.
func (a *adapter) restoreModel(s *session) {
	runs := s.runs()
	if len(runs) == 0 {
		return
	}
	id := s.w.mgr.RunModel(runs[len(runs)-1])
	if id == "" {
		return
	}
	for _, m := range a.models(s.w) {
		if m == id {
			s.mu.Lock()
			s.model = id
			s.mu.Unlock()
			return
		}
	}
	slog.Info("the session's model is no longer offered; it asks the configured one", "session", s.id, "model", id)
}

// setModel chooses the session's model; other sessions of the workspace
// keep theirs.
func (a *adapter) setModel(s *session, id string) error {
	ids := a.models(s.w)
	known := false
	for _, m := range ids {
		known = known || m == id
	}
	if !known {
		return invalidParams("unknown model %q: this endpoint offers %q", id, ids)
	}
	s.mu.Lock()
	s.model = id
	s.mu.Unlock()
	_, options := a.sessionSettings(s)
	a.send(s.id, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: options}})
	return nil
}

// modelOptions is the session's model picker as a config option (category
// model), or nothing when there is no model to name.
func (a *adapter) modelOptions(s *session) []sdk.SessionConfigOption {
	ids := a.models(s.w)
	if len(ids) == 0 {
		return nil
	}
	choices := make(sdk.SessionConfigSelectOptionsUngrouped, 0, len(ids))
	for _, id := range ids {
		choices = append(choices, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(id), Name: id})
	}
	desc := "The model this session asks (the endpoint's /models list, or the configured model)"
	category := sdk.SessionConfigOptionCategoryModel
	return []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{
		Id: configModel, Name: "Model", Description: &desc, Category: &category, Type: "select",
		CurrentValue: sdk.SessionConfigValueId(s.currentModel()),
		Options:      sdk.SessionConfigSelectOptions{Ungrouped: &choices},
	}}}
}

// modelState is the same choice in the shape of the (unstable) `models`
// field of session/new, load and resume, which CodeCompanion, avante and
// acp.el read, answered by session/set_model.
func (a *adapter) modelState(s *session) *sdk.SessionModelState {
	ids := a.models(s.w)
	if len(ids) == 0 {
		return nil
	}
	st := &sdk.SessionModelState{CurrentModelId: sdk.ModelId(s.currentModel()), AvailableModels: []sdk.ModelInfo{}}
	for _, id := range ids {
		st.AvailableModels = append(st.AvailableModels, sdk.ModelInfo{ModelId: sdk.ModelId(id), Name: id})
	}
	return st
}

// UnstableSetSessionModel answers session/set_model ({sessionId, modelId}),
// the method clients that predate config options send.
func (a *adapter) UnstableSetSessionModel(ctx context.Context, p sdk.UnstableSetSessionModelRequest) (_ sdk.UnstableSetSessionModelResponse, err error) {
	defer recoverTo(&err, "SetSessionModel")
	s, err := a.session(p.SessionId)
	if err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	if err := a.setModel(s, string(p.ModelId)); err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	return sdk.UnstableSetSessionModelResponse{}, nil
}

// sendInfo tells the client the session's title (its thread's: the first
// question, shortened) and when it was last active, for its session list.
func (a *adapter) sendInfo(s *session) {
	t, ok := s.w.mgr.Thread(s.threadID())
	if !ok || t.Title == "" {
		return
	}
	title := t.Title
	info := &sdk.SessionSessionInfoUpdate{Title: &title}
	if !t.Updated.IsZero() {
		u := t.Updated.UTC().Format(time.RFC3339)
		info.UpdatedAt = &u
	}
	a.send(s.id, sdk.SessionUpdate{SessionInfoUpdate: info})
}

// askMode says whether the session's approval level is ask (else policy).
func (s *session) askMode() bool {
	s.mu.Lock()
	level := s.approval
	s.mu.Unlock()
	if level == "" {
		return s.w.interactive()
	}
	return level == modeAsk
}

// runInteractive is the approval gate's view of a run's session mode.
func (a *adapter) runInteractive(runID string) (bool, bool) {
	a.mu.Lock()
	s := a.runs[runID]
	a.mu.Unlock()
	if s == nil {
		return false, false
	}
	return s.askMode(), true
}

// Package wire is the daemon's wire types (docs/rpc.md): the parameters of
// its methods, its notifications and the answers its clients read, shared
// by the daemon's handlers (internal/daemon/methods) and its client
// (internal/cli), as tailscale's apitype is. run.start's and run.resume's
// parameters are launch.Spec's json names.
package wire

import (
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/store"
)

// StartParams are run.start's and run.resume's parameters: the run's Spec.
// run.start takes all of them but id; run.resume all but folder and
// contract (StartUnlisted, ResumeUnlisted).
type StartParams = launch.Spec

// The names run.start and run.resume do not list, though the Spec has
// them: their handlers refuse them with a fix of their own.
var (
	StartUnlisted  = []string{"id"}
	ResumeUnlisted = []string{"folder", "contract"}
)

// Started is run.start's and run.resume's answer.
type Started struct {
	ID string `json:"id"`
}

// HelloParams are daemon.hello's.
type HelloParams struct {
	Token string `json:"token"`
}

// IDParams are run.state's and run.cancel's (id) and run.events' (id,
// since: the first event's seq to send).
type IDParams struct {
	ID    string `json:"id"`
	Since int    `json:"since,omitempty"`
}

// AnswerParams are confirm.answer's.
type AnswerParams struct {
	Run     string `json:"run"`
	Confirm string `json:"confirm"`
	Answer  string `json:"answer"` // "yes", "no" or "always"
	Note    string `json:"note,omitempty"`
}

// RunEvent is the run.event notification: one event of a run.
type RunEvent struct {
	Run   string      `json:"run"`
	Event store.Event `json:"event"`
}

// ConfirmAsk is the confirm.ask notification: a question of a run for its
// clients, answered with confirm.answer. Its fields are in the order of
// their names, as the daemon has always written them.
type ConfirmAsk struct {
	AlwaysOffered bool           `json:"always_offered"`
	Args          map[string]any `json:"args"`
	Checker       string         `json:"checker"`
	Confirm       string         `json:"confirm"`
	Kind          string         `json:"kind"` // "ordinary" or "security"
	Reason        string         `json:"reason"`
	Run           string         `json:"run"`
	Tool          string         `json:"tool"`
}

// EventsEnd is run.events' answer once the run has ended: where a client
// would ask again from (next), and how the run ended. Its fields are in
// the order of their names.
type EventsEnd struct {
	Ended   bool   `json:"ended"`
	Next    int    `json:"next"`
	Outcome any    `json:"outcome"` // the final text; null for a session this daemon does not hold
	Run     string `json:"run"`
	Status  string `json:"status"`
}

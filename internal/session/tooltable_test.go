package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/prim"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/roles"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/scheme"
)

// x-probe is a tool added the way docs/architecture.md says a tool is
// added: one descriptor registered with prim (here, from this test file)
// and its descriptions in prompts (here, the project's init.scm that
// probeInit is). Nothing else knows of it. It is offered only while
// probeOffered is set, so the other tests see nodwyn's own tools.
var probeOffered atomic.Bool

func init() {
	prim.Register(prim.Tool{
		Name: "x-probe", Order: 1000,
		Offered: func(*prim.Tools) (bool, string) { return probeOffered.Load(), "only in TestAToolAddedOnlyToTheTable" },
		Params: []prim.Param{
			{Name: "file", Type: prim.String, Role: roles.PathRead, Required: true},
			{Name: "times", Type: prim.Integer},
			{Name: "loud", Type: prim.Boolean},
		},
		Run: func(_ *prim.Tools, _ context.Context, a prim.Args) (prim.Result, error) {
			n, _ := a.Int("times")
			return prim.Result{Output: fmt.Sprintf("probed %s %d times, loud %v", a.Str("file"), n, a.Bool("loud"))}, nil
		},
	})
}

const probeInit = `
(define lean-tool-descriptions (cons '("x-probe" . "Probe a file (lean).") lean-tool-descriptions))
(define full-tool-descriptions (cons '("x-probe" . "Probe a file, and say how (full).") full-tool-descriptions))
(define tool-parameter-descriptions
  (cons '("x-probe" ("file" . "file to probe") ("times" . "how many times") ("loud" . "say it loudly"))
        tool-parameter-descriptions))
`

// A tool added only to prim's table and prompts is offered with its
// schema (parameter descriptions included) and its lean or full
// description, its arguments are decoded to their types, and the guard
// judges it by its parameters' roles: its path against the denylist.
func TestAToolAddedOnlyToTheTable(t *testing.T) {
	probeOffered.Store(true)
	defer probeOffered.Store(false)
	for _, profile := range []string{"lean", "full"} {
		t.Run(profile, func(t *testing.T) {
			opts := baseOpts(t)
			opts.Profile = profile
			key := plantCanary(t)
			writeInit(t, &opts, probeInit)
			r := runSession(t, opts, `
> reply
call x-probe {"file": "a.txt", "times": "3", "loud": true}
> reply
call x-probe {"file": "`+key+`"}
> reply
call x-probe {"file": "a.txt", "times": "many"}
> reply
done
`)
			reqs := r.model.Requests()
			if r.out.Status != "finished" || len(reqs) != 4 {
				t.Fatalf("status %q, %d requests: %s", r.out.Status, len(reqs), r.out.Text)
			}
			i := slices.IndexFunc(reqs[0].Tools, func(tl provider.Tool) bool { return tl.Name == "x-probe" })
			if i < 0 {
				t.Fatalf("x-probe is not offered: %v", reqs[0].Tools)
			}
			tool := reqs[0].Tools[i]
			want := map[string]string{"lean": "Probe a file (lean).", "full": "Probe a file, and say how (full)."}[profile]
			if tool.Description != want {
				t.Errorf("x-probe's description %q, want %q", tool.Description, want)
			}
			schema := string(mustJSON(t, tool.Parameters))
			if !strings.Contains(schema, `"file":{"description":"file to probe","type":"string"}`) || !strings.Contains(schema, `"required":["file"]`) {
				t.Errorf("x-probe's schema: %s", schema)
			}
			for k, want := range []string{"probed a.txt 3 times, loud true", "refused (PathDenylist)", `x-probe: argument "times" must be a whole number, not "many"`} {
				if got := lastMessage(reqs[k+1]).Content; !strings.Contains(got, want) {
					t.Errorf("call %d: the model read %q, want %q", k+1, got, want)
				}
			}
			if part, saw := modelSaw(reqs, canary); saw {
				t.Errorf("the model was shown the key: %q", part)
			}
		})
	}
}

// The guard's own DefaultTools are the roles prim's table gives those
// tools: what the session hands the guard (guardTools) and what the
// guard's tests judge by agree. (A tool added to the table alone need not
// be there: the session hands the guard the table's roles.)
func TestTheGuardsDefaultRolesAreTheTables(t *testing.T) {
	known := map[string]bool{}
	for _, p := range guard.DefaultTools() {
		known[p.Tool] = true
	}
	key := func(p guard.ToolParam) string { return fmt.Sprintf("%s %s %s %v", p.Tool, p.Param, p.Role, p.Required) }
	var a, b []string
	for _, p := range guardTools() {
		if known[p.Tool] {
			a = append(a, key(p))
		}
	}
	for _, p := range guard.DefaultTools() {
		b = append(b, key(p))
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Errorf("prim's table gives the guard\n%s\nguard.DefaultTools are\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// Every tool in prim's table has a lean and a full description in
// prompts/tools.scm (the test's own x-probe has its own, in probeInit), and
// each parameter the model fills one short line in
// tool-parameter-descriptions, which the schema the model sees carries.
func TestEveryToolHasALeanAndAFullDescription(t *testing.T) {
	opts := baseOpts(t)
	opts.Dry = true
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tool := range prim.Table() {
		if tool.Name == "x-probe" {
			continue
		}
		for _, proc := range []string{"lean-tool-description", "full-tool-description"} {
			v, err := s.interp.CallByName(context.Background(), proc, scheme.NewString(tool.Name))
			d, _ := v.(*scheme.String)
			if err != nil || d == nil || d.S == tool.Name || len(d.S) < 10 {
				t.Errorf("(%s %q) = %v, %v: prompts/tools.scm does not describe it", proc, tool.Name, v, err)
			}
		}
		props := s.toolSchema(tool.Name)["properties"].(map[string]any)
		for _, p := range tool.Params {
			if p.Internal {
				continue
			}
			d, _ := props[p.Name].(map[string]any)["description"].(string)
			if d == "" || strings.Contains(d, "\n") || len(d) > 40 {
				t.Errorf("%s: %s: the description %q is not one short line in tool-parameter-descriptions (prompts/tools.scm)", tool.Name, p.Name, d)
			}
		}
	}
}

// What the model reads when a call does not run comes from
// prompts/messages.scm, so a project's init.scm changes it; a message that
// fails is said with the built-in text, and a note says so.
func TestAProjectChangesTheMessagesOfCallsThatDoNotRun(t *testing.T) {
	opts := baseOpts(t)
	key := plantCanary(t)
	writeInit(t, &opts, `
(define (refusal-message checker reason) (string-append "NO by " checker))
(define (not-approved-message checker answer reason) (string-append "ASK " checker " / " answer))
(define (no-such-tool-message name tools) (string-append "NONE " name " of " (number->string (length tools))))
(define (bad-arguments-message tool problem) (string-append "JSON! " tool))
`)
	r := runSession(t, opts, `
> reply
call fs-read {"path": "`+key+`"}
> reply
call fs-delete {"path": "a"}
> reply
call shell-exec {"command": "curl https://example.com"}
> reply
rawcall fs-write {"path": "a.txt", "content": "unterminated
> reply
done
`)
	reqs := r.model.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests: %s", len(reqs), r.out.Text)
	}
	for k, want := range []string{"NO by PathDenylist", "NONE fs-delete of 9", "ASK ArgvTrigger / declined (nobody can approve it)", "JSON! fs-write"} {
		if got := lastMessage(reqs[k+1]).Content; got != want {
			t.Errorf("call %d: the model read %q, want %q", k+1, got, want)
		}
	}

	opts = baseOpts(t)
	writeInit(t, &opts, `(define (no-such-tool-message name tools) 42)`)
	r = runSession(t, opts, "> reply\ncall fs-delete {}\n> reply\ndone\n")
	if got := lastMessage(r.model.Requests()[1]).Content; !strings.HasPrefix(got, `there is no tool "fs-delete" here; the tools are: shell-exec, `) {
		t.Errorf("a message that is no string: the model read %q", got)
	}
	if n := r.notes("prompts: no-such-tool-message is 42"); len(n) != 1 {
		t.Errorf("notes: %v", r.notes("prompts:"))
	}
}

// A resumed run's task and its answers to the calls the interrupted run
// left unanswered come from prompts/messages.scm too.
func TestAProjectChangesWhatAResumedRunSays(t *testing.T) {
	for _, override := range []bool{false, true} {
		opts := baseOpts(t)
		if override {
			writeInit(t, &opts, `
(define continue-message "GO ON")
(define interrupted-call-not-run "LOST")
`)
		}
		msgs, _ := json.Marshal([]provider.Message{
			{Role: provider.RoleUser, Content: "the task"},
			{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c1", Name: "shell-exec", Arguments: `{"command": "true"}`}}},
		})
		id := store.NewSessionID()
		if err := opts.Store.SaveState(&store.SessionState{ID: id, Folder: opts.Folder, Instruction: "the task", Status: "interrupted", Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		opts.ResumeID, opts.Instruction = id, ""
		r := runSession(t, opts, "> reply\ndone\n")
		got := contents(r.model.Requests()[0].Messages)
		want := []string{"the task", "", "not run: the session was interrupted before this call finished", "Continue the task."}
		if override {
			want = []string{"the task", "", "LOST", "GO ON"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("override %v: the model read %q, want %q", override, got, want)
		}
	}
}

// TestLeanFirstRequestIsSmall in a git work tree, where git-status and
// git-diff are offered too: the parameters' descriptions keep the lean
// first request under 1,000 tokens (chars/4) there as well.
func TestLeanFirstRequestInAGitWorkTreeIsSmall(t *testing.T) {
	for _, tc := range []struct{ sandbox, copy bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		opts := baseOpts(t)
		opts.Sandbox, opts.Profile = tc.sandbox, "lean"
		gitInit(t, opts.Folder)
		if tc.copy {
			opts.ConfigSeam = config.Seam{Mode: "working_copy"}
		}
		req := runSession(t, opts, "> reply\ndone\n").model.Requests()[0]
		chars := len(req.System)
		for _, tool := range req.Tools {
			chars += len(tool.Name) + len(tool.Description) + len(mustJSON(t, tool.Parameters))
		}
		t.Logf("%+v: %d chars, ~%d tokens, %d tools", tc, chars, chars/4, len(req.Tools))
		if chars/4 > 1000 || !slices.ContainsFunc(req.Tools, func(tl provider.Tool) bool { return tl.Name == "git-diff" }) {
			t.Errorf("%+v: the lean first request is %d tokens with %d tools", tc, chars/4, len(req.Tools))
		}
	}
}

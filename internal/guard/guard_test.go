package guard

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nodwyn/nodwyn/internal/roles"
)

type funcChecker struct {
	name string
	f    func(Request) Decision
}

func (c funcChecker) Name() string                                  { return c.name }
func (c funcChecker) Check(_ context.Context, req Request) Decision { return c.f(req) }

func TestVerdictNames(t *testing.T) {
	for v, s := range map[Verdict]string{Allow: "allow", Confirm: "confirm", SecurityConfirm: "security-confirm", Refuse: "refuse"} {
		if v.String() != s {
			t.Errorf("%d: %q", v, v.String())
		}
	}
}

func TestProjectCheckersCanOnlyTighten(t *testing.T) {
	e := newTestEnv(t)
	g := e.guard(false)
	g.AddChecker(funcChecker{"lenient", func(Request) Decision {
		return Decision{Verdict: Allow, Reason: "the project allows everything"}
	}})
	g.AddChecker(funcChecker{"broken-verdict", func(Request) Decision { return Decision{Verdict: Verdict(-1)} }})
	if d := g.Check(bg, shell("cat ~/.ssh/id_rsa")); d.Verdict != Refuse || d.Checker != "ArgvTrigger" {
		t.Errorf("a project Allow loosened a refusal: %v by %s", d.Verdict, d.Checker)
	}
	if d := g.Check(bg, shell("curl https://example.com")); d.Verdict != Refuse {
		// the broken checker's out-of-range verdict counts as a refusal
		t.Errorf("an out-of-range project verdict: %v by %s", d.Verdict, d.Checker)
	}

	g = e.guard(false)
	g.AddChecker(funcChecker{"no-go-mod", func(req Request) Decision {
		if filepath.Base(argString(req, "path")) == "go.mod" {
			return Decision{Verdict: Refuse, Reason: "go.mod is edited by go mod tidy only"}
		}
		return Decision{}
	}})
	g.AddChecker(funcChecker{"panics", func(req Request) Decision {
		if req.Tool == "fs-read" && argString(req, "path") == "boom" {
			panic("boom")
		}
		return Decision{}
	}})
	if d := g.Check(bg, file("fs-write", "go.mod")); d.Verdict != Refuse || d.Checker != "no-go-mod" {
		t.Errorf("a project refusal: %v by %s", d.Verdict, d.Checker)
	}
	if d := g.Check(bg, file("fs-write", "main.go")); d.Verdict != Allow {
		t.Errorf("ordinary write: %v by %s (%s)", d.Verdict, d.Checker, d.Reason)
	}
	if d := g.Check(bg, file("fs-read", "boom")); d.Verdict != Refuse || d.Checker != "panics" {
		t.Errorf("a panicking checker: %v by %s", d.Verdict, d.Checker)
	}
}

func TestUnknownToolsAndEmptyArgumentsAreNoObjection(t *testing.T) {
	e := newTestEnv(t)
	g := e.guard(false)
	for _, req := range []Request{
		{Tool: "git-status"}, {Tool: "shell-read", Args: map[string]any{"id": 3}}, {Tool: "project-tool", Args: map[string]any{"x": "/etc"}},
		{Tool: "shell-exec"}, {Tool: "fs-read", Args: map[string]any{"path": 7}},
	} {
		if d := g.Check(bg, req); d.Verdict != Allow {
			t.Errorf("%v: %v (%s)", req, d.Verdict, d.Reason)
		}
	}
}

func TestNewFillsDefaultsFromTheEnvironment(t *testing.T) {
	home := t.TempDir()
	cfg := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("CREDENTIALS_DIRECTORY", filepath.Join(home, "creds"))
	g := New(Options{Folder: filepath.Join(home, "proj")})
	o := g.Options()
	if o.Home != home || o.ConfigDir != filepath.Join(cfg, "nodwyn") || o.DataDir != filepath.Join(home, ".local", "share", "nodwyn") || o.CredentialsDir != filepath.Join(home, "creds") || o.AnalysisTimeout <= 0 {
		t.Errorf("defaults: %+v", o)
	}
	for _, p := range []string{filepath.Join(cfg, "nodwyn", "x"), filepath.Join(home, "creds", "k")} {
		if ok, _ := g.Denylist().Denied(p); !ok {
			t.Errorf("%s not denied", p)
		}
	}
}

func TestTheGuardIsSafeForConcurrentUse(t *testing.T) {
	e := newTestEnv(t)
	g := e.guard(false)
	lines := []string{"cat ~/.ssh/id_rsa", "go test ./...", "curl https://example.com", "cat /etc/hosts"}
	want := []Verdict{Refuse, Allow, Confirm, SecurityConfirm}
	done := make(chan struct{})
	for w := 0; w < 4; w++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 50; i++ {
				k := (i + w) % len(lines)
				if d := g.Check(bg, shell(lines[k])); d.Verdict != want[k] {
					t.Errorf("%q: %v", lines[k], d.Verdict)
					return
				}
				g.Redact("AKIAIOSFODNN7EXAMPLE")
			}
		}()
	}
	for w := 0; w < 4; w++ {
		<-done
	}
}

// bg is the context the tests judge under.
var bg = context.Background()

// A tool the guard knows only from Options.Tools (as the session hands it
// prim's table) is judged by its parameters' roles: its path against the
// denylist, the pin and the protected paths, the text it writes by the
// secret scan, its command line by the argv trigger; a standing approval
// of it is its path or its line. Without the roles nothing is judged.
func TestAToolGetsItsRolesFromTheOptions(t *testing.T) {
	e := newTestEnv(t)
	o := e.opts(false)
	o.Unattended = true
	o.Tools = append(DefaultTools(),
		ToolParam{Tool: "x-peek", Param: "file", Role: roles.PathRead, Required: true},
		ToolParam{Tool: "x-put", Param: "target", Role: roles.PathWrite, Required: true},
		ToolParam{Tool: "x-put", Param: "body", Role: roles.Content},
		ToolParam{Tool: "x-scan", Param: "root", Role: roles.PathRead},
		ToolParam{Tool: "x-run", Param: "command", Role: roles.Command, Required: true},
		ToolParam{Tool: "x-exec", Param: "line", Role: roles.Command, Required: true},
		ToolParam{Tool: "x-walk", Param: "under", Role: roles.PathSearch},
		ToolParam{Tool: "x-walk", Param: "match", Role: roles.Pattern},
	)
	g, plain := New(o), e.guard(false)
	const token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
	for _, c := range []struct {
		req     Request
		verdict Verdict
		checker string
	}{
		{Request{"x-peek", map[string]any{"file": filepath.Join(e.Home, ".ssh", "id_rsa")}, nil}, Refuse, "PathDenylist"},
		{Request{"x-peek", map[string]any{"file": "/etc/hosts"}, nil}, Refuse, "RepoPin"},
		{Request{"x-peek", map[string]any{"file": "main.go"}, nil}, Allow, ""},
		{Request{"x-put", map[string]any{"target": ".nodwyn/init.scm"}, nil}, Refuse, "ProtectedPaths"},
		{Request{"x-put", map[string]any{"target": "notes.txt", "body": "token " + token}, nil}, SecurityConfirm, "ContentScan"},
		{Request{"x-scan", map[string]any{}, nil}, Allow, ""}, // an optional path is the folder
		{Request{"x-run", map[string]any{"command": "cat ~/.ssh/id_rsa"}, nil}, Refuse, "ArgvTrigger"},
		// A command parameter of another name, a search tool's pattern:
		// the roles say which parameter is what.
		{Request{"x-exec", map[string]any{"line": "cat ~/.ssh/id_rsa"}, nil}, Refuse, "ArgvTrigger"},
		{Request{"x-walk", map[string]any{"match": "../../*"}, nil}, Refuse, "RepoPin"},
		{Request{"x-walk", map[string]any{"under": e.Folder, "match": "**/*.go"}, nil}, Allow, ""},
	} {
		d := g.Check(bg, c.req)
		if d.Verdict != c.verdict || (c.checker != "" && d.Checker != c.checker) {
			t.Errorf("%s %v: %v by %s (%s), want %v by %s", c.req.Tool, c.req.Args, d.Verdict, d.Checker, d.Reason, c.verdict, c.checker)
		}
		if d := plain.Check(bg, c.req); d.Verdict != Allow {
			t.Errorf("%s without its roles: %v by %s", c.req.Tool, d.Verdict, d.Checker)
		}
	}
	// In sandbox mode a search tool may start above ~/.ssh (it leaves
	// denied files out), never in it, nor with a pattern that starts there;
	// a tool that reads its path may not read there either way.
	so := o
	so.Sandbox = true
	sg := New(so)
	for _, c := range []struct {
		req     Request
		verdict Verdict
	}{
		{Request{"x-walk", map[string]any{"under": e.Home, "match": "*.txt"}, nil}, Allow},
		{Request{"x-walk", map[string]any{"under": e.Home, "match": ".ssh/*"}, nil}, Refuse},
		{Request{"x-walk", map[string]any{"under": filepath.Join(e.Home, ".ssh")}, nil}, Refuse},
		{Request{"x-peek", map[string]any{"file": filepath.Join(e.Home, ".ssh")}, nil}, Refuse},
	} {
		if d := sg.Check(bg, c.req); d.Verdict != c.verdict {
			t.Errorf("sandbox mode: %s %v: %v by %s (%s), want %v", c.req.Tool, c.req.Args, d.Verdict, d.Checker, d.Reason, c.verdict)
		}
	}
	scratch := Request{Tool: "x-put", Args: map[string]any{"target": filepath.Join(e.Scratch, "f")}}
	if !g.IsScratchWrite(scratch) || plain.IsScratchWrite(scratch) {
		t.Error("x-put into the scratch directory is not a scratch write by its role")
	}
	a := NewApprovals(g)
	a.AddFor(Request{Tool: "x-put", Args: map[string]any{"target": "build"}})
	a.AddFor(Request{Tool: "x-run", Args: map[string]any{"command": "make lint"}})
	if !a.matches(Request{Tool: "x-put", Args: map[string]any{"target": "build/out"}}) || !a.matches(Request{Tool: "x-run", Args: map[string]any{"command": "make lint"}}) {
		t.Error("standing approvals of x-put's path and x-run's line do not match")
	}
	if a.matches(Request{Tool: "x-run", Args: map[string]any{"command": "make"}}) {
		t.Error("an approval of `make lint` covers `make`")
	}
}

// CheckArg judges a value as a tool's argument of the role is judged, by
// the built-in checkers only: a credential path read or a write outside
// the folder is stopped as fs-read's or fs-write's would be, a secret in
// content likewise, and the ordinary values go through; a project checker
// (which judges the call itself) is not asked.
func TestCheckArgJudgesAValueAsAnArgumentOfItsRole(t *testing.T) {
	e := newTestEnv(t)
	g := e.guard(false)
	asked := 0
	g.AddChecker(funcChecker{"project", func(Request) Decision { asked++; return Decision{Verdict: Refuse} }})
	key := filepath.Join(e.Home, ".ssh", "id_rsa")
	for _, tc := range []struct {
		role  roles.Role
		value string
		as    Request
	}{
		{roles.PathRead, key, file("fs-read", key)},
		{roles.PathRead, filepath.Join(e.Folder, "main.go"), file("fs-read", "main.go")},
		{roles.PathWrite, filepath.Join(e.Home, ".bashrc"), file("fs-write", filepath.Join(e.Home, ".bashrc"))},
		{roles.PathWrite, filepath.Join(e.Folder, "main.go"), file("fs-write", "main.go")},
		{roles.Content, "aws_secret_access_key = " + canary, Request{Tool: "fs-write", Args: map[string]any{"path": "a.txt", "content": "aws_secret_access_key = " + canary}}},
		{roles.Content, "package main\n", Request{Tool: "fs-write", Args: map[string]any{"path": "a.txt", "content": "package main\n"}}},
	} {
		got := g.CheckArg(bg, tc.role, "path", tc.value)
		if tc.role == roles.Content {
			got = g.CheckArg(bg, tc.role, "content", tc.value)
		}
		asked = 0
		want := g.checkBuiltins(bg, Request{Tool: tc.as.Tool, Args: tc.as.Args, roles: g.roles})
		if got.Verdict != want.Verdict || got.Checker != want.Checker {
			t.Errorf("%s %q: %v by %s, as %s's argument %v by %s", tc.role, tc.value, got.Verdict, got.Checker, tc.as.Tool, want.Verdict, want.Checker)
		}
	}
	if asked != 0 {
		t.Errorf("CheckArg asked the project checker %d times", asked)
	}
	if d := g.CheckArg(bg, roles.PathRead, "path", key); d.Verdict != Refuse {
		t.Errorf("a credential read: %v", d.Verdict)
	}
	if d := g.CheckArg(bg, roles.PathWrite, "path", filepath.Join(e.Folder, "main.go")); d.Verdict != Allow {
		t.Errorf("a write in the folder: %v (%s)", d.Verdict, d.Reason)
	}
}

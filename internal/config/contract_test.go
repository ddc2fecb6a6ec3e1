package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestSandboxTableChoosesTheSeam(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[sandbox]\nmode = \"working_copy\"\ncheckout = \".\"\n")
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.Mode != "working_copy" || c.Sandbox.Checkout != "." || !strings.HasSuffix(c.Origin["sandbox.mode"], "config.toml:2") {
		t.Errorf("sandbox %+v from %q", c.Sandbox, c.Origin["sandbox.mode"])
	}
}

func TestSandboxModeContainerIsRefusedByFileAndLine(t *testing.T) {
	ce, msg := loadErr(t, "[loop]\nprofile = \"lean\"\n\n[sandbox]\nmode = \"container\"\n")
	if ce.Line != 5 || ce.Key != "sandbox.mode" || !strings.Contains(msg, "property of a run") || !strings.Contains(msg, "--sandbox container") {
		t.Errorf("line %d key %q: %s", ce.Line, ce.Key, msg)
	}
	ce, msg = loadErr(t, "[sandbox]\nmode = \"docker\"\n")
	if ce.Line != 2 || !strings.Contains(msg, `"working_copy"`) {
		t.Errorf("line %d: %s", ce.Line, msg)
	}
	ce, msg = loadErr(t, "[sandbox]\nenabled = true\n")
	if ce.Key != "sandbox.enabled" || !strings.Contains(msg, "unknown key") {
		t.Errorf("key %q: %s", ce.Key, msg)
	}
}

// A project's config may choose a working copy, never undo the person's.
func TestAProjectConfigCannotUndoTheWorkingCopy(t *testing.T) {
	dirs, folder := setup(t)
	write(t, filepath.Join(dirs.Config, "config.toml"), "[sandbox]\nmode = \"working_copy\"\n")
	write(t, ProjectConfig(folder), "[sandbox]\nmode = \"no_sandbox\"\n")
	c, err := Load(dirs, folder, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.Mode != "working_copy" || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "cannot undo") {
		t.Errorf("mode %q notes %q", c.Sandbox.Mode, c.Notes)
	}
	// And the other way round it is taken.
	dirs, folder = setup(t)
	write(t, ProjectConfig(folder), "[sandbox]\nmode = \"working_copy\"\n")
	if c, err = Load(dirs, folder, env(nil)); err != nil || c.Sandbox.Mode != "working_copy" {
		t.Errorf("project working_copy: %+v %v", c, err)
	}
}

func TestResolveSeamOrder(t *testing.T) {
	cfg := SeamLayer{Source: "config.toml:2", Seam: Seam{Mode: "no_sandbox", Checkout: "."}, MayUndo: true}
	prof := SeamLayer{Source: "the profile full", Seam: Seam{Mode: "working_copy"}}
	contractUndo := SeamLayer{Source: "h.toml:5", Seam: Seam{Mode: "no_sandbox"}, MayUndo: true}
	projContract := SeamLayer{Source: ".nodwyn/contract.toml:3", Seam: Seam{Mode: "no_sandbox", Checkout: ".."}}

	if s, from, _ := ResolveSeam(nil); s.Mode != "no_sandbox" || s.Checkout != "." || from != "" {
		t.Errorf("default %+v %q", s, from)
	}
	if s, from, _ := ResolveSeam([]SeamLayer{cfg, prof}); s.Mode != "working_copy" || from != "the profile full" {
		t.Errorf("profile over config: %+v %q", s, from)
	}
	if s, from, _ := ResolveSeam([]SeamLayer{cfg, prof, contractUndo}); s.Mode != "no_sandbox" || from != "h.toml:5" {
		t.Errorf("--contract last: %+v %q", s, from)
	}
	s, from, notes := ResolveSeam([]SeamLayer{cfg, prof, projContract})
	if s.Mode != "working_copy" || from != "the profile full" || s.Checkout != ".." || len(notes) != 1 {
		t.Errorf("a project contract's no_sandbox: %+v %q %q", s, from, notes)
	}
}

func TestLoadContract(t *testing.T) {
	_, folder := setup(t)
	p := ProjectContract(folder)
	if c, err := LoadContract(p, true); c != nil || err != nil {
		t.Fatalf("missing contract: %v %v", c, err)
	}
	if _, err := LoadContract(p, false); err == nil {
		t.Fatal("a missing --contract file is not an error")
	}
	write(t, p, "[[check]]\nname = \"unit\"\ncommand = \"sh test.sh\"\n\n[[check]]\nname = \"lint\"\ncommand = \"true\"\n\n[sandbox]\nmode = \"working_copy\"\n")
	c, err := LoadContract(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Checks) != 2 || c.Checks[0].Command != "sh test.sh" || c.Sandbox.Mode != "working_copy" || c.SandboxLine != 10 {
		t.Errorf("contract %+v", c)
	}
	for _, tc := range []struct {
		text, key string
		line      int
		says      string
	}{
		{"[[check]]\nname = \"a\"\ncommand = \"x\"\n[[check]]\ncommand = \"y\"\n", "check[2].name", 4, "needs a name"},
		{"[[check]]\nname = \"a\"\n", "check[1].command", 1, "needs a command"},
		{"[[check]]\nname = \"a\"\ncommand = \"x\"\ntimeout = 3\n", "check.timeout", 4, "unknown key"},
		{"[sandbox]\nmode = \"container\"\n", "sandbox.mode", 2, "property of a run"},
	} {
		write(t, p, tc.text)
		_, err := LoadContract(p, false)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tc.key || ce.Line != tc.line || !strings.Contains(err.Error(), tc.says) || !strings.HasPrefix(err.Error(), p+":") {
			t.Errorf("%q: %v (key %q line %d)", tc.text, err, keyOf(ce), lineOf(ce))
		}
	}
}

func keyOf(e *Error) string {
	if e == nil {
		return ""
	}
	return e.Key
}

func lineOf(e *Error) int {
	if e == nil {
		return 0
	}
	return e.Line
}

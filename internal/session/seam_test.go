package session

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

func newSeamSession(t *testing.T, opts Options) *Session {
	t.Helper()
	opts.Model = script(t, "> reply\ndone\n")
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("session.New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// self-check and run-tests are offered only in a working copy.
func TestSelfCheckToolsOnlyInAWorkingCopy(t *testing.T) {
	opts := baseOpts(t)
	s := newSeamSession(t, opts)
	if slices.Contains(s.tools.Names(), "self-check") || slices.Contains(s.tools.Names(), "run-tests") {
		t.Errorf("no_sandbox offers %v", s.tools.Names())
	}
	if s.tools.Sandbox().Capabilities().Mode != sandbox.ModeNoSandbox {
		t.Errorf("default mode %v", s.tools.Sandbox().Capabilities())
	}
	opts = baseOpts(t)
	opts.ConfigSeam = config.Seam{Mode: "working_copy"}
	s = newSeamSession(t, opts)
	if !slices.Contains(s.tools.Names(), "self-check") || !slices.Contains(s.tools.Names(), "run-tests") {
		t.Errorf("working_copy offers %v", s.tools.Names())
	}
	// Not in a session that is not saved (nodwyn scheme's dry one).
	opts.Dry, opts.Store = true, nil
	s = newSeamSession(t, opts)
	if slices.Contains(s.tools.Names(), "self-check") {
		t.Errorf("a dry session offers self-check")
	}
}

// The seam is resolved configuration → profile → contract, a later one
// winning; a profile may choose a working copy but not undo one, a
// --contract file may.
func TestSeamResolutionOrder(t *testing.T) {
	profile := `(define-profile 'copying (cons (cons 'sandbox "working_copy") (profile-named 'lean)))
(define-profile 'hosting (cons (cons 'sandbox '((mode . "no_sandbox"))) (profile-named 'lean)))`
	for _, tc := range []struct {
		name     string
		cfg      string
		profile  string
		contract string
		given    bool
		want     sandbox.Mode
	}{
		{"default", "", "lean", "", false, sandbox.ModeNoSandbox},
		{"config", "working_copy", "lean", "", false, sandbox.ModeWorkingCopy},
		{"profile over config", "no_sandbox", "copying", "", false, sandbox.ModeWorkingCopy},
		{"a profile cannot undo", "working_copy", "hosting", "", false, sandbox.ModeWorkingCopy},
		{"contract over profile", "", "lean", "working_copy", false, sandbox.ModeWorkingCopy},
		{"a project contract cannot undo", "", "copying", "no_sandbox", false, sandbox.ModeWorkingCopy},
		{"--contract can", "", "copying", "no_sandbox", true, sandbox.ModeNoSandbox},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := baseOpts(t)
			opts.Profile = tc.profile
			writeInit(t, &opts, profile)
			opts.ConfigSeam = config.Seam{Mode: tc.cfg}
			if tc.contract != "" {
				opts.Contract = &config.Contract{Path: "c.toml", Sandbox: config.Seam{Mode: tc.contract}}
				opts.ContractGiven = tc.given
			}
			s := newSeamSession(t, opts)
			if got := s.tools.Sandbox().Capabilities().Mode; got != tc.want {
				t.Errorf("mode %s, want %s (notes %q)", got, tc.want, s.seamNotes)
			}
		})
	}
}

func TestAProfileSandboxSettingIsChecked(t *testing.T) {
	opts := baseOpts(t)
	opts.Profile = "boxed"
	writeInit(t, &opts, `(define-profile 'boxed (cons (cons 'sandbox "container") (profile-named 'lean)))`)
	opts.Model = script(t, "> reply\ndone\n")
	_, err := New(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "property of a run") || !strings.Contains(err.Error(), "the profile boxed") {
		t.Fatalf("New = %v", err)
	}
}

func TestTheCheckoutMustHoldTheFolder(t *testing.T) {
	root := t.TempDir()
	folder := filepath.Join(root, "repo", "sub")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := resolveCheckout(folder, "."); err != nil || got != folder {
		t.Errorf(". = %q, %v", got, err)
	}
	if _, err := resolveCheckout(folder, ".."); err == nil || !strings.Contains(err.Error(), "not in a git work tree") {
		t.Errorf(".. outside git = %v", err)
	}
	if _, err := resolveCheckout(folder, "../../other"); err == nil || !strings.Contains(err.Error(), "does not hold the folder") {
		t.Errorf("a sibling = %v", err)
	}
	gitInit(t, filepath.Join(root, "repo"))
	if got, err := resolveCheckout(folder, ".."); err != nil || got != filepath.Join(root, "repo") {
		t.Errorf(".. in git = %q, %v", got, err)
	}
	if _, err := resolveCheckout(folder, "../.."); err == nil || !strings.Contains(err.Error(), "outside the git work tree") {
		t.Errorf("above the work tree = %v", err)
	}
}

// A full-profile run in a working copy: the model says it is done, the
// contract's check runs and fails, the model is given the result, fixes
// the code and finishes; once.
func TestTheFullProfileRunsTheCheckBeforeFinishing(t *testing.T) {
	opts := baseOpts(t)
	opts.Profile = "full"
	if err := os.WriteFile(filepath.Join(opts.Folder, "v.txt"), []byte("bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.ConfigSeam = config.Seam{Mode: "working_copy"}
	opts.Contract = &config.Contract{Path: "c.toml", Checks: []config.Check{{Name: "unit", Command: "grep -q good v.txt || { echo 'FAIL: v.txt is not good'; exit 1; }"}}}
	opts.ContractGiven = true
	r := runSession(t, opts, `
> reply
I am done.
> reply if message contains FAIL: v.txt is not good
call fs-write {"path": "v.txt", "content": "good\n"}
> reply
Fixed and done.
`)
	if r.out.Status != "finished" || r.out.Text != "Fixed and done." {
		t.Fatalf("outcome %+v", r.out)
	}
	var notes, validations int
	for _, ev := range r.events {
		if ev.Type == "note" && strings.HasPrefix(ev.Data["text"].(string), "self-check: the contract's check failed") {
			notes++
		}
		if ev.Type == "self_validation" {
			validations++
		}
	}
	if notes != 1 || validations != 1 {
		t.Errorf("%d self-check notes, %d self_validation events; want 1 and 1", notes, validations)
	}
}

// A project's own contract that the person has not trusted (a cloned
// repository's .nodwyn/contract.toml) is not run unasked at the finish; the
// model may still call self-check, through the guard. Trusted, it is.
func TestAnUntrustedContractIsNotRunUnasked(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		opts := baseOpts(t)
		opts.Profile = "full"
		opts.ConfigSeam = config.Seam{Mode: "working_copy"}
		opts.Contract = &config.Contract{Path: ".nodwyn/contract.toml", Checks: []config.Check{{Name: "unit", Command: "echo ran > ran.txt; exit 1"}}}
		opts.ContractTrusted = trusted
		r := runSession(t, opts, "> reply\nI am done.\n> reply\nStill done.\n")
		var validations int
		for _, ev := range r.events {
			if ev.Type == "self_validation" {
				validations++
			}
		}
		if want := map[bool]int{false: 0, true: 1}[trusted]; validations != want {
			t.Errorf("trusted=%v: %d self_validation events; want %d", trusted, validations, want)
		}
	}
}

// A contract check that needs a person's yes, unattended, never runs: that
// is logged as not run, and the model is not told its check failed.
func TestADeclinedCheckIsNotAFailedOne(t *testing.T) {
	opts := baseOpts(t)
	opts.Profile = "full"
	opts.Unattended = true
	opts.ConfigSeam = config.Seam{Mode: "working_copy"}
	opts.Contract = &config.Contract{Path: "c.toml", Checks: []config.Check{{Name: "net", Command: "curl -s https://example.com/ | grep -q ok"}}}
	opts.ContractGiven = true
	r := runSession(t, opts, "> reply\nI am done.\n> reply\nunexpected second turn\n")
	if r.out.Text != "I am done." {
		t.Fatalf("outcome %+v: the model was given a check that never ran", r.out)
	}
	var notRun bool
	for _, ev := range r.events {
		if ev.Type == "note" && strings.HasPrefix(ev.Data["text"].(string), "self-check: not run:") {
			notRun = true
		}
	}
	if !notRun {
		t.Errorf("no note that the check was not run")
	}
}

// In a working copy a command runs under the scratch directory, so the
// guard judges a relative path from there too: climbing out of the copy
// into the data directory (the journal's key) is refused, though from the
// folder the same path names a harmless place. Ordinary relative work goes
// through.
func TestAWorkingCopyCommandIsJudgedFromTheCopy(t *testing.T) {
	opts := baseOpts(t)
	opts.ConfigSeam = config.Seam{Mode: "working_copy"}
	s := newSeamSession(t, opts)
	copyDir := filepath.Join(s.Scratch(), "nodwyn-wc-x")
	rel, err := filepath.Rel(copyDir, filepath.Join(opts.Dirs.Data, "journal", "key"))
	if err != nil || !strings.HasPrefix(rel, "..") {
		t.Fatalf("layout: %q %v", rel, err)
	}
	judge := func(line string) guard.Decision {
		return s.Judge(context.Background(), guard.Request{Tool: "shell-exec", Args: map[string]any{"command": line}})
	}
	if d := judge("cat " + rel); d.Verdict != guard.Refuse {
		t.Errorf("cat %s: %v %q; want refused (it reaches the journal key from the copy)", rel, d.Verdict, d.Reason)
	}
	if d := judge("cat README.md && ls .. && echo x > out.txt"); d.Verdict == guard.Refuse {
		t.Errorf("ordinary relative work refused: %q", d.Reason)
	}
}

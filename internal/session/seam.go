package session

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/journal"
	"github.com/nodwyn/nodwyn/internal/prim"
	"github.com/nodwyn/nodwyn/internal/sandbox"
	"github.com/nodwyn/nodwyn/scheme"
)

// The execution seam (internal/sandbox): how the run's commands run. Its
// [sandbox] settings come from the configuration, then the profile's
// sandbox setting, then the contract, a later one winning
// (config.ResolveSeam); only the person's configuration and a --contract
// file may undo a working copy. It is not sandbox mode.

// resolveSeam asks the profile for its sandbox setting (under the init
// chain's bounds) and resolves the seam and the checkout.
func (s *Session) resolveSeam(ctx context.Context) error {
	layers := []config.SeamLayer{{Source: s.opts.ConfigSeamFrom, Seam: s.opts.ConfigSeam, MayUndo: true}}
	if s.opts.ConfigSeamFrom == "" {
		layers[0].Source = "the configuration"
	}
	v, err := s.interp.CallByName(ctx, "profile-ref", scheme.Symbol("sandbox"), false)
	if err != nil {
		return s.loadFailed(ctx, "(profile-ref 'sandbox) (as the init chain defines it)", err, "")
	}
	if scheme.IsTrue(v) {
		ps, err := profileSeam(v)
		if err != nil {
			return fmt.Errorf("the profile %s: its sandbox setting: %w", s.profile, err)
		}
		layers = append(layers, config.SeamLayer{Source: "the profile " + s.profile, Seam: ps})
	}
	if c := s.opts.Contract; c != nil {
		src := c.Path
		if c.SandboxLine > 0 {
			src = fmt.Sprintf("%s:%d", c.Path, c.SandboxLine)
		}
		layers = append(layers, config.SeamLayer{Source: src, Seam: c.Sandbox, MayUndo: s.opts.ContractGiven})
	}
	seam, from, notes := config.ResolveSeam(layers)
	s.seamNotes = append(s.seamNotes, notes...)
	s.seam = sandbox.Mode(seam.Mode)
	if s.seam == sandbox.ModeWorkingCopy {
		checkout, err := resolveCheckout(s.opts.Folder, seam.Checkout)
		if err != nil {
			return fmt.Errorf("[sandbox] checkout = %q (%s): %w", seam.Checkout, from, err)
		}
		s.checkout = checkout
	}
	return nil
}

// profileSeam reads a profile's sandbox setting: a mode ("working_copy" or
// 'working_copy) or an alist ((mode . "working_copy") (checkout . ".")).
func profileSeam(v scheme.Value) (config.Seam, error) {
	var st config.Seam
	switch x := v.(type) {
	case *scheme.String, scheme.Symbol:
		st.Mode = scheme.DisplayString(x)
	case *scheme.Pair:
		items, ok := scheme.ListToSlice(x)
		if !ok {
			return st, fmt.Errorf("want a mode or an alist ((mode . \"working_copy\") (checkout . \".\")), not %s", scheme.WriteString(v))
		}
		for _, it := range items {
			p, ok := it.(*scheme.Pair)
			if !ok {
				return st, fmt.Errorf("want (key . value) pairs, not %s", scheme.WriteString(it))
			}
			switch k := scheme.DisplayString(p.Car); k {
			case "mode":
				st.Mode = scheme.DisplayString(p.Cdr)
			case "checkout":
				st.Checkout = scheme.DisplayString(p.Cdr)
			default:
				return st, fmt.Errorf("unknown key %s: the keys are mode and checkout", k)
			}
		}
	default:
		return st, fmt.Errorf("want a mode or an alist ((mode . \"working_copy\") (checkout . \".\")), not %s", scheme.WriteString(v))
	}
	if st.Mode != "" {
		if err := config.CheckSeamMode(st.Mode); err != nil {
			return st, err
		}
	}
	return st, nil
}

// resolveCheckout is the folder a working copy copies: checkout relative to
// the run's folder, which must be the folder or an ancestor of it inside the
// same git work tree (a copy of more than the project, say the home
// directory, would put what the guard denies where a relative path reaches
// it).
func resolveCheckout(folder, checkout string) (string, error) {
	if checkout == "" {
		checkout = "."
	}
	p := checkout
	if !filepath.IsAbs(p) {
		p = filepath.Join(folder, p)
	}
	p = filepath.Clean(p)
	if p == folder {
		return p, nil
	}
	rel, err := filepath.Rel(p, folder)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("the checkout %s does not hold the folder %s: write \".\" or a parent of the folder inside its git work tree", p, folder)
	}
	top := gitTop(folder)
	if top == "" {
		return "", fmt.Errorf("%s is not in a git work tree, so the checkout can only be the folder itself: write \".\"", folder)
	}
	if r, err := filepath.Rel(top, p); err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", fmt.Errorf("the checkout %s is outside the git work tree %s: write \".\" or a folder inside the work tree", p, top)
	}
	return p, nil
}

func gitTop(folder string) string {
	g, err := exec.LookPath("git")
	if err != nil {
		return ""
	}
	cmd := exec.Command(g, "rev-parse", "--show-toplevel")
	cmd.Dir = folder
	cmd.Env = prim.ScrubEnv(os.Environ(), prim.DefaultOptions().EnvAllow)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return filepath.Clean(strings.TrimSpace(string(out)))
}

// capsValue is (sandbox-caps): the seam's capabilities as an alist.
func capsValue(c sandbox.Caps) scheme.Value {
	kv := func(k string, v scheme.Value) scheme.Value { return scheme.Cons(scheme.Symbol(k), v) }
	return scheme.List(
		kv("mode", scheme.NewString(string(c.Mode))),
		kv("copy", c.Copy),
		kv("kill-on-drop", c.KillOnDrop),
		kv("kernel-floor", c.KernelFloor),
		kv("network", c.Network),
		kv("host-paths", c.HostPaths),
		kv("text", scheme.NewString(c.String())),
	)
}

// recordValidation records one self-check or run-tests: an entry in the
// session's signed journal (internal/journal: kind self_validation, made
// with the journal key in the data directory) and a self_validation event.
// It is evidence only: nothing the session decides reads it.
func (s *Session) recordValidation(v prim.Validation) (string, error) {
	cmd, summary := s.redact(v.Command), s.redact(v.Summary)
	ev := event.SelfValidation{Tool: v.Tool, Check: v.Check, Cmd: cmd, Exit: v.Exit, Summary: summary,
		WorkdirHash: v.WorkDirHash, EvidenceOnly: true, VerdictUnchanged: true}
	var note string
	var err error
	if s.journal == nil {
		var key *journal.Key
		if key, err = journal.LoadOrCreateKey(s.opts.Dirs.Data); err == nil {
			s.journal, err = journal.Open(s.opts.Store.JournalPath(s.ID), s.ID, key)
		}
	}
	if err == nil {
		var e journal.Entry
		e, err = s.journal.Append("self_validation", map[string]any{
			"cmd": cmd, "exit": v.Exit, "summary": summary, "workdir_hash": v.WorkDirHash,
			"evidence_only": true, "verdict_unchanged": true,
		})
		if err == nil {
			ev.JournalSeq = e.Seq
			note = fmt.Sprintf("journal entry %d", e.Seq)
		}
	}
	if err != nil {
		ev.JournalError = err.Error()
	}
	s.emit(ev)
	return note, err
}

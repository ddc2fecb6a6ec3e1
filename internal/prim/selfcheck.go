package prim

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nodwyn/nodwyn/internal/roles"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// self-check {timeout} and run-tests {command, timeout}: self-validation
// (ADR 0025). self-check runs the contract's first declared check,
// run-tests the command the model gives; both run in the session's sandbox
// like shell-exec (in a working copy: a fresh copy of the checkout,
// kill-on-drop) and report the exit status and the hash of the work dir
// the command left. Each run is recorded (SelfCheck.Record: the session's
// signed journal and its self_validation event). They are offered only when
// Options.Seam is working_copy and Options.SelfCheck is set (a store-backed
// session). What they show is evidence only: nothing nodwyn decides changes
// with it.

// SelfCheck configures self-check and run-tests.
type SelfCheck struct {
	Contract string  // the contract's path, for messages ("" when there is none)
	Checks   []Check // the contract's checks; self-check runs the first
	// Record is called after every run; what it returns is added to the
	// result ("journal entry 3"), and so is its error.
	Record func(Validation) (string, error)
}

// Check is one of a contract's checks.
type Check struct{ Name, Command string }

// Validation is what one self-check or run-tests showed.
type Validation struct {
	Tool        string // "self-check" or "run-tests"
	Check       string // the check's name (self-check)
	Command     string
	Exit        int // -1: it did not end (timed out, cancelled)
	Summary     string
	WorkDirHash string // "sha256:…", "" when there was no copy to hash
}

// CheckCommand is the command self-check runs: the contract's first check.
// The session puts it in the call's arguments before the guard judges the
// call, so the guard judges the line that runs.
func (t *Tools) CheckCommand() (name, command string, ok bool) {
	sc := t.opts.SelfCheck
	if sc == nil || len(sc.Checks) == 0 {
		return "", "", false
	}
	return sc.Checks[0].Name, sc.Checks[0].Command, true
}

func init() {
	offered := func(t *Tools) (bool, string) {
		return t.opts.Seam == sandbox.ModeWorkingCopy && t.opts.SelfCheck != nil,
			"self-validation runs in a working copy ([sandbox] mode = \"working_copy\" in config.toml or the contract), in a session that is saved"
	}
	Register(Tool{Name: "self-check", Order: 40, Run: (*Tools).selfCheck, Offered: offered, Params: []Param{
		timeoutParam,
		// The session puts the contract's check here, so the guard
		// judges the line that runs; selfCheck runs CheckCommand.
		{Name: "command", Type: String, Role: roles.Command, Internal: true},
	}})
	Register(Tool{Name: "run-tests", Order: 41, Run: (*Tools).runTests, Offered: offered, Params: []Param{
		{Name: "command", Type: String, Role: roles.Command, Required: true},
		timeoutParam,
	}})
}

func (t *Tools) selfCheck(ctx context.Context, a Args) (Result, error) {
	limit, msg := t.limitArg("self-check", a)
	if msg != "" {
		return failf("%s", msg), nil
	}
	name, command, ok := t.CheckCommand()
	if !ok {
		where := "there is no contract: no .nodwyn/contract.toml in the folder and no --contract file"
		if c := t.opts.SelfCheck.Contract; c != "" {
			where = c + " declares no [[check]]"
		}
		return Result{Output: "self-check: nothing to run: " + where + ". Run the project's tests with run-tests {\"command\": \"...\"} instead."}, nil
	}
	return t.validate(ctx, "self-check", name, command, limit)
}

func (t *Tools) runTests(ctx context.Context, a Args) (Result, error) {
	command := a.Str("command")
	limit, msg := t.limitArg("run-tests", a)
	if msg != "" {
		return failf("%s", msg), nil
	}
	if strings.TrimSpace(command) == "" {
		return failf("run-tests: the command is empty"), nil
	}
	return t.validate(ctx, "run-tests", "", command, limit)
}

func (t *Tools) validate(ctx context.Context, tool, check, command string, limit time.Duration) (Result, error) {
	c := t.command(command, limit, false)
	c.Hash = true // the work dir's hash is the evidence's
	o, err := t.sb.Run(ctx, c)
	res, err := t.shellResult(tool, o, err)
	if err != nil || res.IsError && o.Pgid == 0 {
		return res, err // cancelled, or it could not start: nothing was validated
	}
	v := Validation{Tool: tool, Check: check, Command: command, Exit: o.ExitCode, WorkDirHash: o.WorkDirHash}
	v.Summary = summary(check, o)
	var notes []string
	if v.WorkDirHash != "" {
		notes = append(notes, "work dir "+v.WorkDirHash)
	}
	if rec := t.opts.SelfCheck.Record; rec != nil {
		note, rerr := rec(v)
		if note != "" {
			notes = append(notes, note)
		}
		if rerr != nil {
			notes = append(notes, "not recorded: "+rerr.Error())
		}
	}
	if len(notes) > 0 {
		res.Output = sandbox.WithTrailer(res.Output, "["+strings.Join(notes, "; ")+"]")
	}
	return res, nil
}

// summary is one line: the check, how it ended, its output's last line.
func summary(check string, o sandbox.Output) string {
	var b strings.Builder
	if check != "" {
		fmt.Fprintf(&b, "check %q ", check)
	}
	switch {
	case o.TimedOut:
		b.WriteString("timed out")
	case o.ExitCode == 0:
		b.WriteString("passed (exit 0)")
	default:
		fmt.Fprintf(&b, "failed (exit %d)", o.ExitCode)
	}
	if last := lastLine(o.Out); last != "" {
		b.WriteString(": ")
		b.WriteString(last)
	}
	return b.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n \t"), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 160 {
		cut := 160
		for cut > 0 && !utf8.RuneStart(l[cut]) {
			cut--
		}
		l = l[:cut] + "…"
	}
	return l
}

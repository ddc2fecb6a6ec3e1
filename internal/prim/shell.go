package prim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nodwyn/nodwyn/internal/roles"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// shell-exec {command, timeout}: Options.Shell -c command in the folder,
// through the session's sandbox (internal/sandbox), with the scrubbed
// environment and TMPDIR the scratch directory. stdout and stderr share one
// pipe, so the output keeps its order; the result is the output with a
// trailer line ("[exit status 1]").
//
// The reaping discipline is the sandbox's (sandbox.NoSandbox): the call
// returns when the shell exits, with what a background server printed first
// (its address); runStopping, the default, stops what the command left in its
// process group as the call returns; in sandbox mode (Options.Sandbox,
// sandbox.Release) it is left running. A cancelled call is stopped, and so is
// a command still running at its time limit, except with
// Options.LeaveRunning, where it is left running and stopped by Close. In a
// working copy (Options.Seam) the command runs in a fresh copy of the
// checkout and nothing it starts outlives the call.

func toValid(s string) string { return sandbox.ToValid(s) }

func init() {
	Register(Tool{Name: "shell-exec", Order: 10, Run: (*Tools).shellExec, Params: []Param{
		{Name: "command", Type: String, Role: roles.Command, Required: true},
		timeoutParam,
	}})
}

// timeoutParam is the time limit of shell-exec, self-check and run-tests.
var timeoutParam = Param{Name: "timeout", Type: Integer}

func (t *Tools) shellExec(ctx context.Context, a Args) (Result, error) {
	command := a.Str("command")
	limit, msg := t.limitArg("shell-exec", a)
	if msg != "" {
		return failf("%s", msg), nil
	}
	if strings.TrimSpace(command) == "" {
		return failf("shell-exec: the command is empty"), nil
	}
	o, err := t.runLine(ctx, command, limit, t.opts.LeaveRunning)
	return t.shellResult("shell-exec", o, err)
}

// limitArg reads a call's timeout argument (seconds), capped by MaxTimeout;
// the default is Options.Timeout. msg says what is wrong with it.
func (t *Tools) limitArg(tool string, a Args) (limit time.Duration, msg string) {
	limit = t.opts.Timeout
	if n, ok := a.Int("timeout"); ok {
		if n <= 0 {
			return 0, fmt.Sprintf("%s: timeout must be a positive number of seconds, not %d", tool, n)
		}
		limit = min(time.Duration(n)*time.Second, t.opts.MaxTimeout)
	}
	return limit, ""
}

// runLine runs a command line through the session's sandbox, in the folder.
func (t *Tools) runLine(ctx context.Context, line string, limit time.Duration, leaveRunning bool) (sandbox.Output, error) {
	o, err := t.sb.Run(ctx, t.command(line, limit, leaveRunning))
	if t.opts.AfterCommand != nil {
		if note := t.opts.AfterCommand(); note != "" {
			o.Trailer = strings.TrimSpace(o.Trailer + "\n" + note)
		}
	}
	return o, err
}

// command is a command line as the sandbox runs it: the shell, the folder,
// the scrubbed environment, the run's process handling.
func (t *Tools) command(line string, limit time.Duration, leaveRunning bool) sandbox.Command {
	how := sandbox.Stop
	if t.opts.Sandbox {
		how = sandbox.Release
	}
	return sandbox.Command{
		Shell: t.opts.Shell, Line: line, Dir: t.opts.Folder, Env: t.env,
		Timeout: limit, LeaveRunning: leaveRunning, Handling: how, MaxOutput: t.opts.MaxOutput,
	}
}

// shellResult is a command's Output as a tool's Result: a command that
// could not start is a failed call, a cancelled one comes with ctx's error.
func (t *Tools) shellResult(tool string, o sandbox.Output, err error) (Result, error) {
	var se *sandbox.StartError
	if errors.As(err, &se) {
		return failf("%s: %v", tool, se), nil
	}
	res := Result{Output: o.Text(), ExitCode: o.ExitCode}
	if err != nil {
		res.IsError = true
		return res, err
	}
	return res, nil
}

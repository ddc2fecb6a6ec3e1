// Package sandbox is the execution seam: every program one of nodwyn's tool
// primitives starts (shell-exec, shell-start, self-check, run-tests, the git
// tools) goes through the session's [Sandbox]. The guard decides whether a
// call runs; the sandbox decides where and how it runs.
//
// Two implementations (ADR 0025, seed 003):
//
//   - [NoSandbox], the default: the command runs on the host, in the folder,
//     in a process group of its own, with the reaping discipline of seed 000
//     (the output settles, what the command left behind is stopped, or left
//     running in sandbox mode).
//   - [WorkingCopySandbox]: each command runs in an ephemeral copy of the
//     checkout, made by [CopyCheckout] and removed when the call ends, in a
//     process group that is killed when the call ends (kill-on-drop), with
//     whatever else carries the call's mark. What the command writes under
//     the copy (through its links into the checkout too) never reaches the
//     real folder, and with Command.Hash the call reports the hash of the
//     copy as the command left it ([HashDir], docs/sandbox.md).
//     It is not a security boundary: a command that names an absolute path
//     still reaches the host, with the host's permissions and network.
//
// The [sandbox] table of config.toml (mode = "no_sandbox" | "working_copy")
// chooses between them. It is a different thing from sandbox mode (nodwyn
// run --sandbox container), the run's declaration that the machine is
// disposable, which is the Release handling here.
//
// sandbox imports only the standard library and golang.org/x/sys.
package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Mode names an implementation, as config.toml's [sandbox] mode says it.
type Mode string

const (
	ModeNoSandbox   Mode = "no_sandbox"
	ModeWorkingCopy Mode = "working_copy"
)

// Modes are the modes a [sandbox] table may choose.
var Modes = []Mode{ModeNoSandbox, ModeWorkingCopy}

// Handling is what happens to the processes a command leaves in its process
// group once the command's own program has exited.
type Handling int

const (
	// Stop (runStopping, the default): they are stopped (SIGTERM, SIGKILL
	// after a grace) as the call returns, and whatever left the group but
	// holds the output pipe is stopped when the sandbox closes.
	Stop Handling = iota
	// Release (sandbox mode, seed 000's piped.release): they are left alone
	// and keep running; the pipe is read and dropped until they end.
	Release
	// KillOnDrop (the working copy): they are stopped before the call
	// returns, and so is every other process holding the output pipe, so
	// nothing the command started outlives the call.
	KillOnDrop
)

// Command is one program a primitive runs.
type Command struct {
	// Line is run with Shell -c Line; or, when Argv is set, Argv[0] is run
	// with Argv[1:] and no shell.
	Shell string
	Line  string
	Argv  []string
	// Dir is the folder it runs in (absolute). A WorkingCopySandbox runs it
	// in the same place in the copy.
	Dir   string
	Env   []string  // the environment, as prim scrubbed it
	Stdin io.Reader // nil: /dev/null
	// Timeout is the time limit (0: none but ctx's). At the limit the
	// command is stopped, or with LeaveRunning left running (and stopped
	// when the sandbox closes).
	Timeout      time.Duration
	LeaveRunning bool
	Handling     Handling
	MaxOutput    int // bytes of output kept (head and tail); 0: 1 MiB
	// Hash asks a WorkingCopySandbox for the copy's hash after the command
	// (Output.WorkDirHash); without it the copy is not hashed.
	Hash bool
}

func (c Command) program() string {
	if len(c.Argv) > 0 {
		return c.Argv[0]
	}
	return c.Shell
}

// Output is what a command did. Out is stdout and stderr in the order they
// were written (one pipe), the first and last MaxOutput/2 bytes of it;
// Trailer is the line nodwyn adds ("[exit status 1]", "[timed out after
// 2m0s; the process was stopped]").
type Output struct {
	Out         string
	Trailer     string
	ExitCode    int  // the exit status; 128+n for a signal; -1 when it did not end
	TimedOut    bool // stopped, or left running, at its time limit
	LeftRunning bool // LeaveRunning: still running in the background
	Cancelled   bool // ctx ended first; Run's error is ctx's
	Pgid        int  // the process group the command ran in
	// WorkDirHash is the hash of the working copy after the command
	// (WorkingCopySandbox with Command.Hash only): "sha256:<hex>", see HashDir.
	WorkDirHash string
}

// Text is the output as the model reads it: Out, then the trailer on a line
// of its own.
func (o Output) Text() string { return WithTrailer(o.Out, o.Trailer) }

// StartError is a command that could not be started (no such shell, the
// folder gone, the working copy not made).
type StartError struct {
	Program string // "" when the place to run it could not be made: Err says why
	Err     error
}

func (e *StartError) Error() string {
	if e.Program == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("could not start %s: %v", e.Program, e.Err)
}
func (e *StartError) Unwrap() error { return e.Err }

// Caps says what an implementation contains, for the log, the prompt and
// nodwyn doctor.
type Caps struct {
	Mode        Mode
	Copy        bool // commands run in a copy of the checkout; what they write is discarded
	KillOnDrop  bool // nothing a command starts outlives its call
	KernelFloor bool // the kernel floor (Floor) denies the credential paths to every command
	Network     bool // commands reach the network as the host does
	HostPaths   bool // absolute paths reach the host's files
}

// CapsOf is what the implementation of mode contains.
func CapsOf(m Mode) Caps {
	if m == ModeWorkingCopy {
		return Caps{Mode: ModeWorkingCopy, Copy: true, KillOnDrop: true, Network: true, HostPaths: true}
	}
	return Caps{Mode: ModeNoSandbox, Network: true, HostPaths: true}
}

// String is Caps for a person: "working_copy (a copy of the checkout per
// command, kill-on-drop; not a security boundary: host paths, network)".
func (c Caps) String() string {
	var has, reach []string
	if c.Copy {
		has = append(has, "a copy of the checkout per command")
	} else {
		has = append(has, "host execution in the folder")
	}
	if c.KillOnDrop {
		has = append(has, "kill-on-drop")
	}
	if c.KernelFloor {
		has = append(has, "kernel floor")
	}
	if c.HostPaths {
		reach = append(reach, "host paths")
	}
	if c.Network {
		reach = append(reach, "network")
	}
	s := string(c.Mode) + " (" + strings.Join(has, ", ")
	if len(reach) > 0 {
		s += "; not a security boundary: " + strings.Join(reach, ", ")
	}
	return s + ")"
}

// Sandbox is the execution seam: Run runs a command to its end, Start one in
// the background, Materialize makes the place commands run in, Capabilities
// says what the implementation contains, Close stops what is left.
type Sandbox interface {
	// Run runs c to its end (or its time limit). The error is a
	// *StartError, or ctx's error when ctx ended first (the partial
	// Output comes with it).
	Run(ctx context.Context, c Command) (Output, error)
	// Start starts c in the background, its output going to out. The
	// process is the sandbox's until it ends, Process.Stop stops it or
	// Close does.
	Start(c Command, out *os.File) (*Process, error)
	// Materialize makes the directory commands for checkout run in: the
	// checkout itself for NoSandbox, a fresh copy for WorkingCopySandbox.
	// Remove the WorkDir when done.
	Materialize(ctx context.Context, checkout string) (*WorkDir, error)
	Capabilities() Caps
	// Close stops every process the sandbox still owns (see NoSandbox.Close).
	Close() error
}

// WithTrailer is out with trailer on a line of its own after it.
func WithTrailer(out, trailer string) string {
	if trailer == "" {
		return out
	}
	if out == "" {
		return trailer
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + trailer
}

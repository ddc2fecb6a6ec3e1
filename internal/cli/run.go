package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/internal/termtext"
)

// RunCmd is `nodwyn run`. Every flag that changes the run reaches
// launch.Spec through spec(); the others are in cliOnly
// (TestEveryRunFlagReachesTheSpec holds both).
type RunCmd struct {
	Instruction     []string      `arg:"" optional:"" help:"The task. '-' reads it from standard input."`
	InstructionFile string        `name:"instruction-file" type:"existingfile" help:"Read the task from this file (a harness's argv then does not hold it)."`
	Folder          string        `short:"C" name:"folder" help:"The folder to work in (default: the current one; with --resume, the session's)."`
	Profile         string        `help:"Loop profile: lean, full, or a project's own (default: [loop] profile, NODWYN_PROFILE, else lean unattended or with no terminal, full otherwise)."`
	Provider        string        `help:"Model provider."`
	Reasoning       string        `help:"Reasoning effort: low, medium or high (also [provider] reasoning)." placeholder:"EFFORT"`
	Model           string        `help:"The model's name at the provider."`
	BaseURL         string        `name:"base-url" help:"The provider's endpoint (also OPENAI_BASE_URL / ANTHROPIC_BASE_URL)."`
	Script          string        `type:"existingfile" help:"Use the scripted model with this reply file (no key, no network)."`
	MaxToolCalls    int           `name:"max-tool-calls" help:"Stop after this many tool calls (exit 3)."`
	Timeout         time.Duration `help:"Wall-clock limit for the run, e.g. 30m (exit 3)."`
	RequestTimeout  time.Duration `name:"request-timeout" help:"Limit of one request to the model (default 10m); retried."`
	IdleTimeout     time.Duration `name:"idle-timeout" help:"Cut a request that receives no data for this long (default 2m); retried."`
	JSON            bool          `name:"json" help:"Write every event as a JSON line on stdout."`
	Trajectory      string        `help:"Write an ATIF trajectory (Harbor's format) to this file as the run goes."`
	Resume          string        `help:"Continue this session (an id, its start, or 'last'), in its folder, with its provider, model and base URL."`
	Yolo            bool          `help:"Answer ordinary confirms yes (security confirms: asked, or declined unattended)."`
	Unattended      bool          `help:"Nobody answers: ordinary confirms declined (yes with --yolo), security ones declined; implied when standard input is not a terminal."`
	NoConfirm       bool          `name:"no-confirm" help:"Decline every confirm without asking."`
	Judge           JudgeFlag     `help:"Unattended, with a judge model (the run's, or MODEL) for ordinary confirms; security ones declined." placeholder:"MODEL"`
	Sandbox         string        `help:"'container': this machine is the run's disposable sandbox (implies --yolo --unattended)." placeholder:"container"`
	Quiet           bool          `short:"q" help:"No progress on stderr."`
	TrustProject    bool          `name:"trust-project" help:"Load the project's untrusted .nodwyn/ files for this run ('nodwyn trust')."`
	Contract        string        `type:"existingfile" help:"The contract: [[check]] tables for self-check, [sandbox] (default: .nodwyn/contract.toml)."`

	Daemon string `help:"Submit the run to the daemon on this socket (also NODWYN_SOCKET)." placeholder:"SOCKET"`
	Detach bool   `help:"With --daemon: print the run's id and leave it going ('nodwyn attach ID')."`

	Writable      []string `name:"writable" placeholder:"DIR" help:"Let commands also write DIR (repeatable; ~/… or absolute)."`
	NoKernelFloor bool     `name:"no-kernel-floor" help:"Run commands without the kernel floor (Landlock); the run says so."`
	NoKeychain    bool     `name:"no-keychain" help:"Never ask the system keychain for the key ('nodwyn login --help')."`
}

// cliOnly are the flags of nodwyn run that do not change the run, and why:
// they say how this process shows it, or where it runs.
var cliOnly = map[string]string{
	"JSON":   "how this process shows the events (stdout)",
	"Quiet":  "how this process shows the run (stderr)",
	"Daemon": "where the run goes, not what it is",
	"Detach": "whether this process follows the run the daemon holds",
}

// spec is the run the flags describe, the task read from the arguments,
// --instruction-file or standard input ('-'): the one conversion from the
// command line to a launch.Spec.
func (r *RunCmd) spec(e *env) (launch.Spec, error) {
	task, err := r.instruction(e)
	if err != nil {
		return launch.Spec{}, err
	}
	return launch.Spec{
		Resume: r.Resume, Folder: r.Folder, Instruction: task, Profile: r.Profile,
		Sandbox: r.Sandbox, Yolo: r.Yolo, Unattended: r.Unattended, NoConfirm: r.NoConfirm,
		Timeout: launch.Duration(r.Timeout), RequestTimeout: launch.Duration(r.RequestTimeout), IdleTimeout: launch.Duration(r.IdleTimeout),
		MaxToolCalls: r.MaxToolCalls,
		Provider:     r.Provider, Model: r.Model, BaseURL: r.BaseURL, Script: r.Script, Reasoning: r.Reasoning, NoKeychain: r.NoKeychain,
		Trajectory: r.Trajectory, Contract: r.Contract, TrustProject: r.TrustProject,
		NoKernelFloor: r.NoKernelFloor, Writable: r.Writable,
		Judge: r.Judge.On, JudgeModel: r.Judge.Model,
	}, nil
}

// Help is shown before the flags of `nodwyn run --help`: the exit codes
// and where to read more; the rest is in README.md and docs/.
func (RunCmd) Help() string {
	return `Exit codes: 0 finished; 1 failed (a provider error, an error in Scheme) or no
progress; 2 usage or configuration (nothing ran); 3 --max-tool-calls or
--timeout ran out; 130 interrupted.

--yolo, --unattended and --sandbox are the run's alone: no config or Scheme
sets them. The kernel floor and [sandbox] mode: docs/sandbox.md and 'nodwyn
doctor'. The log: 'nodwyn log ID'; continue it with --resume ID.`
}

// JudgeFlag is --judge (the run's model judges) or --judge=MODEL.
type JudgeFlag struct {
	On    bool
	Model string
}

// Decode reads --judge and --judge=MODEL; --judge=false turns it off.
func (j *JudgeFlag) Decode(ctx *kong.DecodeContext) error {
	j.On, j.Model = true, ""
	if ctx.Scan.Peek().Type != kong.FlagValueToken {
		return nil
	}
	switch v := ctx.Scan.Pop().Value.(type) {
	case bool:
		j.On = v
	case string:
		switch strings.ToLower(v) {
		case "", "true", "yes", "1":
		case "false", "no", "0":
			j.On = false
		default:
			j.Model = v
		}
	}
	return nil
}

// IsBool lets --judge stand alone; a model is given as --judge=MODEL.
func (j *JudgeFlag) IsBool() bool { return true }

// instruction reads the task from the arguments, a file or standard input.
func (r *RunCmd) instruction(e *env) (string, error) {
	if r.InstructionFile != "" {
		if len(r.Instruction) > 0 {
			return "", usageErr("give the task either as arguments or with --instruction-file, not both")
		}
		b, err := os.ReadFile(r.InstructionFile)
		if err != nil {
			return "", usageErr("--instruction-file: %v", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if len(r.Instruction) == 1 && r.Instruction[0] == "-" {
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			return "", usageErr("reading the task from standard input: %v", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	return strings.TrimSpace(strings.Join(r.Instruction, " ")), nil
}

// Run runs the agent.
func (r *RunCmd) Run(e *env) error {
	sock, err := r.daemonSocket(e.getenv)
	if err != nil {
		return err
	}
	if sock != "" {
		return r.viaDaemon(e, sock)
	}
	if r.Detach {
		return usageErr("--detach leaves a run going in a daemon: give --daemon SOCKET (or NODWYN_SOCKET) too")
	}
	spec, err := r.spec(e)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	ctx, stopPipe := stdoutClosedContext(ctx, e.stdout) // SIGPIPE on stdout ends the run cleanly
	defer stopPipe()
	var rend *renderer
	defer func() {
		if rend != nil {
			rend.close()
		}
	}()
	h := e.hooks(launch.Hooks{TrustAsk: terminalTrustAsk(e), NobodyAnswers: !isTerminal(e.stdin)})
	h.Watch = func() launch.Watch {
		rend = newRenderer(e.stderr, r.Quiet)
		w := rend.watch()
		if r.JSON {
			w.Sinks = append(w.Sinks, jsonSink(e.stdout))
		}
		w.Confirm = terminalConfirm(e, rend)
		return w
	}
	out, err := launch.Run(ctx, spec, h)
	if err != nil {
		return err
	}
	if !r.JSON && out.Text != "" && out.Status == "finished" {
		fmt.Fprintln(e.stdout, termtext.Text(out.Text)) // the model's text: no raw control characters
	}
	_, dirs := launch.HomeDirs(e.getenv)
	return exitFor(out, dirs.Data)
}

// hooks are h with what every run of this process shares: its
// environment, its stderr, nodwyn's version.
func (e *env) hooks(h launch.Hooks) launch.Hooks {
	h.Getenv, h.Stderr, h.Version = e.getenv, e.stderr, Version
	return h
}

// watch is what a run at this terminal (or the console) is followed by:
// its events drawn, retries before the session shown, the status line
// told when the model sends data, the session's id and outcome shown.
func (rend *renderer) watch() launch.Watch {
	return launch.Watch{
		Sinks:     []func(store.Event){rend.event},
		Note:      func(text string) { rend.event(store.Event{Type: "note", Data: event.Map(event.Note{Text: text})}) },
		ModelData: rend.modelDataNow,
		Started:   func(s *session.Session, _ string) { rend.start(s.ID) },
		Finished:  rend.finish,
	}
}

// exitFor is the exit of a run that ended with out.
func exitFor(out session.Outcome, dataDir string) error {
	switch out.Status {
	case "finished":
		return nil
	case "budget", "deadline":
		return &exitError{code: ExitBudget}
	case "interrupted":
		return &exitError{code: ExitInterrupted}
	default:
		if sf := (*session.StorageFailed)(nil); errors.As(out.Err, &sf) { // the log cannot say it: the last line does
			return &exitError{code: ExitFailed, err: fmt.Errorf("%w\n(%s)", out.Err, sf.Advice("nodwyn run"))}
		}
		if errors.Is(out.Err, session.ErrStorage) {
			return &exitError{code: ExitFailed, err: fmt.Errorf("%w\n(free space or fix %s; the session is saved up to its last complete step: 'nodwyn sessions' lists it, and --resume ID continues it)", out.Err, dataDir)}
		}
		return &exitError{code: ExitFailed}
	}
}

// RunWatchdog is the first thing main calls (launch.RunWatchdog): in a
// process started as a session's watchdog it waits for nodwyn to be gone,
// stops what the session left, and returns true.
func RunWatchdog() bool { return launch.RunWatchdog() }

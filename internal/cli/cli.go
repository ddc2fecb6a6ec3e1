// Package cli is nodwyn's command line: the kong command structs, the one
// conversion of nodwyn run's flags to a launch.Spec (RunCmd.spec), the
// console, the daemon's client, and the terminal rendering of events and
// confirms. The run itself is internal/launch's.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/alecthomas/kong"
	"golang.org/x/term"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/termtext"
)

// Exit codes, documented in `nodwyn run --help`.
const (
	ExitOK          = 0                       // the run finished
	ExitFailed      = int(launch.Failed)      // the run failed, or stopped for lack of progress; `guard`: refused
	ExitUsage       = int(launch.Usage)       // a usage or configuration error
	ExitBudget      = int(launch.Budget)      // a budget or the deadline ran out; `guard`: would confirm
	ExitInterrupted = int(launch.Interrupted) // interrupted (SIGINT/SIGTERM)
)

// Version is set at build time with -ldflags "-X github.com/nodwyn/nodwyn/internal/cli.Version=…".
var Version = "dev"

// CLI is the whole command line.
type CLI struct {
	Run      RunCmd      `cmd:"" help:"Run the agent on a task in a folder."`
	Chat     ChatCmd     `cmd:"" help:"The console: an interactive session, one message after another (also 'nodwyn' alone at a terminal)."`
	Scheme   SchemeCmd   `cmd:"" help:"A Scheme REPL (or run a file) with nodwyn's procedures bound against a dry session with no model."`
	Guard    GuardCmd    `cmd:"" help:"Show the guard's decision on a command line or a path, without running anything."`
	Trust    TrustCmd    `cmd:"" help:"Trust a project's .nodwyn/ files (config.toml, init.scm) so runs load them; --list, --revoke."`
	Sessions SessionsCmd `cmd:"" help:"List saved sessions, newest first."`
	Log      LogCmd      `cmd:"" help:"Show a session's log, rendered for a person."`
	Undo     UndoCmd     `cmd:"" help:"List or restore the versions the file tools kept before they overwrote a file."`
	Journal  JournalCmd  `cmd:"" help:"Verify or show a session's signed journal of self-checks."`
	Daemon   DaemonCmd   `cmd:"" help:"Serve runs over JSON-RPC on a unix socket (docs/rpc.md)."`
	Attach   AttachCmd   `cmd:"" help:"Follow a run the daemon holds, and answer its confirms."`
	Login    LoginCmd    `cmd:"" help:"Store a provider's API key in the system keychain (read without echo, or from standard input)."`
	Logout   LogoutCmd   `cmd:"" help:"Delete a provider's API key from the system keychain."`
	Doctor   DoctorCmd   `cmd:"" help:"Print the setup a run would use: directories, config and its origins, provider, key found (never shown), git, shell, journal key, sandbox, MCP servers."`
	MCP      MCPCmd      `cmd:"" help:"List the MCP servers the configuration declares, started as a run starts them (mcp list)."`
	Version  VersionCmd  `cmd:"" help:"Print nodwyn's version."`
	Help     HelpCmd     `cmd:"" help:"Show the help of nodwyn or of a command ('nodwyn help run' is 'nodwyn run --help')."`

	VersionFlag kong.VersionFlag `name:"version" short:"v" help:"Print nodwyn's version and exit."`
}

// env is what commands read from the process: streams and the environment.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, a...)}
}

const description = `nodwyn is a coding agent whose loop is Scheme you can reprogram.

Its Go core runs the tools, judges every call with a guard, enforces budgets and
writes the logs; the loop, the prompts and the finish check are Scheme files
embedded in the binary, which a project overrides in .nodwyn/init.scm.

Try it with no key (the scripted model; see docs/script-provider.md):

    nodwyn run --script examples/demo/demo.script -C DIR "fix the bug"

With a real model:

    OPENAI_API_KEY=… nodwyn run --provider openai --model gpt-4.1 "task"

At a terminal, nodwyn with no command is the console ('nodwyn chat --help').`

// Main runs the command line and returns the process's exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	if len(args) == 0 && isTerminal(stdin) { // nodwyn alone at a terminal: the console
		args = []string{"chat"}
	}
	if len(args) > 0 && args[0] == "help" && oneCommand(args) != nil { // nodwyn help [COMMAND…]: COMMAND… --help
		args = append(append([]string(nil), args[1:]...), "--help")
	}
	// Most starts name their command and ask for no help: kong is then
	// given that command alone, not the whole CLI, whose reflection was
	// 3 of the 20 ms `nodwyn version` took. Help, and any error, go
	// through the whole CLI, so what they print is the same.
	if root := oneCommand(args); root != nil {
		if code, ok := parseAndRun(root, args, e, true); ok {
			return code
		}
	}
	var c CLI
	code, _ := parseAndRun(&c, args, e, false)
	return code
}

// parseAndRun parses args against root (a pointer to CLI, or to a struct of
// one of its commands) and runs the command. With quiet, a parse error
// prints nothing and ok is false: the caller parses again with the whole
// CLI for the message.
func parseAndRun(root any, args []string, e *env, quiet bool) (code int, ok bool) {
	exitCode := -1
	opts := []kong.Option{
		kong.Name("nodwyn"),
		kong.Description(description),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, Summary: true}),
		kong.Writers(e.stdout, e.stderr),
		kong.Exit(func(code int) { exitCode = code }),
		kong.Bind(e),
		kong.Help(helpWithExamples),
		kong.Vars{"version": "nodwyn " + Version},
		kong.ValueFormatter(flagHelp),
	}
	if !quiet {
		opts = append(opts, kong.UsageOnError())
	}
	parser, err := kong.New(root, opts...)
	if err != nil {
		if quiet {
			return 0, false
		}
		fmt.Fprintf(e.stderr, "nodwyn: %v\n", err)
		return ExitUsage, true
	}
	kctx, err := parser.Parse(args)
	if exitCode >= 0 { // --help
		return exitCode, true
	}
	if err != nil {
		if quiet {
			return 0, false
		}
		fmt.Fprintf(e.stderr, "nodwyn: %v\n", err)
		if pe, ok := err.(*kong.ParseError); ok && pe.Context != nil {
			fmt.Fprintf(e.stderr, "run '%s --help' for usage\n", strings.TrimSpace("nodwyn "+commandPath(pe.Context)))
		}
		return ExitUsage, true
	}
	err = kctx.Run(e)
	if err == nil {
		return ExitOK, true
	}
	// An error may quote what another party chose (a project's Scheme
	// error, a path, a server's answer): escaped, its lines kept.
	var xe *exitError
	if errors.As(err, &xe) {
		if xe.err != nil {
			fmt.Fprintf(e.stderr, "nodwyn: %s\n", termtext.Text(xe.err.Error()))
		}
		return xe.code, true
	}
	var le *launch.Error // a run that stopped before it started: its kind is nodwyn run's exit code
	if errors.As(err, &le) {
		if le.Err != nil {
			fmt.Fprintf(e.stderr, "nodwyn: %s\n", termtext.Text(le.Err.Error()))
		}
		return le.Kind.ExitCode(), true
	}
	fmt.Fprintf(e.stderr, "nodwyn: %s\n", termtext.Text(err.Error()))
	return ExitFailed, true
}

// oneCommand is a new struct holding only the command args[0] names, as a
// field of CLI's type and tags, or nil: no command named, or help asked
// for ("-h", "--help" anywhere, as kong reads them).
func oneCommand(args []string) any {
	if len(args) == 0 {
		return nil
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" || strings.HasPrefix(a, "--help=") {
			return nil
		}
	}
	t := reflect.TypeFor[CLI]()
	for i := range t.NumField() {
		f := t.Field(i)
		if strings.ToLower(f.Name) == args[0] && f.Tag.Get("name") == "" && f.Tag.Get("aliases") == "" {
			return reflect.New(reflect.StructOf([]reflect.StructField{f})).Interface()
		}
	}
	return nil
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func commandPath(k *kong.Context) string {
	if sel := k.Selected(); sel != nil {
		return sel.Path()
	}
	return ""
}

// HelpCmd is `nodwyn help [COMMAND…]`. Main turns it into COMMAND… --help
// before parsing; Run is for a parse that reaches it all the same.
type HelpCmd struct {
	Command []string `arg:"" optional:"" help:"The command, as in 'nodwyn help journal verify'."`
}

// Run shows the help.
func (c *HelpCmd) Run(e *env) error {
	var root CLI
	if code, _ := parseAndRun(&root, append(c.Command, "--help"), e, false); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// VersionCmd prints the version.
type VersionCmd struct{}

// Run prints the version.
func (VersionCmd) Run(e *env) error {
	fmt.Fprintf(e.stdout, "nodwyn %s\n", Version)
	return nil
}

// examples are the Examples section of each command's --help, by the
// command's path ("" is nodwyn's own): the one place they are kept, and a
// test holds every command to having some. Each is a command line and,
// after " # ", what it does.
var examples = map[string][]string{
	"": {
		`nodwyn run --script examples/demo/demo.script -C DIR "fix the bug"   # no key: the scripted model`,
		`OPENAI_API_KEY=… nodwyn run --provider openai --model gpt-4.1 "task"`,
		`nodwyn   # at a terminal: the console (nodwyn chat)`,
		`nodwyn help run   # the help of a command`,
	},
	"run": {
		`nodwyn run --provider openai --model gpt-4.1 "make the failing test pass"`,
		`nodwyn run -C ~/src/app --timeout 30m --max-tool-calls 200 "task"`,
		`nodwyn run --unattended --json "task" > events.jsonl   # nobody to ask: confirms declined`,
		`nodwyn run --sandbox container --instruction-file task.md   # a disposable machine`,
		`nodwyn run --resume last "now add a test for it"`,
		`nodwyn run --script examples/demo/demo.script -C DIR "fix the bug"   # no key, no network`,
	},
	"chat": {
		`nodwyn chat --provider anthropic --model claude-sonnet-4-5`,
		`nodwyn chat --resume last`,
		`printf 'fix the failing test\n/exit\n' | nodwyn chat   # one message a line`,
	},
	"scheme": {
		`nodwyn scheme   # a REPL with the init chain loaded`,
		`nodwyn scheme -C ~/src/app .nodwyn/init.scm   # run a file`,
		`nodwyn scheme --profile lean --run-tools`,
	},
	"guard": {
		`nodwyn guard -- 'cat ~/.ssh/id_rsa'`,
		`nodwyn guard --sandbox container -- 'echo /etc/hosts | xargs cat'`,
		`nodwyn guard --tool fs-write -- Makefile`,
		`nodwyn guard --json -- 'rm -rf build'`,
	},
	"trust": {
		`nodwyn trust -C ~/src/project`,
		`nodwyn trust --list`,
		`nodwyn trust --revoke -C ~/src/project`,
	},
	"sessions": {
		`nodwyn sessions   # the newest 20`,
		`nodwyn sessions -n 0   # all of them`,
		`nodwyn sessions --json | jq -r '.[].id'`,
	},
	"log": {
		`nodwyn log   # the last session's`,
		`nodwyn log 20261205-2302   # an id, or its start`,
		`nodwyn log last --json | jq -c 'select(.type == "tool.result")'`,
	},
	"undo": {
		`nodwyn undo   # the versions kept of files under this folder`,
		`nodwyn undo src/main.go`,
		`nodwyn undo --restore 12`,
	},
	"journal": {
		`nodwyn journal verify`,
		`nodwyn journal show last`,
	},
	"journal verify": {
		`nodwyn journal verify   # the last session's`,
		`nodwyn journal verify 20261205-2302`,
	},
	"journal show": {
		`nodwyn journal show`,
		`nodwyn journal show last --json`,
	},
	"daemon": {
		`nodwyn daemon &`,
		`nodwyn daemon --socket /tmp/n/daemon.sock &   # docs/rpc.md: a session typed into socat`,
		`NODWYN_SOCKET=/tmp/n/daemon.sock nodwyn run "task"   # a run the daemon holds`,
	},
	"attach": {
		`nodwyn attach 20261205-230244-57fea6`,
		`nodwyn attach --json ID > events.jsonl`,
	},
	"login": {
		`nodwyn login openai   # asks for the key, without echo`,
		`pass show openai-key | nodwyn login openai`,
	},
	"logout": {
		`nodwyn logout anthropic`,
	},
	"doctor": {
		`nodwyn doctor`,
		`nodwyn doctor -C ~/src/app   # as a run there would see it`,
	},
	"mcp": {
		`nodwyn mcp list   # every declared server: state, tools, time to ready`,
		`nodwyn mcp list -v -C ~/src/app   # with a trusted project's servers, and each tool`,
	},
	"mcp list": {
		`nodwyn mcp list`,
		`nodwyn mcp list -v   # each tool's name and one-line description`,
		`nodwyn mcp list -C ~/src/app   # with the project's servers, once it is trusted`,
	},
	"version": {
		`nodwyn version`,
		`nodwyn --version`,
	},
	"help": {
		`nodwyn help`,
		`nodwyn help journal verify`,
	},
}

// flagGroups put the flags of a long command's help under headings, by
// the flag's name: the same flag is under the same heading in every
// command. A flag not listed stays under "Flags:".
var flagGroups = func() map[string]*kong.Group {
	model := &kong.Group{Key: "model", Title: "The model:"}
	confirm := &kong.Group{Key: "confirm", Title: "Confirms, trust and sandbox:"}
	limits := &kong.Group{Key: "limits", Title: "Limits:"}
	output := &kong.Group{Key: "output", Title: "Output and sessions:"}
	m := map[string]*kong.Group{}
	for g, names := range map[*kong.Group][]string{
		model:   {"provider", "model", "base-url", "reasoning", "script", "no-keychain", "request-timeout", "idle-timeout"},
		confirm: {"yolo", "unattended", "no-confirm", "judge", "sandbox", "trust-project", "contract", "no-kernel-floor", "writable"},
		limits:  {"max-tool-calls", "timeout"},
		output:  {"json", "trajectory", "quiet", "resume", "daemon", "detach"},
	} {
		for _, n := range names {
			m[n] = g
		}
	}
	return m
}()

// helpWithExamples is kong's help with the flags of run and chat grouped
// (flagGroups) and the command's examples last.
func helpWithExamples(options kong.HelpOptions, ctx *kong.Context) error {
	node := ctx.Model.Node
	if sel := ctx.Selected(); sel != nil {
		node = sel
		for _, f := range ctx.Model.Flags { // --version is nodwyn's, not each command's
			if f.Name == "version" {
				f.Hidden = true
			}
		}
	}
	if len(node.Flags) > 8 { // a short list reads best as one
		for _, f := range node.Flags {
			if g, ok := flagGroups[f.Name]; ok && f.Group == nil {
				f.Group = g
			}
		}
	}
	if err := kong.DefaultHelpPrinter(options, ctx); err != nil {
		return err
	}
	ex := examples[commandPathOf(node)]
	if len(ex) == 0 || (ctx.Empty() && options.Summary) {
		return nil
	}
	var b strings.Builder
	b.WriteString("\nExamples:\n")
	for _, line := range ex {
		b.WriteString("  " + line + "\n")
	}
	_, err := io.WriteString(ctx.Stdout, b.String())
	return err
}

// flagHelp is a flag's help as kong shows it, but for --provider, whose
// list of providers is config.Providers, the one place they are named.
func flagHelp(v *kong.Value) string {
	if v.Name == "provider" && v.Flag != nil {
		return "Model provider: " + config.ProviderList() + "."
	}
	return kong.DefaultHelpValueFormatter(v)
}

// commandPathOf is a command's path below nodwyn ("journal verify"), "" for
// nodwyn itself.
func commandPathOf(n *kong.Node) string {
	var parts []string
	for ; n != nil && n.Parent != nil; n = n.Parent {
		parts = append([]string{n.Name}, parts...)
	}
	return strings.Join(parts, " ")
}

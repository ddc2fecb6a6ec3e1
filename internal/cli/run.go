package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/internal/termtext"
	"github.com/nodwyn/nodwyn/internal/trust"
)

// RunCmd is `nodwyn run`.
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

	absFolder string
	dataDir   string
	resumed   *store.SessionState // the saved state of the session --resume continues
}

// loadContract reads the run's contract: the --contract file, else the
// folder's .nodwyn/contract.toml if there is one.
func loadContract(flag, folder string) (*config.Contract, bool, error) {
	if flag != "" {
		p, err := filepath.Abs(flag)
		if err != nil {
			return nil, false, fmt.Errorf("--contract %s: %w", flag, err)
		}
		c, err := config.LoadContract(p, false)
		return c, true, err
	}
	c, err := config.LoadContract(config.ProjectContract(folder), true)
	return c, false, err
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

// runOptions is what resolveOptions decides.
type runOptions struct {
	sandbox, unattended, yolo, noConfirm bool
	judge                                bool   // --judge (implies unattended)
	judgeModel                           string // --judge=MODEL ("" = the run's model)
	profile                              string
}

// profileOrigin says who named the run's profile, for the error when there
// is no such profile: --profile, else NODWYN_PROFILE or the config file's
// line ("" when nobody did).
func profileOrigin(flag string, cfg *config.Config) string {
	if flag != "" {
		return "--profile"
	}
	return strings.TrimPrefix(cfg.Origin["loop.profile"], "env ")
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

// resolveOptions applies the rules between the mode flags.
func resolveOptions(r *RunCmd, cfg *config.Config, getenv func(string) string) (runOptions, error) {
	var o runOptions
	switch r.Sandbox {
	case "":
	case "container":
		o.sandbox = true
	default:
		return o, usageErr("--sandbox %q: the only value is 'container' (the machine is the run's disposable sandbox)", r.Sandbox)
	}
	if r.Judge.On {
		switch {
		case o.sandbox:
			return o, usageErr("--sandbox excludes --judge: a sandbox run is unattended and answers its own confirms (--yolo), so there is nothing for a judge to decide")
		case r.NoConfirm:
			return o, usageErr("--no-confirm excludes --judge: --no-confirm declines every confirm, so there is nothing for a judge to decide; leave out one of the two")
		case r.Yolo:
			return o, usageErr("--yolo excludes --judge: --yolo answers every ordinary confirm yes, which is what the judge would decide; leave out one of the two")
		}
		o.judge, o.judgeModel = true, r.Judge.Model
	}
	if o.sandbox && r.NoConfirm {
		return o, usageErr("--sandbox excludes --no-confirm: sandbox mode answers ordinary confirms yes (it implies --yolo); leave out one of the two")
	}
	o.unattended = r.Unattended || o.sandbox || o.judge
	o.yolo = r.Yolo || o.sandbox
	o.noConfirm = r.NoConfirm
	o.profile = r.Profile
	if o.profile == "" {
		o.profile = cfg.Loop.Profile // already layered with NODWYN_PROFILE
	}
	return o, nil
}

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

// folderAndSession is the run's folder (physical, absolute) and, with
// --resume, the session's id: a resumed session works in its own folder,
// and a -C that names another is an error.
func (r *RunCmd) folderAndSession(dirs config.Dirs) (folder, resumeID string, err error) {
	arg := r.Folder
	if r.Resume != "" {
		st, err := store.Open(dirs.Data)
		if err != nil {
			return "", "", err
		}
		if resumeID, err = st.ResolveID(r.Resume); err != nil {
			return "", "", usageErr("--resume %s: %v", r.Resume, err)
		}
		state, err := st.LoadState(resumeID)
		if err != nil {
			return "", "", usageErr("--resume %s: %v", r.Resume, err)
		}
		r.resumed = state
		if state.Folder == "" {
			return "", "", usageErr("--resume %s: session %s does not say which folder it worked in", r.Resume, resumeID)
		}
		if arg == "" {
			arg = state.Folder
		} else if physical(arg) != physical(state.Folder) {
			return "", "", usageErr("--resume %s: session %s works in %s, not %s; leave out -C (the session's folder is used) or give -C %s",
				r.Resume, resumeID, state.Folder, physical(arg), state.Folder)
		}
	}
	if arg == "" {
		arg = "."
	}
	folder = physical(arg)
	if fi, err := os.Stat(folder); err != nil || !fi.IsDir() {
		if resumeID != "" {
			return "", "", usageErr("--resume %s: the session's folder %s is not an existing folder", r.Resume, folder)
		}
		return "", "", usageErr("--folder %s: not an existing folder", folder)
	}
	return folder, resumeID, nil
}

// physical is p absolute, with its symbolic links resolved when it exists.
func physical(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
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
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	ctx, stopPipe := stdoutClosedContext(ctx, e.stdout) // SIGPIPE on stdout ends the run cleanly
	defer stopPipe()
	out, err := r.execute(e, runHooks{ctx: ctx, render: true, trustAsk: terminalTrustAsk(e), terminal: true})
	if err != nil {
		return err
	}
	if !r.JSON && out.Text != "" && out.Status == "finished" {
		fmt.Fprintln(e.stdout, termtext.Text(out.Text)) // the model's text: no raw control characters
	}
	return exitFor(out, r.dataDir)
}

// homeDirs is the home and nodwyn's directories as the environment getenv
// reads names them: the one reading a run, the daemon and its clients share.
func homeDirs(getenv func(string) string) (string, config.Dirs) {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return home, config.ResolveDirs(getenv, home)
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

// runHooks is what differs between `nodwyn run` at a terminal and a run
// the daemon holds; everything else — trust, configuration, the options'
// rules, the provider, the session — is the one path both take.
type runHooks struct {
	ctx      context.Context                                                           // the run stops when it ends (signals; run.cancel)
	render   bool                                                                      // progress on stderr
	terminal bool                                                                      // confirms are asked at the terminal of e
	confirm  func(context.Context, guard.Request, guard.Decision) (bool, bool, string) // else these answer them, a note with a decline (the daemon's clients)
	trustAsk func(*trust.Store, *trust.Project) bool                                   // asks about an untrusted project (nil: nobody can)
	sinks    []func(store.Event)                                                       // more places the events go
	started  func(*session.Session)                                                    // told once the session exists

	// nodwyn chat (chat.go): console runs the session in place of Run,
	// one turn for each message the person types; steer is Options.Steer.
	console func(context.Context, *session.Session, *renderer) session.Outcome
	steer   func() []string
}

// execute is nodwyn run from its flags to the outcome. An error is one
// that stopped the run before it started (usage, trust, the init chain).
func (r *RunCmd) execute(e *env, h runHooks) (session.Outcome, error) {
	var none session.Outcome
	home, dirs := homeDirs(e.getenv)
	r.dataDir = dirs.Data
	folder, resumeID, err := r.folderAndSession(dirs)
	if err != nil {
		return none, err
	}
	r.absFolder = folder
	// The project's files are judged before anything of theirs is read as
	// config or Scheme; only a flag of this run says they are unattended.
	pt, err := checkProjectTrust(dirs, folder, r.TrustProject,
		r.Unattended || r.Sandbox != "" || r.NoConfirm, h.trustAsk)
	if err != nil {
		return none, err
	}
	if pt.note != "" {
		fmt.Fprintln(e.stderr, "nodwyn: "+pt.note)
	}
	cfg, err := config.LoadWith(dirs, folder, pt.config, e.getenv)
	if err != nil {
		return none, &exitError{code: ExitUsage, err: err}
	}
	contract, contractGiven, err := loadContract(r.Contract, folder)
	if err != nil {
		return none, &exitError{code: ExitUsage, err: err}
	}
	o, err := resolveOptions(r, cfg, e.getenv)
	if err != nil {
		return none, err
	}
	if h.terminal && h.console == nil && !o.unattended && !isTerminal(e.stdin) {
		// No terminal to ask at: nobody answers confirms, and the run is
		// unattended as --unattended makes it (lean unless a profile is
		// named; ordinary confirms declined, or answered yes with --yolo;
		// security confirms declined), as the README says.
		o.unattended = true
	}
	if err := checkFolder(folder, home, dirs, o.sandbox); err != nil {
		return none, err
	}
	task, err := r.instruction(e)
	if err != nil {
		return none, err
	}
	if task == "" && r.Resume == "" && h.console == nil {
		return none, usageErr("no task given: write it as arguments, '-' to read standard input, or --instruction-file FILE")
	}

	pc, err := r.providerConfig(cfg, dirs, e.getenv)
	if err != nil {
		return none, err
	}
	rend := newRenderer(e.stderr, r.Quiet || !h.render)
	defer rend.close()
	var retryNote func(string) // set once the session exists, so retries reach its log
	pc.OnRetry = func(attempt int, wait time.Duration, err error) {
		text := fmt.Sprintf("provider: attempt %d failed (%v); retrying in %s", attempt, err, wait.Round(100*time.Millisecond))
		if retryNote != nil {
			retryNote(text)
		} else {
			rend.event(store.Event{Type: "note", Data: map[string]any{"text": text}})
		}
	}
	pc.OnEvent = rend.modelDataNow // the status line says how long the model has been silent
	model, err := provider.New(pc)
	if err != nil {
		return none, &exitError{code: ExitUsage, err: err}
	}
	st, err := store.Open(dirs.Data)
	if err != nil {
		return none, err
	}

	maxCalls := r.MaxToolCalls
	if maxCalls == 0 {
		maxCalls = cfg.Limits.MaxToolCalls
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = cfg.Limits.Timeout.Std()
	}

	var sinks []func(store.Event)
	sinks = append(sinks, rend.event)
	if r.JSON {
		sinks = append(sinks, jsonSink(e.stdout))
	}
	if r.Trajectory != "" {
		tw, err := newTrajectory(r.Trajectory, model.Name(), Version)
		if err != nil {
			return none, usageErr("--trajectory: %v", err)
		}
		defer tw.close()
		sinks = append(sinks, tw.event)
	}
	sinks = append(sinks, h.sinks...)

	opts := session.Options{
		Folder: folder, Instruction: task, Profile: o.profile, ProfileOrigin: profileOrigin(r.Profile, cfg),
		Sandbox: o.sandbox, Unattended: o.unattended, Yolo: o.yolo, NoConfirm: o.noConfirm,
		Judge: o.judge, JudgeModel: o.judgeModel,
		MaxToolCalls: maxCalls, Timeout: timeout,
		InitSteps: int64(cfg.Limits.InitSteps), InitMemory: int64(cfg.Limits.InitMemoryMB) << 20,
		Model: model, ModelName: pc.Model, Provider: pc.Provider, BaseURL: pc.BaseURL, API: pc.API,
		ContextWindow: cfg.Provider.ContextWindow, Prices: cfg.Provider.Prices,
		Dirs: dirs, Store: st, ResumeID: resumeID, ProjectScheme: pt.scheme,
		Secrets: secretsOf(pc.APIKey),
		Sinks:   sinks,
		Stdout:  termtext.Writer(e.stderr), // what Scheme displays, on the display: escaped, as the renderer's lines are

		NoKernelFloor: r.NoKernelFloor,
		Writable:      r.Writable,
		Steer:         h.steer,
	}
	// The seam, the notes, the contract and the MCP servers: as nodwyn mcp
	// list and doctor assemble them (mcp.go).
	configOptions(&opts, cfg, contract, contractGiven, pt.trusted)
	if !o.sandbox { // what the session starts is stopped even if nodwyn is killed (watchdog.go)
		opts.BeforeFirstProcess = func(mark string) { startWatchdog(mark, e.stderr) }
	}
	if !o.unattended && !o.noConfirm {
		if h.terminal {
			opts.ConfirmNote = terminalConfirm(e, rend)
		} else {
			opts.ConfirmNote = h.confirm
		}
	}
	ctx := h.ctx
	s, err := session.New(ctx, opts)
	if err != nil {
		switch { // the init chain loads under the run's deadline and signals
		case errors.Is(err, session.ErrDeadline):
			return none, &exitError{code: ExitBudget, err: err}
		case errors.Is(err, session.ErrInterrupted):
			return none, &exitError{code: ExitInterrupted, err: err}
		}
		return none, &exitError{code: ExitUsage, err: err}
	}
	defer s.Close()
	retryNote = s.Note
	if h.started != nil {
		h.started(s)
	}
	rend.start(s.ID)
	var out session.Outcome
	if h.console != nil {
		out = h.console(ctx, s, rend)
	} else {
		out = s.Run(ctx)
	}
	rend.finish(out)
	return out, nil
}

func secretsOf(keys ...string) []string {
	var out []string
	for _, k := range keys {
		if len(k) >= 8 {
			out = append(out, k)
		}
	}
	return out
}

// providerConfig layers flags over config over environment for the model.
func (r *RunCmd) providerConfig(cfg *config.Config, dirs config.Dirs, getenv func(string) string) (provider.Config, error) {
	cc := cfg.Provider.Compat
	pc := provider.Config{
		Provider: cfg.Provider.Name, Model: cfg.Provider.Model,
		BaseURL: cfg.Provider.BaseURL, Script: cfg.Provider.Script,
		RequestTimeout: cfg.Provider.RequestTimeout.Std(), IdleTimeout: cfg.Provider.IdleTimeout.Std(),
		API: cfg.Provider.API, Reasoning: cfg.Provider.Reasoning,
		Compat: provider.Compat{MaxTokensField: cc.MaxTokensField, SystemRole: cc.SystemRole, NoStreamOptions: cc.NoStreamOptions,
			NoParallelToolCalls: cc.NoParallelToolCalls, NoReasoningEffort: cc.NoReasoningEffort, NoEncryptedReasoning: cc.NoEncryptedReasoning},
	}
	r.resumedProvider(&pc)
	if r.Reasoning != "" {
		pc.Reasoning = r.Reasoning
	}
	if r.RequestTimeout < 0 || r.IdleTimeout < 0 {
		return pc, usageErr("--request-timeout and --idle-timeout take a positive duration such as 10m or 2m")
	}
	if r.RequestTimeout != 0 {
		pc.RequestTimeout = r.RequestTimeout
	}
	if r.IdleTimeout != 0 {
		pc.IdleTimeout = r.IdleTimeout
	}
	if r.Script != "" {
		pc.Provider, pc.Script = "script", r.Script
	}
	if r.Provider != "" {
		pc.Provider = r.Provider
	}
	if pc.Provider == "openai-responses" { // the Responses API, by its own name
		pc.Provider, pc.API = "openai", "responses"
	}
	switch pc.API {
	case "", "chat", "responses":
	default:
		return pc, usageErr("[provider] api = %q (%s): the APIs are \"chat\" (Chat Completions, the default) and \"responses\" (OpenAI's Responses API)", pc.API, cfg.Origin["provider.api"])
	}
	if pc.API != "" && pc.API != "chat" && pc.Provider != "openai" {
		return pc, usageErr("[provider] api = %q is for the openai provider, not %s", pc.API, pc.Provider)
	}
	switch pc.Reasoning {
	case "", "low", "medium", "high":
	default:
		return pc, usageErr("reasoning %q: give low, medium or high (--reasoning, or [provider] reasoning)", pc.Reasoning)
	}
	if r.Model != "" {
		pc.Model = r.Model
	}
	if r.BaseURL != "" {
		pc.BaseURL = r.BaseURL
	}
	// A repository must not choose where the person's key is sent, nor which
	// secret of the environment is sent as the key.
	project := config.ProjectConfig(r.absFolder)
	for _, key := range []string{"provider.base_url", "provider.key_env"} {
		if origin := cfg.Origin[key]; strings.HasPrefix(origin, project+":") && (pc.Provider == "openai" || pc.Provider == "anthropic") {
			return pc, usageErr("%s: key %s: a project's config may not set where the key goes or which variable holds it; set it in %s or with a flag",
				origin, key, filepath.Join(dirs.Config, "config.toml"))
		}
	}
	if pc.Provider == "" {
		return pc, usageErr("no model chosen: give --provider openai|anthropic (with --model), --script FILE for the scripted model, or set [provider] name in config.toml")
	}
	if pc.BaseURL == "" {
		switch pc.Provider {
		case "openai":
			pc.BaseURL = getenv("OPENAI_BASE_URL")
		case "anthropic":
			pc.BaseURL = getenv("ANTHROPIC_BASE_URL")
		}
	}
	if pc.Provider == "openai" || pc.Provider == "anthropic" {
		if pc.Model == "" { // before the key: a usage error never waits on the keychain
			return pc, usageErr("no model named for %s: give --model or set [provider] model in config.toml", pc.Provider)
		}
		// The environment, credentials.toml, $CREDENTIALS_DIRECTORY, then the
		// system keychain (login.go): asked only when those have none.
		found, err := findKey(dirs, pc.Provider, cfg.Provider.KeyEnv, getenv, r.NoKeychain)
		if err != nil {
			return pc, &exitError{code: ExitUsage, err: err}
		}
		if found.key == "" && pc.BaseURL == "" {
			return pc, noKeyError(dirs, pc.Provider, cfg.Provider.KeyEnv, found)
		}
		pc.APIKey = found.key
	}
	return pc, nil
}

// resumedProvider makes pc, read from the configuration, the provider and
// model of the session --resume continues, as its saved state names them.
// The flags of this run win (providerConfig applies them after), and a
// --provider or --script other than the session's takes none of its
// choices. config.toml and the environment do not: they were there when the
// session started, and it may have been started with flags that chose
// otherwise (issue 29 item 3).
func (r *RunCmd) resumedProvider(pc *provider.Config) {
	s := r.resumed
	if s == nil || s.Provider == "" {
		return
	}
	flag := r.Provider
	if r.Script != "" {
		flag = "script"
	}
	if flag == "openai-responses" {
		flag = "openai"
	}
	if flag != "" && flag != s.Provider {
		return
	}
	if s.Provider == "script" && pc.Script == "" && r.Script == "" {
		return // the reply file is not saved: --script names it again
	}
	if pc.Provider != s.Provider { // what config.toml says of its own provider
		pc.BaseURL, pc.API = "", ""
	}
	pc.Provider = s.Provider
	if s.Model != "" {
		pc.Model = s.Model
	}
	// The saved endpoint has no user:password (store.EndpointWithoutSecret):
	// the same endpoint given again with them (flag, environment, config)
	// is kept.
	if s.BaseURL != "" && store.EndpointWithoutSecret(pc.BaseURL) != s.BaseURL {
		pc.BaseURL = s.BaseURL
	}
	if s.API != "" {
		pc.API = s.API
	}
}

// checkFolder refuses folders a run may not work in: outside sandbox mode /
// and the home directory (rootRefusal); in every mode nodwyn's own
// directories and the credential directories (sandboxFolder).
func checkFolder(folder, home string, dirs config.Dirs, sandbox bool) error {
	for _, d := range protectedFolders(home, dirs) {
		if d == "" {
			continue
		}
		if within(folder, d) {
			return usageErr("--folder %s is inside %s, a directory nodwyn keeps off limits (credentials or nodwyn's own files); choose the project's folder", folder, d)
		}
	}
	if sandbox {
		return nil
	}
	if folder == "/" || (home != "" && folder == filepath.Clean(home)) {
		return usageErr("--folder %s: a run outside sandbox mode may not work in / or the home directory; choose a project folder (or, on a disposable machine, add --sandbox container)", folder)
	}
	return nil
}

func protectedFolders(home string, dirs config.Dirs) []string {
	out := []string{dirs.Config, dirs.Data, os.Getenv("CREDENTIALS_DIRECTORY")}
	if home != "" {
		for _, d := range []string{".ssh", ".aws", ".gnupg", ".config/gcloud", ".azure", ".kube"} {
			out = append(out, filepath.Join(home, d))
		}
	}
	return out
}

func within(p, dir string) bool {
	dir = filepath.Clean(dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

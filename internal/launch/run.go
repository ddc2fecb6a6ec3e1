package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/internal/termtext"
	"github.com/nodwyn/nodwyn/internal/trust"
)

// LoadContract reads the run's contract: the --contract file, else the
// folder's .nodwyn/contract.toml if there is one.
func LoadContract(flag, folder string) (*config.Contract, bool, error) {
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

// resolveOptions applies the rules between the mode flags.
func resolveOptions(r *Spec, cfg *config.Config) (runOptions, error) {
	var o runOptions
	switch r.Sandbox {
	case "":
	case "container":
		o.sandbox = true
	default:
		return o, usageErr("--sandbox %q: the only value is 'container' (the machine is the run's disposable sandbox)", r.Sandbox)
	}
	if r.Judge || r.JudgeModel != "" {
		switch {
		case o.sandbox:
			return o, usageErr("--sandbox excludes --judge: a sandbox run is unattended and answers its own confirms (--yolo), so there is nothing for a judge to decide")
		case r.NoConfirm:
			return o, usageErr("--no-confirm excludes --judge: --no-confirm declines every confirm, so there is nothing for a judge to decide; leave out one of the two")
		case r.Yolo:
			return o, usageErr("--yolo excludes --judge: --yolo answers every ordinary confirm yes, which is what the judge would decide; leave out one of the two")
		}
		o.judge, o.judgeModel = true, r.JudgeModel
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

// folderAndSession is the run's folder (physical, absolute) and, with
// --resume, the session's id: a resumed session works in its own folder,
// and a -C that names another is an error.
func (r *runner) folderAndSession(dirs config.Dirs) (folder, resumeID string, err error) {
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
		} else if Physical(arg) != Physical(state.Folder) {
			return "", "", usageErr("--resume %s: session %s works in %s, not %s; leave out -C (the session's folder is used) or give -C %s",
				r.Resume, resumeID, state.Folder, Physical(arg), state.Folder)
		}
	}
	if arg == "" {
		arg = "."
	}
	folder = Physical(arg)
	if fi, err := os.Stat(folder); err != nil || !fi.IsDir() {
		if resumeID != "" {
			return "", "", usageErr("--resume %s: the session's folder %s is not an existing folder", r.Resume, folder)
		}
		return "", "", usageErr("--folder %s: not an existing folder", folder)
	}
	return folder, resumeID, nil
}

// Physical is p absolute, with its symbolic links resolved when it exists.
func Physical(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// HomeDirs is the home and nodwyn's directories as the environment getenv
// reads names them: the one reading a run, the daemon and its clients share.
func HomeDirs(getenv func(string) string) (string, config.Dirs) {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return home, config.ResolveDirs(getenv, home)
}

// Hooks are what differs between the runs' callers — nodwyn run at a
// terminal, the console (nodwyn chat), a run the daemon holds; everything
// else is the one path Run takes for all of them.
type Hooks struct {
	Getenv   func(string) string                     // the environment the run reads (keys, dirs, NODWYN_PROFILE)
	Stderr   io.Writer                               // notes before the run, the watchdog's warnings, what Scheme displays (escaped)
	Version  string                                  // nodwyn's version, the trajectory's agent.version
	TrustAsk func(*trust.Store, *trust.Project) bool // asks about an untrusted project (nil: nobody can)
	// NobodyAnswers: no terminal to ask at, so the run is unattended as
	// --unattended makes it (nodwyn run with standard input not a
	// terminal).
	NobodyAnswers bool
	// Console runs the session in place of its Run (nodwyn chat: one turn
	// for each message the person types; a task is not needed); Steer is
	// session.Options.Steer.
	Console func(context.Context, *session.Session) session.Outcome
	Steer   func() []string
	// Watch is called once the run's checks have passed, before the model
	// is made (a terminal's status line starts there, not during the trust
	// question); what it returns follows the run. Nil: nothing does.
	Watch func() Watch
}

// Watch is what follows one run: the caller's renderer and sinks, its
// confirms, the console.
type Watch struct {
	Sinks    []func(store.Event) // every event, in this order, before the trajectory's
	Recorder func(store.Event)   // every event, after the trajectory's (the daemon's record, which tells its clients the run ended)
	// Note shows a provider's retry before the session exists (after, it
	// is a note event).
	Note      func(text string)
	ModelData func()                                                                    // the model sent data (provider.Config.OnEvent)
	Confirm   func(context.Context, guard.Request, guard.Decision) (bool, bool, string) // answers confirms (nil: nobody does)
	Started   func(s *session.Session, folder string)                                   // told once the session exists
	Finished  func(session.Outcome)                                                     // told the outcome, before the session closes
}

// Run is the run spec describes, from its parameters to its outcome: the
// session's folder, the project's trust, the configuration, the rules
// between the mode flags, the folder's checks, the provider, the contract,
// the session. The run stops when ctx ends (signals, run.cancel). An error
// is one that stopped the run before it started (usage, trust, the init
// chain): an *Error says its kind.
func Run(ctx context.Context, spec Spec, h Hooks) (session.Outcome, error) {
	var none session.Outcome
	r := &runner{Spec: spec}
	getenv := h.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	stderr := h.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	home, dirs := HomeDirs(getenv)
	folder, resumeID, err := r.folderAndSession(dirs)
	if err != nil {
		return none, err
	}
	r.absFolder = folder
	// The project's files are judged before anything of theirs is read as
	// config or Scheme; only a flag of this run says they are unattended.
	pt, err := CheckProjectTrust(dirs, folder, r.TrustProject,
		r.Unattended || r.Sandbox != "" || r.NoConfirm, h.TrustAsk)
	if err != nil {
		return none, err
	}
	if pt.Note != "" {
		fmt.Fprintln(stderr, "nodwyn: "+pt.Note)
	}
	cfg, err := config.LoadWith(dirs, folder, pt.Config, getenv)
	if err != nil {
		return none, &Error{Kind: Usage, Err: err}
	}
	contract, contractGiven, err := LoadContract(r.Contract, folder)
	if err != nil {
		return none, &Error{Kind: Usage, Err: err}
	}
	o, err := resolveOptions(&r.Spec, cfg)
	if err != nil {
		return none, err
	}
	if h.NobodyAnswers && !o.unattended {
		// No terminal to ask at: nobody answers confirms, and the run is
		// unattended as --unattended makes it (lean unless a profile is
		// named; ordinary confirms declined, or answered yes with --yolo;
		// security confirms declined), as the README says.
		o.unattended = true
	}
	if err := CheckFolder(folder, home, dirs, o.sandbox); err != nil {
		return none, err
	}
	if r.Instruction == "" && r.Resume == "" && h.Console == nil {
		return none, usageErr("no task given: write it as arguments, '-' to read standard input, or --instruction-file FILE")
	}

	pc, err := r.providerConfig(cfg, dirs, getenv)
	if err != nil {
		return none, err
	}
	var w Watch
	if h.Watch != nil {
		w = h.Watch()
	}
	var retryNote func(string) // set once the session exists, so retries reach its log
	pc.OnRetry = func(attempt int, wait time.Duration, err error) {
		text := fmt.Sprintf("provider: attempt %d failed (%v); retrying in %s", attempt, err, wait.Round(100*time.Millisecond))
		if retryNote != nil {
			retryNote(text)
		} else if w.Note != nil {
			w.Note(text)
		}
	}
	pc.OnEvent = w.ModelData // the status line says how long the model has been silent
	model, err := provider.New(pc)
	if err != nil {
		return none, &Error{Kind: Usage, Err: err}
	}
	st, err := store.Open(dirs.Data)
	if err != nil {
		return none, err
	}

	maxCalls := r.MaxToolCalls
	if maxCalls == 0 {
		maxCalls = cfg.Limits.MaxToolCalls
	}
	timeout := r.Timeout.Std()
	if timeout == 0 {
		timeout = cfg.Limits.Timeout.Std()
	}

	sinks := append([]func(store.Event){}, w.Sinks...)
	if r.Trajectory != "" {
		tw, err := NewTrajectory(r.Trajectory, model.Name(), h.Version)
		if err != nil {
			return none, usageErr("--trajectory: %v", err)
		}
		defer tw.Close()
		sinks = append(sinks, tw.Event)
	}
	if w.Recorder != nil {
		sinks = append(sinks, w.Recorder)
	}

	opts := session.Options{
		Folder: folder, Instruction: r.Instruction, Profile: o.profile, ProfileOrigin: profileOrigin(r.Profile, cfg),
		Sandbox: o.sandbox, Unattended: o.unattended, Yolo: o.yolo, NoConfirm: o.noConfirm,
		Judge: o.judge, JudgeModel: o.judgeModel,
		MaxToolCalls: maxCalls, Timeout: timeout,
		InitSteps: int64(cfg.Limits.InitSteps), InitMemory: int64(cfg.Limits.InitMemoryMB) << 20,
		Model: model, ModelName: pc.Model, Provider: pc.Provider, BaseURL: pc.BaseURL, API: pc.API,
		ContextWindow: cfg.Provider.ContextWindow, Prices: cfg.Provider.Prices,
		Dirs: dirs, Store: st, ResumeID: resumeID, ProjectScheme: pt.Scheme,
		Secrets: secretsOf(pc.APIKey), Getenv: getenv,
		Sinks:  sinks,
		Stdout: termtext.Writer(stderr), // what Scheme displays, on the display: escaped, as the renderer's lines are

		NoKernelFloor: r.NoKernelFloor,
		Writable:      r.Writable,
		Steer:         h.Steer,
	}
	// The seam, the notes, the contract and the MCP servers: as nodwyn mcp
	// list and doctor assemble them (ConfigOptions).
	ConfigOptions(&opts, cfg, contract, contractGiven, pt.Trusted)
	if !o.sandbox { // what the session starts is stopped even if nodwyn is killed (watchdog.go)
		opts.BeforeFirstProcess = func(mark string) { startWatchdog(mark, stderr) }
	}
	if !o.unattended && !o.noConfirm {
		opts.ConfirmNote = w.Confirm
	}
	s, err := session.New(ctx, opts)
	if err != nil {
		switch { // the init chain loads under the run's deadline and signals
		case errors.Is(err, session.ErrDeadline):
			return none, &Error{Kind: Budget, Err: err}
		case errors.Is(err, session.ErrInterrupted):
			return none, &Error{Kind: Interrupted, Err: err}
		}
		return none, &Error{Kind: Usage, Err: err}
	}
	defer s.Close()
	retryNote = s.Note
	if w.Started != nil {
		w.Started(s, folder)
	}
	var out session.Outcome
	if h.Console != nil {
		out = h.Console(ctx, s)
	} else {
		out = s.Run(ctx)
	}
	if w.Finished != nil {
		w.Finished(out)
	}
	return out, nil
}

// runner is one Run's state.
type runner struct {
	Spec
	absFolder string              // the run's folder, physical
	resumed   *store.SessionState // the saved state of the session Resume continues
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
func (r *runner) providerConfig(cfg *config.Config, dirs config.Dirs, getenv func(string) string) (provider.Config, error) {
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
		pc.RequestTimeout = r.RequestTimeout.Std()
	}
	if r.IdleTimeout != 0 {
		pc.IdleTimeout = r.IdleTimeout.Std()
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
		found, err := FindKey(dirs, pc.Provider, cfg.Provider.KeyEnv, getenv, r.NoKeychain)
		if err != nil {
			return pc, &Error{Kind: Usage, Err: err}
		}
		if found.Key == "" && pc.BaseURL == "" {
			return pc, NoKeyError(dirs, pc.Provider, cfg.Provider.KeyEnv, found)
		}
		pc.APIKey = found.Key
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
func (r *runner) resumedProvider(pc *provider.Config) {
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

// CheckFolder refuses folders a run may not work in: outside sandbox mode /
// and the home directory (rootRefusal); in every mode nodwyn's own
// directories and the credential directories (sandboxFolder).
func CheckFolder(folder, home string, dirs config.Dirs, sandbox bool) error {
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

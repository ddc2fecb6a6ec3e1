// Package session is one run of nodwyn: its options and state, its scratch
// directory, its budgets, its event stream, and the bridge that binds the Go
// core into the session's Scheme environment.
//
// The Scheme side (init.scm, runtime/, prompts/, then the person's and the
// project's init.scm) owns the shape of the loop; everything here is what must
// be trusted: the guard is asked before every tool call (callTool is the one
// seam), budgets and the deadline are enforced by cancelling the context the
// Scheme code runs under, and nothing Scheme can call turns on yolo,
// unattended or sandbox mode.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	nodwyn "github.com/nodwyn/nodwyn"
	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/egress"
	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/journal"
	"github.com/nodwyn/nodwyn/internal/prim"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/sandbox"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/scheme"
)

// Options are a run's options, resolved by the CLI.
type Options struct {
	Folder      string // absolute
	Instruction string
	Profile     string // "" = the Scheme default (lean when unattended, else full)
	// ProfileOrigin says who chose Profile, for the error when there is no
	// such profile: "--profile", "NODWYN_PROFILE", or the config file and
	// line of [loop] profile.
	ProfileOrigin string

	Sandbox    bool // sandbox mode (a property of the run; implies Unattended and Yolo)
	Unattended bool
	Yolo       bool
	NoConfirm  bool
	// Judge sends an unattended run's ordinary confirms to a judge model
	// (runtime/judge.scm decides what it sees, prompts/judge.scm what it
	// is told); security confirms are never judged. JudgeModel is the
	// model's name on the run's provider ("" = the run's model).
	Judge      bool
	JudgeModel string

	MaxToolCalls int           // 0 = no limit
	Timeout      time.Duration // wall clock for the run; 0 = none

	Model     provider.Model
	ModelName string // passed in requests
	Provider  string // for the saved state
	BaseURL   string // for the saved state: where --resume sends the requests again
	API       string // for the saved state: the openai provider's API ("responses" or "")
	MaxTokens int
	// ContextWindow is [provider] context_window (0: the table of
	// well-known models, else DefaultContextWindow); Prices are
	// [provider.prices] (zero: the table's, else no cost is said).
	ContextWindow int
	Prices        config.Prices

	Dirs     config.Dirs
	Store    *store.Store
	ResumeID string // continue this session

	// Getenv is the environment the person started nodwyn with, the
	// secret-looking variables it hid from its own included (cli.Getenv):
	// the credential catalogue's $NAME entries read it. nil: os.Getenv.
	Getenv  func(string) string
	Secrets []string // exact secret values (API keys): redacted and scanned for

	// Sinks receive every event as it is written to the log.
	Sinks []func(store.Event)
	// Confirm asks a person about a confirm; nil declines. always=true makes
	// the answer a standing approval for the session.
	Confirm func(ctx context.Context, req guard.Request, d guard.Decision) (yes, always bool)
	// ConfirmNote, when set, is asked instead of Confirm, and a note given
	// with a decline goes to the model with it ("no, use the test database
	// instead"): the daemon's clients answer this way.
	ConfirmNote func(ctx context.Context, req guard.Request, d guard.Decision) (yes, always bool, note string)
	// Steer, when set, is asked before each request to the model for the
	// messages the person typed while the model worked (nodwyn chat); each
	// is added to the conversation as a user message, with a note
	// (console.go).
	Steer func() []string
	// BeforeFirstProcess, when set, is called once with ProcessMark()
	// before the first program the session's tools start: nodwyn run
	// starts its watchdog there (a run that starts none needs none, and
	// its start-up does not wait on one).
	BeforeFirstProcess func(mark string)
	// Stdout receives what Scheme code displays (default io.Discard).
	Stdout io.Writer
	// Dry binds the procedures without a model (for `nodwyn scheme`). A
	// call the guard allows then runs only when the person confirms it
	// (Confirm), or with RunTools.
	Dry      bool
	RunTools bool
	// UserInit is the person's init.scm; "" = <Dirs.Config>/init.scm.
	UserInit string
	// ProjectScheme holds the project's Scheme files the run may load, by
	// their path under <Folder>/.nodwyn ("init.scm", "lib/util.scm"), as
	// trust read and judged them (internal/trust). The session never reads
	// a project file itself: nil loads no project Scheme at all, and
	// (load …) of a .nodwyn file not in the map is an error.
	ProjectScheme map[string][]byte
	// InitSteps and InitMemory bound loading the init chain and the calls
	// New makes into Scheme: procedure calls per file, and bytes the heap
	// may grow by; 0 = DefaultInitSteps, DefaultInitMemory. The run's
	// Timeout counts from the start of New, so loading counts against it.
	InitSteps  int64
	InitMemory int64

	// The execution seam (internal/sandbox, seam.go): [sandbox] of the
	// configuration (ConfigSeam, its mode from ConfigSeamFrom, "file:line"),
	// the profile's sandbox setting, then the contract's [sandbox]. The
	// contract is .nodwyn/contract.toml or the file --contract named
	// (ContractGiven; only that one may undo a working copy). Its first
	// check is what self-check runs.
	ConfigSeam config.Seam
	// ConfigSeamAllowFrom is where [sandbox] allow_hosts was set
	// ("file:line"), for what the proxy says; ConfigSeamNetworkFrom where
	// [sandbox] network was.
	ConfigSeamAllowFrom, ConfigSeamNetworkFrom, ConfigSeamNamespacesFrom string
	// Writable are directories commands may write for this run besides
	// the defaults and [sandbox] writable (nodwyn run --writable; ~/… or
	// absolute). Sandbox mode confines no writes.
	Writable       []string
	ConfigSeamFrom string
	Contract       *config.Contract
	ContractGiven  bool
	// ContractTrusted: the folder's .nodwyn/contract.toml is the person's,
	// because they trusted the project's files (internal/trust). With
	// ContractGiven, what (contract-trusted?) says.
	ContractTrusted bool
	ConfigNotes     []string // what the configuration did not take (config.Config.Notes), logged at run.start

	// NoKernelFloor turns the kernel floor off for this run (nodwyn run
	// --no-kernel-floor); nothing else can. Without it the session makes
	// the floor from the guard's denylist, and where the kernel cannot
	// hold it the run says why (FloorStatus).
	NoKernelFloor bool

	// MCP are the run's MCP servers, as the configuration declared them
	// (nil: none); mcp.go starts them at New and stops them at Close.
	MCP []MCPServer
	// probe: ProbeMCP's session, whose servers start whatever the profile
	// says.
	probe bool
}

// Outcome is how a run ended.
type Outcome struct {
	Status string // "finished", "no-progress", "budget", "deadline", "interrupted", "failed"
	Text   string // the model's last words, or what stopped the run
	Err    error
}

// The bounds of loading the init chain ([limits] init_steps and
// init_memory_mb in config.toml, whose defaults these are): an init.scm
// that loops or keeps building data stops with an error that names the
// file, not a hung run.
const (
	DefaultInitSteps  = config.DefaultInitSteps          // procedure calls per file: a few seconds
	DefaultInitMemory = config.DefaultInitMemoryMB << 20 // bytes
)

// Errors that end a run; context.Cause of the run's context is one of them.
var (
	ErrToolBudget  = errors.New("the tool-call budget is used up")
	ErrDeadline    = errors.New("the run's time limit was reached")
	ErrInterrupted = errors.New("interrupted")
	// ErrStorage ends a run whose log or state cannot be written.
	ErrStorage = errors.New("the session's log or state cannot be written")
)

// Session is one run.
type Session struct {
	opts    Options
	ID      string
	scratch string
	gitRepo bool

	interp *scheme.Interp
	guard  *guard.Guard
	tools  *prim.Tools
	log    *store.Log
	state  *store.SessionState
	appr   *guard.Approvals

	messages  []provider.Message
	toolCalls int
	usage     provider.Usage
	started   time.Time

	cancel          context.CancelCauseFunc
	outcome         *Outcome
	turnStart       map[string]string // git status at begin-turn!
	turnChanged     map[string]bool   // paths the file tools wrote this turn
	pendingCheckers []guard.Checker
	schemeTools     *schemeToolbox // define-tool's (schemetool.go)
	lastSystem      string
	toolTime        time.Duration // time spent inside the tools (for the overhead benchmark)
	lock            *store.SessionLock
	storeErr        error              // the first failed write of the log or state
	deadline        time.Time          // started + Timeout; zero = none
	profile         string             // (current-profile-name), asked once New has loaded the init chain
	leaveRunning    bool               // the profile's leave-running setting, asked then too
	checking        int                // > 0 while a project checker runs
	requests        int                // model requests sent (the judge's and summaries' too)
	lastPrompt      int                // the last reply's input tokens, as reported (0: none yet, or compacted since)
	lastOutput      int                // and its output tokens
	msgsAtRequest   int                // len(messages) when the last request was sent
	instructions    *[]instructionFile // (instruction-files), read at the first call
	instructionsMax int64
	savedMessages   int // len(messages) at the last saveState
	stateW          *store.StateWriter
	msgJSON         provider.MessageJSON // the messages' JSON, for saveState
	scratchTouched  time.Time

	seam        sandbox.Mode // the execution seam's mode, resolved in loadChain
	checkout    string       // what a working copy copies
	seamNotes   []string     // settings not taken, logged at run.start
	caps        scheme.Value // (sandbox-caps), made once
	floor       *sandbox.Floor
	emitMu      sync.Mutex         // emit, one at a time
	ns          *sandbox.SessionNS // the session's namespaces (nil: none, nsWhy says why)
	nsWhy       string
	egress      *egress.Proxy // the session's proxy (nil: none; netWhy says why where it matters)
	netWhy      string
	egressRules []egress.Rule
	asking      asking // one question to the person at a time (asking.go)
	writesLine  string
	protect     *sandbox.Protected // .git/config, .git/hooks, .nodwyn/ (not in sandbox mode)
	floorLine   string             // "on (…)" or "off (why)", said at run.start
	journal     *journal.Journal

	pendingCalls []provider.ToolCall // the last reply's calls not yet run: their ids go on the tool events
	emitted      bool                // an event has gone out (the first carries the schema version)

	console consoleState // a console session's (nodwyn chat; console.go)

	mcp *mcpState // the run's MCP servers (mcp.go); nil: none declared
}

// New makes a session: the scratch directory, the guard, the tools, the log
// and the Scheme environment with the init chain loaded. An error in a
// project's init.scm is returned here, before any model call.
func New(ctx context.Context, opts Options) (_ *Session, err error) {
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Sandbox {
		opts.Unattended, opts.Yolo = true, true
	}
	s := &Session{opts: opts, started: time.Now(), turnChanged: map[string]bool{}, seamNotes: opts.ConfigNotes, mcp: newMCPState(opts)}
	if opts.ResumeID != "" {
		id, err := opts.Store.ResolveID(opts.ResumeID) // "last", an id or its start
		if err != nil {
			return nil, fmt.Errorf("--resume %s: %w", opts.ResumeID, err)
		}
		opts.ResumeID = id
		s.opts.ResumeID = id
	}
	if opts.ResumeID != "" {
		st, err := opts.Store.LoadState(opts.ResumeID)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(st.Messages, &s.messages); err != nil && len(st.Messages) > 0 {
			return nil, fmt.Errorf("resume %s: the saved conversation cannot be read: %w", st.ID, err)
		}
		s.ID = st.ID
		s.state = st
		s.toolCalls = st.ToolCalls
		// The session's usage goes on from what it had used.
		cached := st.Usage["cached_tokens"]
		s.usage = provider.Usage{InputTokens: max(0, st.Usage["input_tokens"]-cached), CacheReadTokens: cached,
			CacheWriteTokens: st.Usage["cache_write_tokens"], OutputTokens: st.Usage["output_tokens"]}
	} else if opts.Dry {
		s.ID = "dry"
	} else {
		s.ID = store.NewSessionID()
	}
	if !opts.Dry && opts.Store != nil {
		lk, err := opts.Store.LockSession(s.ID)
		if err != nil {
			return nil, err
		}
		s.lock = lk
	}
	if !opts.Dry {
		if _, err := store.SweepScratch(opts.Dirs.Data, time.Now()); err != nil {
			fmt.Fprintf(os.Stderr, "nodwyn: sweeping old scratch directories: %v\n", err)
		}
	}
	scratch, err := store.MakeScratch(s.ID)
	if err != nil {
		return nil, fmt.Errorf("making the scratch directory: %w", err)
	}
	s.scratch = scratch
	home, _ := os.UserHomeDir()
	gopts := guard.Options{
		Folder:         opts.Folder,
		Scratch:        scratch,
		Home:           home,
		ConfigDir:      opts.Dirs.Config,
		DataDir:        opts.Dirs.Data,
		CredentialsDir: os.Getenv("CREDENTIALS_DIRECTORY"),
		Deny:           opts.ConfigSeam.Deny,
		Getenv:         opts.Getenv,
	}
	// The kernel floor's trial ruleset is built while the init chain
	// loads (on the other processor, where there is one): it needs only
	// the paths above, and nothing runs a command before it is joined.
	floorc := make(chan madeFloor, 1)
	fopts := gopts // a copy: gopts gets the rest of the guard's options meanwhile
	go func() {
		wc := writeConfinement(opts)
		// The session's namespaces: their init starts (a process of its
		// own, some milliseconds) while the floor's trial runs and the
		// init chain loads.
		type madeNS struct {
			ns  *sandbox.SessionNS
			err error
		}
		nsc := make(chan madeNS, 1)
		if wc != nil && wc.namespaces && !opts.NoKernelFloor {
			go func() {
				ns, err := sandbox.NewSessionNS(wc.network, localAddrs(opts.ConfigSeam.AllowHosts)...) // egress_local.go
				nsc <- madeNS{ns, err}
			}()
		} else {
			nsc <- madeNS{}
		}
		f, line, d := makeFloor(fopts, opts.NoKernelFloor, wc)
		mf := madeFloor{floor: f, line: line, deny: d} // d is the guard's too (gopts.Denylist)
		made := <-nsc
		if f != nil && opts.Sandbox && opts.ConfigSeam.Namespaces != "off" {
			// Sandbox mode (issue 27 item 7): the machine is the task's,
			// the home and /tmp above it included; the catalogue and
			// nodwyn's own directories are hidden from commands by a
			// mount namespace (empty, read-only), where root can make one,
			// and the floor grants the rest.
			if ns, err := sandbox.NewSandboxNS(d.Dirs, []string{fopts.Scratch}); err != nil {
				mf.nsWhy = err.Error()
			} else {
				f.SetNamespaces(ns)
				f.GrantAll()
				mf.ns = ns
				mf.line += "; the catalogue is hidden from commands by a mount namespace (empty, read-only), and they write anywhere else"
			}
		}
		if f == nil || wc == nil {
			made.ns.Close() // no floor, or sandbox mode: none of these
		} else {
			mf.writes = wc.writesLine
			if !wc.namespaces {
				mf.nsWhy = "[sandbox] namespaces = \"off\" in " + opts.ConfigSeamNamespacesFrom
			} else if ns, err := made.ns, made.err; err != nil {
				mf.nsWhy = err.Error()
			} else {
				f.SetNamespaces(ns)
				mf.ns = ns
				if ns.Network() {
					mf.egress, mf.egressErr = s.startEgress(ctx, opts, ns, f)
				}
			}
			if mf.ns == nil && wc.network { // Landlock's TCP rules instead (egress.go)
				mf.egress, mf.egressErr = s.startEgress(ctx, opts, nil, f)
			}
		}
		if f != nil && (mf.ns == nil || opts.Sandbox) && f.OthersEnvironReadable() {
			// Landlock scopes ptrace and /proc/PID/cwd, but this kernel
			// lets a command open another process's environ (Linux
			// 6.18), and no PID namespace hides them: said, so a person
			// keeps keys out of the environment of what starts nodwyn.
			mf.line += "; other processes' /proc/PID/environ stays readable"
		}
		floorc <- mf
	}()
	var egressc *egressStart
	var egressErr error
	joinFloor := func() {
		if floorc != nil {
			mf := <-floorc
			s.floor, s.floorLine, floorc = mf.floor, mf.line, nil
			s.ns, s.nsWhy, s.writesLine = mf.ns, mf.nsWhy, mf.writes
			egressc, egressErr = mf.egress, mf.egressErr
			gopts.Denylist = mf.deny
		}
	}
	defer func() { // on the error returns too: the goroutine ends before New does
		joinFloor()
		if err != nil {
			if egressc != nil && s.egress == nil {
				egressc.proxy.Close()
			}
			s.ns.Close()
			s.floor.Close() // the session was closed without it
		}
	}()
	s.gitRepo = prim.IsGitRepo(opts.Folder)

	if !opts.Dry {
		lg, err := store.OpenLog(opts.Store.LogPath(s.ID))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.log = lg
	}

	// The interpreter gets no file access: files are read and written
	// through the tools, which the guard judges ((load …) is the session's).
	s.interp = scheme.NewWith(scheme.Options{NoFiles: "not available in a nodwyn session; use (call-tool \"fs-read\" …) or (call-tool \"fs-write\" …), which the guard judges"})
	s.interp.Stdout = opts.Stdout
	s.bind()
	if err := s.loadChain(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if s.state != nil {
		// The calls the interrupted run left unanswered, from its log
		// (console.go), once prompts/ is loaded; a state rebuilt from the
		// log is said at run.start.
		s.closeInterrupted(ctx)
		if s.state.Rebuilt != "" {
			s.seamNotes = append(s.seamNotes, s.state.Rebuilt)
		}
	}
	// The guard's /tmp rule (an unattended lean run may use /tmp) comes
	// from the run's options alone, never from Scheme (a project init could
	// redefine current-profile-name): lean is the profile chosen by
	// flag/config/env, or the default for unattended runs. Leaving a
	// command running at its time limit is Scheme policy: the profile's
	// leave-running setting, read in loadChain.
	lean := opts.Profile == "lean" || (opts.Profile == "" && opts.Unattended)
	gopts.Sandbox, gopts.Unattended, gopts.Lean = opts.Sandbox, opts.Unattended, lean
	gopts.Secrets = opts.Secrets
	gopts.Tools = append(guardTools(), s.toolbox().roles()...) // prim's table's roles, then the Scheme tools' (define-tool, in the init chain just loaded)
	if s.seam == sandbox.ModeWorkingCopy {
		// Commands run in a copy under the scratch directory: the guard
		// reads each line from there too (a relative path that climbs out
		// of the copy lands elsewhere than from the folder).
		co := s.checkout
		if co == "" {
			co = opts.Folder
		}
		if rel, err := filepath.Rel(co, opts.Folder); err == nil {
			gopts.RunDirs, gopts.Checkout = []string{filepath.Join(scratch, "nodwyn-wc-copy", rel)}, co
		}
	}
	joinFloor()
	gopts.KernelFloor = s.floor != nil
	s.guard = guard.New(gopts)
	s.appr = guard.NewApprovals(s.guard)
	for _, c := range s.pendingCheckers {
		s.guard.AddChecker(c)
	}
	if s.mcp != nil { // MCP tools' calls (mcp.go)
		s.mcp.checker = &mcpChecker{s: s}
		s.guard.AddChecker(s.mcp.checker)
	}
	popts := prim.DefaultOptions()
	popts.Folder = opts.Folder
	popts.Scratch = scratch
	popts.Sandbox = opts.Sandbox
	popts.LeaveRunning = s.leaveRunning
	popts.RepoKnown, popts.GitRepo = true, s.gitRepo // asked once, above
	deny := s.guard.Denylist()
	popts.Deny = func(p string) bool { d, _ := deny.Denied(p); return d }
	popts.DenyResolved = func(p string) bool { d, _ := deny.DeniedResolved(p); return d }
	if opts.Store != nil && !opts.Dry {
		id, st := s.ID, opts.Store
		popts.Backup = func(abs string, old []byte) error { return st.Backup(id, abs, old) }
	}
	popts.Seam, popts.Checkout = s.seam, s.checkout
	popts.Floor = s.floor
	switch {
	case egressc != nil || egressErr != nil:
		if egressErr != nil {
			s.Close()
			return nil, fmt.Errorf("the session's egress proxy: %w", egressErr)
		}
		if egressc.proxy == nil { // no TCP rules here (egress.go)
			s.netWhy = "no network namespace: " + s.nsWhy + "; " + egressc.open
			break
		}
		s.egress, s.egressRules = egressc.proxy, egressc.rules
		s.seamNotes = append(s.seamNotes, egressc.notes...)
		popts.ExtraEnv = append(popts.ExtraEnv, egressc.env...)
	case opts.Sandbox:
	case opts.ConfigSeam.Network == "open":
		s.netWhy = "[sandbox] network = \"open\" in " + opts.ConfigSeamNetworkFrom
	case s.floor == nil:
		s.netWhy = "no kernel floor"
	case s.nsWhy != "":
		s.netWhy = "no network namespace: " + s.nsWhy
	}
	if !opts.Sandbox {
		s.protect = sandbox.Protect(opts.Folder)
		popts.AfterCommand = func() string { return sandbox.RestoreNote(s.protect.Restore()) }
	}
	if s.egress != nil && s.ns.Network() { // a note for a direct connection (egress_local.go)
		popts.AfterCommand = directNote(s.ns, popts.AfterCommand)
	}
	beforeFirst := opts.BeforeFirstProcess
	if f := beforeFirst; f != nil && s.mcp != nil {
		// The tools' commands and the MCP servers start through two
		// hosts: the watchdog starts once, before the first of either.
		var once sync.Once
		beforeFirst = func(mark string) { once.Do(func() { f(mark) }) }
	}
	popts.BeforeFirstProcess = beforeFirst
	if s.seam == sandbox.ModeWorkingCopy && opts.Store != nil && !opts.Dry {
		sc := &prim.SelfCheck{Record: s.recordValidation}
		if c := opts.Contract; c != nil {
			sc.Contract = c.Path
			for _, ch := range c.Checks {
				sc.Checks = append(sc.Checks, prim.Check{Name: ch.Name, Command: ch.Command})
			}
		}
		popts.SelfCheck = sc
	}
	tools, err := prim.New(popts)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.tools = tools
	s.startMCP(ctx, beforeFirst) // in the background (mcp.go)
	return s, nil
}

// loadChain loads the init chain and asks Scheme for the profile, under
// the run's deadline (the clock starts in New) and the init chain's own
// step and memory bounds, which are lifted once it is done.
func (s *Session) loadChain(parent context.Context) error {
	if s.opts.Timeout > 0 {
		s.deadline = s.started.Add(s.opts.Timeout)
	}
	ctx, cancel := s.withDeadline(parent)
	defer cancel()
	steps, mem := s.opts.initBounds()
	s.interp.SetStepLimit(steps)
	s.interp.SetMemoryLimit(mem)
	defer func() {
		s.interp.SetStepLimit(0)
		s.interp.SetMemoryLimit(0)
	}()
	if err := s.loadInit(ctx); err != nil {
		return err
	}
	// The resolve pass: a name the loaded code refers to and no file of
	// the chain defines stops the run now, not when its branch runs.
	if refs := s.interp.Unresolved(); len(refs) > 0 {
		return s.loadFailed(ctx, "the init chain", scheme.UnresolvedError(refs), "define the name, or correct its spelling")
	}
	if _, err := s.interp.CallByName(ctx, "current-profile"); err != nil {
		fix := ""
		if s.opts.Profile != "" && s.opts.ProfileOrigin != "" {
			fix = fmt.Sprintf("the profile %q is from %s", s.opts.Profile, s.opts.ProfileOrigin)
		}
		return s.loadFailed(ctx, "(current-profile) (as the init chain defines it)", err, fix)
	}
	s.profile = s.opts.Profile
	v, err := s.interp.CallByName(ctx, "current-profile-name")
	if err == nil {
		s.profile = scheme.DisplayString(v)
	} else if bounded(ctx, err) {
		return s.loadFailed(ctx, "(current-profile-name) (as the init chain defines it)", err, "")
	}
	v, err = s.interp.CallByName(ctx, "profile-ref", scheme.Symbol("leave-running"), false)
	if err != nil {
		return s.loadFailed(ctx, "(profile-ref 'leave-running) (as the init chain defines it)", err, "")
	}
	s.leaveRunning = scheme.IsTrue(v)
	s.mcpProfileOff(ctx)
	return s.resolveSeam(ctx)
}

// makeFloor is the kernel floor for a session with the guard's options g:
// the denylist's directories denied, its exception (the scratch directory)
// kept; nil and "off (why)" when off says so or the kernel cannot hold it.
type madeFloor struct {
	floor  *sandbox.Floor
	line   string
	deny   *guard.PathDenylist
	writes string             // where commands write, when confined
	ns     *sandbox.SessionNS // the session's namespaces, or nil and why
	nsWhy  string
	// egress is the session's proxy where ns has a network namespace
	egress    *egressStart
	egressErr error
}

// initBounds are the init chain's step and memory bounds: the options',
// or DefaultInitSteps and DefaultInitMemory.
func (o Options) initBounds() (steps, mem int64) {
	steps, mem = o.InitSteps, o.InitMemory
	if steps <= 0 {
		steps = DefaultInitSteps
	}
	if mem <= 0 {
		mem = DefaultInitMemory
	}
	return steps, mem
}

// makeFloor makes the kernel floor that denies what the guard's denylist
// of g denies, or says why there is none; the denylist is returned for the
// guard (made once: resolving its paths is most of guard.New's cost).
func makeFloor(g guard.Options, off bool, wc *confinement) (*sandbox.Floor, string, *guard.PathDenylist) {
	if off {
		return nil, "off (--no-kernel-floor, for this run only)", guard.NewPathDenylist(g)
	}
	// nodwyn's own configuration directory is made if it is missing (empty,
	// 0700): the floor covers what exists, and a command must not be able
	// to make a config.toml there (a base_url would send the next run's key
	// away) because the person configures nodwyn by the environment alone.
	if g.ConfigDir != "" {
		if _, err := os.Lstat(g.ConfigDir); errors.Is(err, fs.ErrNotExist) {
			_ = os.MkdirAll(g.ConfigDir, 0o700)
		}
	}
	d := guard.NewPathDenylist(g)
	var except []string
	if d.Except != "" {
		except = []string{d.Except}
	}
	// The cache directory toolchains write and read back in one command
	// (go test's GOCACHE, pip's, npm's) is made now when missing, so the
	// ruleset grants it as an entry: made by a command directly in the
	// home (an ancestor of denied paths), it could not be written into
	// until the next command, and a fresh go test failed.
	if c := cacheHome(g.Home); c != "" {
		if _, err := os.Lstat(c); errors.Is(err, fs.ErrNotExist) {
			_ = os.MkdirAll(c, 0o700)
		}
	}
	f, err := sandbox.NewFloor(d.Dirs, except)
	if err != nil {
		return nil, "off (" + err.Error() + ")", d
	}
	line := f.String()
	if wc != nil {
		ws := writableFor(g.Folder, g.Home, wc.extra, wc.uses...)
		f.ConfineWrites(ws.paths, WidenHint)
		wc.writesLine = "commands write only in " + ws.summary(g.Folder, g.Home) + " and the scratch directory"
	}
	return f, line, d
}

// confinement is how a session's commands are confined beyond the
// catalogue: nil in sandbox mode (the machine is the task's).
type confinement struct {
	extra   []string // the person's writable additions: config, then flags
	uses    []string // ecosystems the run's MCP servers start with (npx: npm), beside the folder's
	network bool     // a network namespace, commands going out through the proxy
	// namespaces: the session's PID, mount and network namespaces
	namespaces bool

	writesLine string // where commands write, for a person (set by makeFloor)
}

// writeConfinement is the confinement for a session with opts.
func writeConfinement(opts Options) *confinement {
	if opts.Sandbox {
		return nil
	}
	return &confinement{extra: append(slices.Clone(opts.ConfigSeam.Writable), opts.Writable...), uses: mcpEcosystems(opts.MCP),
		network: opts.ConfigSeam.Network != "open", namespaces: opts.ConfigSeam.Namespaces != "off"}
}

// cacheHome is $XDG_CACHE_HOME, else ~/.cache.
func cacheHome(home string) string {
	if x := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return x
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cache")
}

// FloorStatus says whether the kernel floor is on for this session:
// "on (Landlock ABI 7, 9 paths denied)" or "off (why)".
func (s *Session) FloorStatus() string { return s.floorLine }

// withDeadline is ctx with the run's deadline, if it has one.
func (s *Session) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadlineCause(ctx, s.deadline, ErrDeadline)
}

// bounded reports whether err is the end of an evaluation by a bound or by
// ctx, rather than an error in the Scheme code.
func bounded(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, scheme.ErrStepLimit) || errors.Is(err, scheme.ErrMemoryLimit)
}

// loadFailed is the error of a failed load of what (a file of the init
// chain), saying which bound stopped it and how to raise it; fix is the
// advice for an ordinary error in the code ("" = fix what).
func (s *Session) loadFailed(ctx context.Context, what string, err error, fix string) error {
	cfg := "config.toml"
	if s.opts.Dirs.Config != "" {
		cfg = filepath.Join(s.opts.Dirs.Config, "config.toml")
	}
	if ctx.Err() != nil {
		if errors.Is(context.Cause(ctx), ErrDeadline) {
			return fmt.Errorf("%w (--timeout %s) while loading %s; nothing was sent to the model\n(give a longer --timeout, or look for a loop that never ends in %s)",
				ErrDeadline, s.opts.Timeout, what, what)
		}
		return fmt.Errorf("%w while loading %s; nothing was sent to the model", ErrInterrupted, what)
	}
	var e *scheme.Error
	where := ""
	if errors.As(err, &e) && !e.Pos.IsZero() {
		where = " (it was at " + e.Pos.String() + ")"
	}
	switch {
	case errors.Is(err, scheme.ErrStepLimit):
		n, _ := s.opts.initBounds()
		return fmt.Errorf("%s stopped: it made more than %d procedure calls, the init chain's step bound%s; the run stopped before any model call\n(look for a loop that never ends there, or raise the bound with [limits] init_steps in %s)",
			what, n, where, cfg)
	case errors.Is(err, scheme.ErrMemoryLimit):
		_, n := s.opts.initBounds()
		return fmt.Errorf("%s stopped: it kept more than %d MB of data, the init chain's memory bound%s; the run stopped before any model call\n(look for a loop that keeps building data there, or raise the bound with [limits] init_memory_mb in %s)",
			what, n>>20, where, cfg)
	}
	if fix == "" {
		fix = "fix " + what
	}
	if from := callerFile(err); from != "" {
		err = &calledFrom{at: from, err: err}
	} else if text := userText(err); text != err.Error() {
		err = &retold{text: text, err: err}
	}
	return fmt.Errorf("%w\n(the run stopped before any model call; %s)", err, fix)
}

// callerFile is where in a file of the person's or the project's an error
// raised inside nodwyn's embedded Scheme was called from (a define-profile
// with a misspelt setting fails in runtime/profiles.scm): "" when it was
// raised in their file, or not called from one.
// calledFrom is an error of the embedded Scheme told from the caller's
// place: "init.scm:2:1: define-profile careful: … (raised at
// runtime/profiles.scm:72:10)".
type calledFrom struct {
	at  string
	err error
}

func (c *calledFrom) Error() string {
	var e *scheme.Error
	errors.As(c.err, &e)
	return c.at + ": " + e.Msg + " (raised at " + e.Pos.String() + ")"
}
func (c *calledFrom) Unwrap() error { return c.err }

// userText is err as a person reads it. A Scheme error raised in a file
// embedded in nodwyn (runtime/loop.scm, runtime/profiles.scm …) is not
// theirs to fix, so its position is left out: the message says what
// failed (a primitive's Go error: the connection and the URL; a profile
// that does not exist). An error in their own .scm file keeps its
// file:line:col, and one raised in an embedded file on a call from theirs
// is told from their line (calledFrom).
func userText(err error) string {
	var e *scheme.Error
	if !errors.As(err, &e) || e.Pos.IsZero() || !embedded(e.Pos.File) {
		return err.Error()
	}
	return strings.Replace(err.Error(), e.Pos.String()+": ", "", 1)
}

// embedded reports whether file is one of nodwyn's embedded Scheme files.
func embedded(file string) bool {
	if filepath.IsAbs(file) {
		return false
	}
	_, err := fs.Stat(nodwyn.FS, file)
	return err == nil
}

// retold is an error told as userText tells it.
type retold struct {
	text string
	err  error
}

func (r *retold) Error() string { return r.text }
func (r *retold) Unwrap() error { return r.err }

func callerFile(err error) string {
	var e *scheme.Error
	if !errors.As(err, &e) || e.Pos.IsZero() || filepath.IsAbs(e.Pos.File) {
		return ""
	}
	for _, f := range e.Stack {
		if filepath.IsAbs(f.Pos.File) {
			return f.Pos.String()
		}
	}
	return ""
}

// loadInit loads the embedded init.scm, then the person's and the project's.
func (s *Session) loadInit(ctx context.Context) error {
	if err := s.interp.Load(ctx, nodwyn.FS, "init.scm"); err != nil {
		if bounded(ctx, err) {
			return s.loadFailed(ctx, "the embedded init.scm", err, "")
		}
		return fmt.Errorf("the embedded init.scm failed (a bug in nodwyn): %w", err)
	}
	user := s.opts.UserInit
	if user == "" && s.opts.Dirs.Config != "" {
		user = filepath.Join(s.opts.Dirs.Config, "init.scm")
	}
	if user != "" {
		if _, err := os.Stat(user); err == nil {
			if err := s.interp.LoadFile(ctx, user); err != nil {
				return s.loadFailed(ctx, user, err, "")
			}
		}
	}
	if src, ok := s.opts.ProjectScheme["init.scm"]; ok {
		path := filepath.Join(config.ProjectDir(s.opts.Folder), ".nodwyn", "init.scm")
		if err := s.interp.LoadSource(ctx, src, path); err != nil {
			return s.loadFailed(ctx, path, err, "")
		}
	}
	return nil
}

// profileName is the profile this run uses, as Scheme said when New had
// loaded the init chain (under its bounds).
func (s *Session) profileName() string { return s.profile }

// Judge is the guard's decision on req, with every checker the init chain
// added, under ctx (for `nodwyn guard`); nothing runs.
func (s *Session) Judge(ctx context.Context, req guard.Request) guard.Decision {
	return s.guard.Check(ctx, req)
}

// RunMode is what a run was started as, once the session has resolved it
// (sandbox mode implies unattended and yolo; --judge, unattended).
type RunMode struct{ Sandbox, Unattended, Yolo, Judge bool }

// Mode returns the run's mode.
func (s *Session) Mode() RunMode {
	return RunMode{Sandbox: s.opts.Sandbox, Unattended: s.opts.Unattended, Yolo: s.opts.Yolo, Judge: s.opts.Judge}
}

// Scratch is the session's scratch directory.
func (s *Session) Scratch() string { return s.scratch }

// ProcessMark is the mark in the environment of every program the
// session's tools start (sandbox.MarkEnv): sandbox.StopMarked with it stops them
// all, what left its process group included.
func (s *Session) ProcessMark() string { return s.tools.Mark() }

// Run runs the session: (run-session instruction) under the run's budgets.
func (s *Session) Run(ctx context.Context) Outcome {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if !s.deadline.IsZero() { // set in New: loading counted against --timeout
		var stop context.CancelFunc
		ctx, stop = context.WithDeadlineCause(ctx, s.deadline, ErrDeadline)
		defer stop()
	}
	s.cancel = cancel
	s.asking.setTurn(ctx) // the proxy's questions are asked while it runs

	profile := s.profileName()
	s.emit(s.runStart(profile, s.opts.Instruction))
	for _, n := range s.seamNotes {
		s.Note(n)
	}
	s.mcpJoin() // the MCP servers' states, once they are ready or left out
	s.saveState("running", profile)

	instruction := s.opts.Instruction
	if instruction == "" && s.opts.ResumeID != "" {
		instruction = s.say(ctx, "continue-message", "Continue the task.")
		if len(s.messages) == 0 && s.state != nil && s.state.Instruction != "" {
			// Killed before its first reply was saved: the task is all there is.
			instruction = s.state.Instruction
		}
	}
	var err error
	if s.storeErr == nil {
		_, err = s.interp.CallByName(ctx, "run-session", scheme.NewString(instruction))
	}
	out := s.outcomeOf(ctx, err)
	s.emit(s.runEnd(out, s.started))
	s.saveState(out.Status, profile)
	if s.storeErr != nil {
		out = s.storageOutcome() // StorageFailed: the id to resume
	}
	return out
}

func (s *Session) outcomeOf(ctx context.Context, err error) Outcome {
	if s.storeErr != nil {
		return Outcome{Status: "failed", Text: "stopped: " + s.storeErr.Error(), Err: s.storeErr}
	}
	if err == nil {
		if s.outcome != nil {
			return *s.outcome
		}
		return Outcome{Status: "finished"}
	}
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, ErrToolBudget):
		return Outcome{Status: "budget", Text: fmt.Sprintf("stopped: %v (%d tool calls)", ErrToolBudget, s.toolCalls), Err: cause}
	case errors.Is(cause, ErrDeadline):
		return Outcome{Status: "deadline", Text: fmt.Sprintf("stopped: %v (%s)", ErrDeadline, s.opts.Timeout), Err: cause}
	case cause != nil && (errors.Is(cause, ErrInterrupted) || errors.Is(cause, context.Canceled)):
		return Outcome{Status: "interrupted", Text: "stopped: interrupted", Err: cause}
	}
	var exit *scheme.ExitError
	if errors.As(err, &exit) { // (exit [code]) in Scheme ends the run
		if exit.Code == 0 {
			if s.outcome != nil {
				return *s.outcome
			}
			return Outcome{Status: "finished", Text: "the loop called (exit)"}
		}
		return Outcome{Status: "failed", Text: fmt.Sprintf("the loop called (exit %d)", exit.Code), Err: err}
	}
	text := userText(err)
	s.emit(event.Error{Text: s.redact(text)})
	return Outcome{Status: "failed", Text: text, Err: err}
}

// Note writes a note to the session's log and event stream (as (log-note …)
// does), redacted.
func (s *Session) Note(text string) {
	s.emit(event.Note{Text: s.redact(text)})
}

// Interrupt stops the run (as SIGINT does).
func (s *Session) Interrupt() {
	if s.cancel != nil {
		s.cancel(ErrInterrupted)
	}
}

// Close stops what the session owns and removes the scratch directory (kept
// in sandbox mode, where programs left running have TMPDIR there).
func (s *Session) Close() error {
	s.closeMCP()
	if s.tools != nil {
		s.tools.Close()
	}
	if changed, err := s.protect.Restore(); len(changed) > 0 || err != nil {
		// What a command left running changed after the last command.
		s.Note(sandbox.RestoreNote(changed, err))
	}
	if s.egress != nil {
		s.egress.Close()
	}
	s.ns.Close()    // and what is left in the session's PID namespace with it
	s.floor.Close() // after the tools: their commands started under it
	if s.opts.Model != nil {
		provider.CloseIdle(s.opts.Model) // its connection, kept for the next request
	}
	if s.journal != nil {
		s.journal.Close()
	}
	if s.log != nil {
		s.log.Close()
	}
	if err := s.stateW.Close(); err != nil { // its last state whole in state.json
		fmt.Fprintf(os.Stderr, "nodwyn: %v (the state journal beside it has the rest; resume reads both)\n", err)
	}
	s.lock.Unlock()
	s.cleanupScratch()
	return nil
}

func (s *Session) cleanupScratch() {
	if s.scratch == "" || s.opts.Sandbox {
		return
	}
	if err := store.RemoveScratch(s.scratch); err != nil {
		fmt.Fprintf(os.Stderr, "nodwyn: removing the scratch directory: %v\n", err)
	}
}

// emit writes an event to the log and every sink.
func (s *Session) emit(d event.Data) {
	// One at a time: the loop's, and the egress proxy's net.conn from its
	// connections' goroutines.
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	ev := store.Event{Type: d.Type(), Time: time.Now(), Data: event.Map(d)}
	if !s.emitted { // docs/events.md
		ev.Schema, s.emitted = store.EventSchema, true
	}
	if s.log != nil {
		if err := s.log.Write(&ev); err != nil {
			s.storageFailed(fmt.Errorf("writing the log: %w", err))
		}
	}
	for _, sink := range s.opts.Sinks {
		sink(ev)
	}
}

func (s *Session) saveState(status, profile string) {
	if s.opts.Store == nil || s.opts.Dry {
		return
	}
	msgs, err := messagesJSON(&s.msgJSON, s.messages)
	if err != nil {
		s.storageFailed(fmt.Errorf("saving the session: %w", err))
		return
	}
	st := s.state
	if st == nil {
		st = &store.SessionState{ID: s.ID, Created: s.started}
		s.state = st
	}
	st.Folder, st.Profile = s.opts.Folder, profile
	if s.opts.ResumeID == "" || st.Instruction == "" {
		st.Instruction = s.opts.Instruction
	}
	st.Provider, st.Model, st.BaseURL, st.API = s.opts.Provider, s.opts.ModelName, store.EndpointWithoutSecret(s.opts.BaseURL), s.opts.API
	st.Sandbox, st.Unattended, st.Yolo = s.opts.Sandbox, s.opts.Unattended, s.opts.Yolo
	st.Updated, st.Status = time.Now(), status
	st.Messages, st.ToolCalls = msgs, s.toolCalls
	s.savedMessages = len(s.messages)
	st.Usage = map[string]int{"input_tokens": s.usage.TotalInput(), "cached_tokens": s.usage.CacheReadTokens,
		"cache_write_tokens": s.usage.CacheWriteTokens, "output_tokens": s.usage.OutputTokens}
	if c, ok := s.cost(s.usage); ok {
		st.Usage["cost_micro_usd"] = int(c * 1e6)
	}
	if s.stateW == nil {
		s.stateW = s.opts.Store.StateWriter(s.ID)
	}
	if err := s.stateW.Save(st); err != nil {
		s.storageFailed(fmt.Errorf("saving the session: %w", err))
	}
}

// storageFailed ends the run: a session whose log or state cannot be written
// could not be resumed or audited.
func (s *Session) storageFailed(err error) {
	if s.storeErr == nil { // the first is said once; the run ends with it
		s.storeErr = fmt.Errorf("%w: %w", ErrStorage, err)
	}
	if s.cancel != nil {
		s.cancel(s.storeErr)
	}
}

// danglingAnswers are what closeDanglingWith answers with: a call that ran
// (with its result), one that did not; interrupted-call-result and
// interrupted-call-not-run in prompts/messages.scm.
type danglingAnswers struct {
	ran    func(output string) string
	notRun string
}

// defaultDangling are the built-in answers.
var defaultDangling = danglingAnswers{
	ran: func(out string) string {
		return "this call ran before the session was interrupted; its result:\n" + out
	},
	notRun: "not run: the session was interrupted before this call finished",
}

// closeDangling answers tool calls a crashed run left unanswered, so the
// conversation can be sent again. A call whose result is among ran (the
// log's tool.result events: in order, by name) is answered with that
// result; the others were not run.
func closeDangling(msgs *[]provider.Message, ran []store.Event) {
	closeDanglingWith(msgs, ran, defaultDangling)
}

// closeDanglingWith is closeDangling with answers.
func closeDanglingWith(msgs *[]provider.Message, ran []store.Event, say danglingAnswers) {
	m := *msgs
	results := make([]event.ToolResult, len(ran))
	for j, ev := range ran {
		d, _ := event.Decode(ev.Type, ev.Data) // a field of another type is left zero, as before
		results[j], _ = d.(event.ToolResult)
	}
	for i := len(m) - 1; i >= 0; i-- {
		if m[i].Role != provider.RoleAssistant || len(m[i].ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		for _, later := range m[i+1:] {
			if later.Role == provider.RoleTool {
				answered[later.ToolCallID] = true
			}
		}
		next := 0
		for _, tc := range m[i].ToolCalls {
			res := -1
			for j := next; j < len(results); j++ {
				if results[j].Name == tc.Name {
					res, next = j, j+1
					break
				}
			}
			if res >= 0 && !answered[tc.ID] {
				m = append(m, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Name: tc.Name,
					Content: say.ran(results[res].Output), IsError: results[res].Error})
				continue
			}
			if !answered[tc.ID] {
				m = append(m, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Name: tc.Name,
					Content: say.notRun, IsError: true})
			}
		}
		break
	}
	*msgs = m
}

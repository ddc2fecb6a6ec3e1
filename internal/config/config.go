// Package config finds nodwyn's directories and reads its configuration.
//
// The configuration directory is $XDG_CONFIG_HOME/nodwyn (default
// ~/.config/nodwyn) and the data directory $XDG_DATA_HOME/nodwyn (default
// ~/.local/share/nodwyn); see [ResolveDirs].
//
// [Load] reads, in order, <config>/config.toml and <folder>/.nodwyn/config.toml,
// then the environment; a later source wins, key by key. Flags are the
// caller's and come last. A malformed file, a key nodwyn does not know and a
// key that would set a property of a run (yolo, unattended, sandbox) are
// errors that name the file, the line and the key ([*Error]).
//
// [APIKey] finds a provider's key in the environment, in
// <config>/credentials.toml or in $CREDENTIALS_DIRECTORY, never in the
// project folder.
package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Dirs are nodwyn's configuration and data directories.
type Dirs struct {
	Config string // $XDG_CONFIG_HOME/nodwyn: config.toml, init.scm, credentials.toml
	Data   string // $XDG_DATA_HOME/nodwyn: sessions, logs, the version store
}

// ResolveDirs returns the directories under XDG_CONFIG_HOME and XDG_DATA_HOME
// as getenv reports them. A variable that is unset, empty or not an absolute
// path is ignored, as the XDG base directory specification says, and the
// default under home is used: ~/.config/nodwyn and ~/.local/share/nodwyn.
func ResolveDirs(getenv func(string) string, home string) Dirs {
	base := func(env string, def ...string) string {
		if v := getenv(env); v != "" && filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		return filepath.Join(append([]string{home}, def...)...)
	}
	return Dirs{
		Config: filepath.Join(base("XDG_CONFIG_HOME", ".config"), "nodwyn"),
		Data:   filepath.Join(base("XDG_DATA_HOME", ".local", "share"), "nodwyn"),
	}
}

// Provider chooses the model: [provider] in config.toml.
type Provider struct {
	Name    string `toml:"name"`     // "openai", "anthropic" or "script"
	Model   string `toml:"model"`    // the model's name at the provider
	BaseURL string `toml:"base_url"` // an OpenAI- or Anthropic-compatible endpoint
	KeyEnv  string `toml:"key_env"`  // the environment variable that holds the key
	Script  string `toml:"script"`   // the reply file of the scripted model
	// RequestTimeout bounds each request to the model as a whole ("10m",
	// the default when unset or 0); IdleTimeout cuts a request that
	// receives no data for that long ("2m"; SSE comments and pings are not
	// data). A timed-out request is retried like a failed one.
	RequestTimeout Duration `toml:"request_timeout"`
	IdleTimeout    Duration `toml:"idle_timeout"`
	// ContextWindow is the model's context window in tokens (0: nodwyn's
	// table of well-known models, else a default); compaction keeps each
	// request within it.
	ContextWindow int `toml:"context_window"`
	// API is OpenAI's wire format: "chat" (Chat Completions, the default,
	// what compatible servers speak) or "responses" (the Responses API).
	API string `toml:"api"`
	// Reasoning is the reasoning effort asked of the model: "low",
	// "medium" or "high" ("": the model's default).
	Reasoning string `toml:"reasoning"`
	// Compat adapts Chat Completions to a server that differs from
	// api.openai.com ([provider.compat]); what a server refuses is also
	// learnt from its first 400, for the session.
	Compat Compat `toml:"compat"`
	// Prices are the model's prices in US dollars per million tokens, for
	// the cost a run reports (unset: nodwyn's dated table of a few
	// well-known models, else no cost).
	Prices Prices `toml:"prices"`
}

// Compat is [provider.compat] (provider.Compat says what each does).
type Compat struct {
	MaxTokensField       string `toml:"max_tokens_field"` // "max_completion_tokens" or "max_tokens"
	SystemRole           string `toml:"system_role"`      // "system" or "developer"
	NoStreamOptions      bool   `toml:"no_stream_options"`
	NoParallelToolCalls  bool   `toml:"no_parallel_tool_calls"`
	NoReasoningEffort    bool   `toml:"no_reasoning_effort"`
	NoEncryptedReasoning bool   `toml:"no_encrypted_reasoning"`
}

// Prices are [provider.prices]: dollars per million tokens.
type Prices struct {
	Input       float64 `toml:"input"`        // uncached input
	CachedInput float64 `toml:"cached_input"` // input read from the prompt cache
	CacheWrite  float64 `toml:"cache_write"`  // input written to the cache (Anthropic); 0: as input
	Output      float64 `toml:"output"`       // output, reasoning included
}

// Loop chooses the Scheme loop: [loop] in config.toml.
type Loop struct {
	Profile string `toml:"profile"` // "lean", "full" or a project's own
}

// Limits are the run's default budgets: [limits] in config.toml.
type Limits struct {
	MaxToolCalls int      `toml:"max_tool_calls"`
	Timeout      Duration `toml:"timeout"` // wall clock, "30m"; loading the init chain counts
	// The init chain's own bounds, and each Scheme tool call's (0 = the
	// defaults, DefaultInitSteps procedure calls per file or call and
	// DefaultInitMemoryMB): an init.scm or a tool that loops stops with an
	// error. A project's [limits] may only lower the person's (LoadWith).
	InitSteps    int `toml:"init_steps"`
	InitMemoryMB int `toml:"init_memory_mb"`
}

// Seam is [sandbox] in config.toml (and in a contract): how commands run,
// the execution seam of internal/sandbox. It is not sandbox mode (nodwyn
// run --sandbox container, the run's declaration that the machine is
// disposable), which no file can set.
type Seam struct {
	// Mode is "no_sandbox" (the default: commands run in the folder) or
	// "working_copy" (each command runs in a fresh copy of the checkout,
	// and what it writes is discarded).
	Mode string `toml:"mode"`
	// Checkout is the folder copied, relative to the run's folder: "."
	// (the default) or an ancestor of it inside the same git work tree.
	Checkout string `toml:"checkout"`
	// Deny adds paths (~/… or absolute, directories or files) to the
	// credential catalogue that the guard, the file tools and the kernel
	// floor deny. Only the person's own config.toml may set it: a
	// project's file and a contract are not taken (nothing removes an
	// entry of the catalogue, and nothing of a project's chooses it).
	Deny []string `toml:"deny"`
	// Writable adds directories (~/… or absolute) that commands may write
	// outside sandbox mode, besides the folder, the scratch directory, the
	// temporary directory and the build caches (docs/sandbox.md, "What
	// commands may write"). Only the person's own config.toml may set it:
	// a project's file and a contract are not taken.
	Writable []string `toml:"writable"`
	// AllowHosts are hosts ("example.com", "*.example.com") commands may
	// reach through the session's egress proxy outside sandbox mode,
	// besides the defaults (the registries of the folder's ecosystems and
	// its git remotes' hosts). Only the person's own config.toml may set
	// it.
	AllowHosts []string `toml:"allow_hosts"`
	// AllowPorts are TCP ports commands may connect to directly where the
	// session has no network namespace and Landlock keeps them to the
	// proxy's port (docs/sandbox.md): for servers the commands start and
	// talk to. Only the person's own config.toml may set it.
	AllowPorts []int `toml:"allow_ports"`
	// Network is "proxy" (the default outside sandbox mode, where the
	// kernel lets nodwyn make a network namespace: commands reach other
	// hosts only through the session's proxy) or "open" (commands connect
	// where they like). Only the person's own config.toml may set it.
	Network string `toml:"network"`
	// Namespaces is "on" (the default: outside sandbox mode, where the
	// kernel lets nodwyn, commands run in PID, mount and network
	// namespaces of the session's own) or "off" (commands see the
	// person's other processes, and the network is open). Only the
	// person's own config.toml may set it.
	Namespaces string `toml:"namespaces"`
}

// SeamNetworks are the values [sandbox] network may have.
var SeamNetworks = []string{"proxy", "open"}

// SeamNamespaces are the values [sandbox] namespaces may have.
var SeamNamespaces = []string{"on", "off"}

// SeamModes are the values [sandbox] mode may have.
var SeamModes = []string{"no_sandbox", "working_copy"}

// File is what a config.toml may hold.
type File struct {
	Provider Provider `toml:"provider"`
	Loop     Loop     `toml:"loop"`
	Limits   Limits   `toml:"limits"`
	Sandbox  Seam     `toml:"sandbox"`
	Daemon   Daemon   `toml:"daemon"`
	MCP      MCP      `toml:"mcp"`
}

// Daemon is [daemon]: the socket of the daemon nodwyn run submits its runs
// to (absolute; --daemon and NODWYN_SOCKET win). Only the person's own
// config.toml may name one: a project's cannot send runs elsewhere.
type Daemon struct {
	Socket string `toml:"socket"`
}

// Config is the configuration after layering files and environment.
type Config struct {
	File
	// Sources are the files read, in order.
	Sources []string
	// Origin names where each setting that is set came from, by its key
	// ("provider.base_url"): "<file>:<line>" or "env <NAME>".
	Origin map[string]string
	// Secrets are the values ${NAME} took from the environment (an MCP
	// server's env and headers): keys, for the run to redact.
	Secrets []string
	// Notes say what was set and not taken (a project's config that would
	// undo the person's [sandbox] mode = "working_copy"), for the log.
	Notes []string
}

// Duration is a time.Duration written in config as a string such as "30m" or
// "1h30m".
type Duration time.Duration

// UnmarshalText parses a duration such as "30m"; it must not be negative.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: write a number with a unit, such as \"30m\" or \"90s\"", b)
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative: write a positive one such as \"30m\"", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// String is time.Duration's String.
func (d Duration) String() string { return time.Duration(d).String() }

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// Error is a problem in a configuration or credentials file.
type Error struct {
	File string // the file's path
	Line int    // 1-based; 0 when unknown
	Col  int    // 1-based; 0 when unknown
	Key  string // the dotted key, such as "provider.model"; "" when unknown
	Msg  string // what is wrong and how to fix it
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Key != "" && !strings.HasPrefix(e.Msg, "unknown key "+e.Key) { // the message names it
		fmt.Fprintf(&b, "key %s: ", e.Key)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// runKeys are properties of a run that no file may set. "sandbox" is one
// only as a key with a value (sandbox = true): the [sandbox] table is the
// execution seam's, and there mode = "container" is refused (checkSeamMode).
var runKeys = map[string]bool{"yolo": true, "unattended": true, "sandbox": true}

// secretKeys are names under which someone may try to put a key in config.
var secretKeys = map[string]bool{"api_key": true, "apikey": true, "key": true, "keys": true, "token": true, "secret": true, "password": true}

// ProjectConfig returns the path of the project's config file for a run in
// folder: .nodwyn/config.toml of the folder or of the nearest ancestor with
// a .nodwyn up to the git work tree's root ([ProjectDir]).
func ProjectConfig(folder string) string {
	return filepath.Join(ProjectDir(folder), ".nodwyn", "config.toml")
}

// Load reads dirs.Config/config.toml, then <folder>/.nodwyn/config.toml, then
// the environment. A file that does not exist is skipped; folder "" skips the
// project file, and a dirs.Config that is not absolute the user's. Each source sets only the keys it names, and a later source
// wins. The environment: NODWYN_PROFILE sets loop.profile, NODWYN_PROVIDER
// provider.name, NODWYN_MODEL provider.model, and OPENAI_BASE_URL or
// ANTHROPIC_BASE_URL provider.base_url when the provider is openai or
// anthropic (as the official SDKs read them); the environment wins over files.
// A variable that is empty or only white space is unset, and a value's
// surrounding white space is dropped.
// An error in a file is an [*Error].
func Load(dirs Dirs, folder string, getenv func(string) string) (*Config, error) {
	var project []byte
	if folder != "" {
		data, err := os.ReadFile(ProjectConfig(folder))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("read config %s: %w", ProjectConfig(folder), err)
		}
		project = data
	}
	return LoadWith(dirs, folder, project, getenv)
}

// LoadWith is Load with the project's config.toml given as its content
// (nil: none), as trust read and judged it: what is layered is what was
// checked, never the file read a second time.
func LoadWith(dirs Dirs, folder string, project []byte, getenv func(string) string) (*Config, error) {
	c := &Config{Origin: map[string]string{}}
	if filepath.IsAbs(dirs.Config) {
		// A relative directory (no HOME) would be read from wherever the
		// process runs, which may be the project.
		p := filepath.Join(dirs.Config, "config.toml")
		data, err := os.ReadFile(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("read config %s: %w", p, err)
		default:
			if err := c.layer(p, data, false, getenv); err != nil {
				return nil, err
			}
			c.Sources = append(c.Sources, p)
		}
	}
	if folder != "" && project != nil {
		p := ProjectConfig(folder)
		userMode, userOrigin := c.Sandbox.Mode, c.Origin["sandbox.mode"]
		userLimits, limitOrigins := c.Limits, map[string]string{}
		for _, k := range limitKeys {
			limitOrigins[k.key] = c.Origin[k.key]
		}
		userSocket, userSocketOrigin := c.Daemon.Socket, c.Origin["daemon.socket"]
		// The keys only the person's own config.toml sets: what a
		// project's file says of them is noted and not taken.
		personOnly := []struct {
			key, why string
			restore  func()
		}{
			{"sandbox.deny", "adds to the credential catalogue", keep(&c.Sandbox.Deny)},
			{"sandbox.allow_hosts", "chooses where commands may connect", keep(&c.Sandbox.AllowHosts)},
			{"sandbox.allow_ports", "chooses where commands may connect", keep(&c.Sandbox.AllowPorts)},
			{"sandbox.network", "opens the network", keep(&c.Sandbox.Network)},
			{"sandbox.namespaces", "turns the session's namespaces off", keep(&c.Sandbox.Namespaces)},
			{"sandbox.writable", "widens what commands may write", keep(&c.Sandbox.Writable)},
		}
		userOrigins := map[string]string{}
		for _, k := range personOnly {
			userOrigins[k.key] = c.Origin[k.key]
		}
		if err := c.layer(p, project, true, getenv); err != nil {
			return nil, err
		}
		c.Sources = append(c.Sources, p)
		if c.Daemon.Socket != userSocket {
			c.Notes = append(c.Notes, fmt.Sprintf("%s sets [daemon] socket; not taken: only your own config.toml chooses the daemon a run goes to", c.Origin["daemon.socket"]))
			c.Daemon.Socket, c.Origin["daemon.socket"] = userSocket, userSocketOrigin
			if userSocketOrigin == "" {
				delete(c.Origin, "daemon.socket")
			}
		}
		for _, k := range personOnly {
			if o, was := c.Origin[k.key], userOrigins[k.key]; o != was {
				name := strings.TrimPrefix(k.key, "sandbox.")
				c.Notes = append(c.Notes, fmt.Sprintf("%s sets [sandbox] %s; not taken: only your own config.toml %s", o, name, k.why))
				k.restore()
				c.Origin[k.key] = was
				if was == "" {
					delete(c.Origin, k.key)
				}
			}
		}
		// A project's [limits] may only lower the person's (or the
		// defaults): a budget is never loosened by a project's file.
		for _, k := range limitKeys {
			proj, user := k.get(&c.Limits), k.get(&userLimits)
			if o := c.Origin[k.key]; o != limitOrigins[k.key] && limitValue(proj, k.def) > limitValue(user, k.def) {
				c.Notes = append(c.Notes, fmt.Sprintf("%s sets [limits] %s = %s; not taken: a project's config may only lower a limit, and yours is %s", o, strings.TrimPrefix(k.key, "limits."), k.show(proj), k.show(user)))
				k.set(&c.Limits, user)
				c.Origin[k.key] = limitOrigins[k.key]
				if limitOrigins[k.key] == "" {
					delete(c.Origin, k.key)
				}
			}
		}
		if userMode == "working_copy" && c.Sandbox.Mode != userMode {
			// A project's file may choose a working copy (it only
			// contains more), never undo the person's choice of one.
			c.Notes = append(c.Notes, fmt.Sprintf("%s sets [sandbox] mode = %q; kept %q from %s: a project's config cannot undo the working copy", c.Origin["sandbox.mode"], c.Sandbox.Mode, userMode, userOrigin))
			c.Sandbox.Mode, c.Origin["sandbox.mode"] = userMode, userOrigin
		}
	}
	env := func(name, key string, dst *string) {
		// White space around a value (a .env file's trailing space or CR)
		// is dropped, and a variable that is only white space is unset.
		if v := strings.TrimSpace(getenv(name)); v != "" {
			*dst = v
			c.Origin[key] = "env " + name
		}
	}
	env("NODWYN_PROFILE", "loop.profile", &c.Loop.Profile)
	env("NODWYN_PROVIDER", "provider.name", &c.Provider.Name)
	env("NODWYN_MODEL", "provider.model", &c.Provider.Model)
	switch c.Provider.Name {
	case "openai":
		env("OPENAI_BASE_URL", "provider.base_url", &c.Provider.BaseURL)
	case "anthropic":
		env("ANTHROPIC_BASE_URL", "provider.base_url", &c.Provider.BaseURL)
	}
	return c, nil
}

// leaf is a settable key of File.
type leaf struct {
	key   string // "provider.model"
	index []int  // reflect field index path from File
	typ   reflect.Type
}

var (
	leaves    []leaf
	leafByKey = map[string]leaf{}
	tables    = map[string]bool{}
)

func init() {
	textType := reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			key := prefix + f.Tag.Get("toml")
			idx := append(append([]int(nil), index...), i)
			if f.Type.Kind() == reflect.Map { // [mcp.servers.NAME]: checkMCPKey
				tables[key] = true
				continue
			}
			if f.Type.Kind() == reflect.Struct && !reflect.PointerTo(f.Type).Implements(textType) {
				tables[key] = true
				walk(f.Type, key+".", idx)
				continue
			}
			l := leaf{key: key, index: idx, typ: f.Type}
			leaves = append(leaves, l)
			leafByKey[key] = l
		}
	}
	walk(reflect.TypeFor[File](), "", nil)
}

// knownKeys lists the keys a file may hold, for error messages.
func knownKeys() string {
	var ks []string
	for _, l := range leaves {
		ks = append(ks, l.key)
	}
	return strings.Join(ks, ", ")
}

// layer decodes one file and sets in c the keys it defines; project says
// it is a project's file, getenv is the environment ${NAME} is taken from.
func (c *Config) layer(path string, data []byte, project bool, getenv func(string) string) error {
	text := string(data)
	lines := keyLines(text)
	fail := func(key, format string, args ...any) error {
		return &Error{File: path, Line: lines.find(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	}

	// Syntax first, into a map, so that every key is seen before types are.
	var raw map[string]any
	md, err := toml.Decode(text, &raw)
	if err != nil {
		return parseError(path, text, lines, err)
	}
	for _, k := range md.Keys() {
		last := strings.ToLower(strings.ReplaceAll(k[len(k)-1], "-", "_"))
		if k.String() == "sandbox" && md.Type(k...) == "Hash" || isMCPServerKey(k) {
			continue // the [sandbox] table; a server's name, an env or header name
		}
		if runKeys[last] {
			return fail(k.String(), "%s is not accepted in a config file: yolo, unattended and sandbox are properties of a run, given by flags only (--%s); remove the key", k[len(k)-1], last)
		}
	}
	for _, k := range md.Keys() {
		ks := k.String()
		if isMCPServerKey(k) {
			if err := checkMCPKey(fail, path, lines.find(ks), k, lookup(raw, k)); err != nil {
				return err
			}
			continue
		}
		if tables[ks] {
			if _, ok := lookup(raw, k).(map[string]any); !ok {
				return fail(ks, "must be a table ([%s]), not %s", ks, md.Type(k...))
			}
			continue
		}
		l, ok := leafByKey[ks]
		if !ok {
			return unknownKey(path, lines.find(ks), k, lookup(raw, k))
		}
		if err := checkType(l, lookup(raw, k)); err != nil {
			return fail(ks, "%v", err)
		}
		if ks == "sandbox.deny" {
			for _, p := range lookup(raw, k).([]any) {
				if p := p.(string); !strings.HasPrefix(p, "~/") && !filepath.IsAbs(p) || filepath.Clean(p) == "/" || p == "~/" {
					return fail(ks, "%q: each path is ~/… (in your home) or absolute, and not / itself, as in deny = [\"~/.config/tool/token\", \"/srv/secrets\"]", p)
				}
			}
		}
		if ks == "sandbox.mode" {
			if err := CheckSeamMode(lookup(raw, k).(string)); err != nil {
				return fail(ks, "%v", err)
			}
		}
		if ks == "sandbox.writable" {
			for _, p := range lookup(raw, k).([]any) {
				if p := p.(string); !strings.HasPrefix(p, "~/") && p != "~" && !filepath.IsAbs(p) {
					return fail(ks, "%q: each directory is ~/… (in your home) or absolute, as in writable = [\"~/.local/share/tool\", \"/srv/build\"]", p)
				}
			}
		}
		if ks == "sandbox.allow_hosts" {
			for _, h := range lookup(raw, k).([]any) {
				h := h.(string)
				rest, _ := strings.CutPrefix(h, "*.")
				if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]")); err == nil && a.Zone() == "" && rest == h {
					continue // an address, IPv6's included
				}
				if lh, lp, err := net.SplitHostPort(h); err == nil {
					a, aerr := netip.ParseAddr(lh)
					if n, err := strconv.Atoi(lp); err == nil && n >= 1 && n <= 65535 &&
						(strings.EqualFold(lh, "localhost") || aerr == nil && a.Unmap().IsLoopback() && a.Zone() == "") {
						continue // a service on this machine's loopback, by its port (egress.LocalPort)
					}
				}
				if rest == "" || strings.ContainsAny(rest, "/:*@ \t") {
					return fail(ks, "%q: each entry is a host name or address, or *.suffix for every name below suffix, without a scheme, port or path, as in allow_hosts = [\"example.com\", \"*.internal.example.com\"]; a port goes only with a service on this machine's loopback, as in \"127.0.0.1:5432\" or \"localhost:3000\"", h)
				}
			}
		}
		if ks == "sandbox.namespaces" {
			if v := lookup(raw, k).(string); !slices.Contains(SeamNamespaces, v) {
				return fail(ks, "%q is not a namespaces setting: write \"on\" (the default) or \"off\"", v)
			}
		}
		if ks == "sandbox.network" {
			if v := lookup(raw, k).(string); !slices.Contains(SeamNetworks, v) {
				return fail(ks, "%q is not a network setting: write \"proxy\" (commands reach other hosts only through nodwyn's proxy, the default) or \"open\"", v)
			}
		}
	}

	// Then into the struct, for the values themselves (durations).
	var f File
	md, err = toml.Decode(text, &f)
	if err != nil {
		return parseError(path, text, lines, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return unknownKey(path, lines.find(und[0].String()), und[0], lookup(raw, und[0]))
	}
	src := reflect.ValueOf(&f).Elem()
	dst := reflect.ValueOf(&c.File).Elem()
	for _, l := range leaves {
		if md.IsDefined(strings.Split(l.key, ".")...) {
			dst.FieldByIndex(l.index).Set(src.FieldByIndex(l.index))
			c.Origin[l.key] = fmt.Sprintf("%s:%d", path, lines.find(l.key))
		}
	}
	return c.layerMCP(path, lines, f.MCP.Servers, project, getenv)
}

// CheckSeamMode says what is wrong with a [sandbox] mode value.
func CheckSeamMode(mode string) error {
	if mode == "container" {
		return fmt.Errorf(`"container" is not a mode of the [sandbox] table: sandbox mode (the machine is disposable) is a property of a run, given only by nodwyn run --sandbox container; [sandbox] mode chooses how commands run: "no_sandbox" or "working_copy"`)
	}
	for _, m := range SeamModes {
		if mode == m {
			return nil
		}
	}
	return fmt.Errorf(`%q is not a mode: write "no_sandbox" (commands run in the folder) or "working_copy" (each command runs in a copy of the checkout)`, mode)
}

// checkType says what is wrong when a value does not fit its field.
func checkType(l leaf, v any) error {
	want := ""
	ok := true
	switch {
	case l.typ == reflect.TypeFor[Duration]():
		_, ok = v.(string)
		want = `a string such as "30m"`
	case l.typ.Kind() == reflect.String:
		_, ok = v.(string)
		want = "a string"
	case l.typ.Kind() == reflect.Int:
		n, isInt := v.(int64)
		ok = isInt && n >= 0
		want = "a whole number, 0 or more"
	case l.typ.Kind() == reflect.Bool:
		_, ok = v.(bool)
		want = "true or false"
	case l.typ == reflect.TypeFor[[]string]():
		vs, isList := v.([]any)
		ok = isList
		for _, e := range vs {
			if _, isStr := e.(string); !isStr {
				ok = false
			}
		}
		want = `a list of strings, as ["~/.config/tool/token"]`
	case l.typ.Kind() == reflect.Float64:
		switch n := v.(type) {
		case int64:
			ok = n >= 0
		case float64:
			ok = n >= 0
		default:
			ok = false
		}
		want = "a number, 0 or more"
	}
	if !ok {
		return fmt.Errorf("value %s: want %s", shortValue(v), want)
	}
	return nil
}

func shortValue(v any) string {
	s := fmt.Sprintf("%#v", v)
	if s2, ok := v.(string); ok {
		s = fmt.Sprintf("%q", s2)
	}
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// lookup returns the value at a key path in a decoded document.
func lookup(m map[string]any, k toml.Key) any {
	var cur any = m
	for _, part := range k {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[part]
	}
	return cur
}

// parseError turns a toml error into an *Error naming the file. The line and
// column are counted from the error's byte offset (the parser reports an error
// at a line's end on the next line). The last key parsed is given as the key
// when it is on that line, else as context.
func parseError(path, text string, lines lineIndex, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return &Error{File: path, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
	}
	e := &Error{File: path, Line: pe.Position.Line, Col: pe.Position.Col, Msg: pe.Message}
	if s := pe.Position.Start; s > 0 && s <= len(text) {
		before := text[:s]
		e.Line = strings.Count(before, "\n") + 1
		e.Col = s - strings.LastIndexByte(before, '\n')
	}
	if pe.LastKey != "" {
		if lines.find(pe.LastKey) == e.Line {
			e.Key = pe.LastKey
		} else {
			e.Msg += fmt.Sprintf(" (after key %s)", pe.LastKey)
		}
	}
	if pe.Usage != "" {
		e.Msg += "; " + strings.Join(strings.Fields(pe.Usage), " ")
	}
	return e
}

// lineIndex maps dotted keys to the line that defines them.
type lineIndex map[string]int

// find returns the line of key, or of its longest defined prefix, or 0.
func (li lineIndex) find(key string) int {
	for k := key; k != ""; {
		if n, ok := li[k]; ok {
			return n
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

// keyLines scans a TOML text for table headers and key/value lines. It is
// only used to point at a line in a message; the text has already parsed.
func keyLines(text string) lineIndex {
	li := lineIndex{}
	table := ""
	inMulti := ""
	set := func(key string, line int) {
		if _, ok := li[key]; !ok {
			li[key] = line
		}
	}
	for n, line := range strings.Split(text, "\n") {
		lineNo := n + 1
		if inMulti != "" {
			if strings.Count(line, inMulti)%2 == 1 {
				inMulti = ""
			}
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		if t[0] == '[' {
			h := strings.TrimLeft(t, "[")
			if i := strings.IndexByte(h, ']'); i >= 0 {
				h = h[:i]
			}
			table = joinKey(splitKey(h))
			set(table, lineNo)
			continue
		}
		eq := indexOutsideQuotes(t, '=')
		if eq < 0 {
			continue
		}
		parts := splitKey(t[:eq])
		prefix := table
		for _, p := range parts {
			if prefix != "" {
				prefix += "."
			}
			prefix += quoteKey(p)
			set(prefix, lineNo)
		}
		rest := t[eq+1:]
		for _, q := range []string{`"""`, `'''`} {
			if strings.Count(rest, q)%2 == 1 {
				inMulti = q
				break
			}
		}
	}
	return li
}

func indexOutsideQuotes(s string, c byte) int {
	var q byte
	for i := 0; i < len(s); i++ {
		switch {
		case q != 0:
			if s[i] == '\\' && q == '"' {
				i++
			} else if s[i] == q {
				q = 0
			}
		case s[i] == '"' || s[i] == '\'':
			q = s[i]
		case s[i] == c:
			return i
		}
	}
	return -1
}

// splitKey splits a dotted key into its parts, unquoting quoted ones.
func splitKey(s string) []string {
	var parts []string
	for {
		s = strings.TrimSpace(s)
		i := indexOutsideQuotes(s, '.')
		part := s
		if i >= 0 {
			part = s[:i]
		}
		part = strings.TrimSpace(part)
		if len(part) >= 2 && (part[0] == '"' || part[0] == '\'') && part[len(part)-1] == part[0] {
			part = part[1 : len(part)-1]
		}
		parts = append(parts, part)
		if i < 0 {
			return parts
		}
		s = s[i+1:]
	}
}

func joinKey(parts []string) string {
	k := make(toml.Key, len(parts))
	copy(k, parts)
	return k.String()
}

func quoteKey(p string) string { return toml.Key{p}.String() }

// DefaultKeyEnv is the environment variable that holds a provider's key when
// provider.key_env is not set: OPENAI_API_KEY or ANTHROPIC_API_KEY.
func DefaultKeyEnv(provider string) string {
	switch provider {
	case "openai":
		return "OPENAI_API_KEY"
	case "anthropic":
		return "ANTHROPIC_API_KEY"
	}
	return ""
}

// CredentialsPath is the credentials file in the configuration directory.
func CredentialsPath(dirs Dirs) string {
	return filepath.Join(dirs.Config, "credentials.toml")
}

// APIKey returns the key for provider: the environment variable keyEnv (or
// [DefaultKeyEnv] when keyEnv is ""), else the provider's entry in
// <config>/credentials.toml:
//
//	[keys]
//	openai = "sk-..."
//
// else the file $CREDENTIALS_DIRECTORY/<provider>, where a service manager
// puts the credentials it was told to load (systemd's
// LoadCredential=openai:/path/to/key), its whitespace trimmed.
//
// Nothing in the project folder is consulted, and no credentials.toml when
// dirs.Config is not an absolute path. It returns "" and no error when there
// is no key. A malformed credentials file is an [*Error] that names the
// file, line and key but never shows a value.
func APIKey(dirs Dirs, provider, keyEnv string, getenv func(string) string) (string, error) {
	key, _, err := APIKeyWhere(dirs, provider, keyEnv, getenv)
	return key, err
}

// APIKeyWhere is [APIKey] that also says where the key was found, never
// what it is: "$OPENAI_API_KEY", "/home/me/.config/nodwyn/credentials.toml
// ([keys] openai)" or "/run/credentials/nodwyn.service/openai
// ($CREDENTIALS_DIRECTORY/openai)"; "" when there is none.
func APIKeyWhere(dirs Dirs, provider, keyEnv string, getenv func(string) string) (key, where string, err error) {
	if keyEnv == "" {
		keyEnv = DefaultKeyEnv(provider)
	}
	if keyEnv != "" {
		if v := strings.TrimSpace(getenv(keyEnv)); v != "" {
			return v, "$" + keyEnv, nil
		}
	}
	if provider == "" {
		return "", "", nil
	}
	key, err = credentialsFileKey(dirs, provider)
	if err != nil {
		return "", "", err
	}
	if key != "" {
		return key, fmt.Sprintf("%s ([keys] %s)", CredentialsPath(dirs), provider), nil
	}
	return credentialsDirectoryKey(provider, getenv)
}

// credentialsDirectoryKey reads $CREDENTIALS_DIRECTORY/<provider>.
func credentialsDirectoryKey(provider string, getenv func(string) string) (key, where string, err error) {
	dir := getenv("CREDENTIALS_DIRECTORY")
	if dir == "" || provider == "." || provider == ".." || strings.ContainsAny(provider, "/\\\x00") {
		return "", "", nil
	}
	if !filepath.IsAbs(dir) {
		// A service manager sets an absolute one; a relative one would be
		// read from the working directory, which may be the project.
		return "", "", fmt.Errorf("$CREDENTIALS_DIRECTORY is %q, not an absolute path: unset it, or give the directory a service manager made (systemd's LoadCredential= sets it)", dir)
	}
	path := filepath.Join(dir, provider)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("read credential %s ($CREDENTIALS_DIRECTORY/%s): %w", path, provider, err)
	}
	key = strings.TrimSpace(string(data))
	if key == "" {
		return "", "", nil
	}
	return key, fmt.Sprintf("%s ($CREDENTIALS_DIRECTORY/%s)", path, provider), nil
}

// credentialsFileKey reads the provider's entry in <config>/credentials.toml.
func credentialsFileKey(dirs Dirs, provider string) (string, error) {
	if !filepath.IsAbs(dirs.Config) {
		// A relative configuration directory (no HOME) would be resolved
		// against the working directory, which may be the project.
		return "", nil
	}
	path := CredentialsPath(dirs)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read credentials %s: %w", path, err)
	}
	var cred struct {
		Keys map[string]any `toml:"keys"`
	}
	md, err := toml.Decode(string(data), &cred)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// The message may quote the text; a key file's text stays out of it.
			return "", &Error{File: path, Line: pe.Position.Line, Col: pe.Position.Col, Key: pe.LastKey, Msg: "malformed TOML; the file holds [keys] with lines such as openai = \"...\""}
		}
		return "", &Error{File: path, Msg: "malformed; the file holds [keys] with lines such as openai = \"...\""}
	}
	lines := keyLines(string(data))
	for _, k := range md.Undecoded() {
		if k[0] != "keys" {
			return "", &Error{File: path, Line: lines.find(k.String()), Key: k.String(), Msg: "unknown key; the file holds only [keys] with lines such as openai = \"...\""}
		}
	}
	v, ok := cred.Keys[provider]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		k := "keys." + quoteKey(provider)
		return "", &Error{File: path, Line: lines.find(k), Key: k, Msg: "want a string"}
	}
	return strings.TrimSpace(s), nil
}

// DefaultInitSteps and DefaultInitMemoryMB are the bounds [limits]
// init_steps and init_memory_mb default to: procedure calls per init file
// and per Scheme tool call (a few seconds), and heap growth.
const (
	DefaultInitSteps    = 50_000_000
	DefaultInitMemoryMB = 256
)

// limitKeys are [limits]' keys, each with what "unset" (0) means: def, or
// no limit when def is 0.
var limitKeys = []struct {
	key  string
	def  int64
	get  func(*Limits) int64
	set  func(*Limits, int64)
	show func(int64) string
}{
	{"limits.max_tool_calls", 0, func(l *Limits) int64 { return int64(l.MaxToolCalls) }, func(l *Limits, v int64) { l.MaxToolCalls = int(v) }, showCount},
	{"limits.timeout", 0, func(l *Limits) int64 { return int64(l.Timeout) }, func(l *Limits, v int64) { l.Timeout = Duration(v) }, func(v int64) string {
		if v <= 0 {
			return "none"
		}
		return Duration(v).String()
	}},
	{"limits.init_steps", DefaultInitSteps, func(l *Limits) int64 { return int64(l.InitSteps) }, func(l *Limits, v int64) { l.InitSteps = int(v) }, showCount},
	{"limits.init_memory_mb", DefaultInitMemoryMB, func(l *Limits) int64 { return int64(l.InitMemoryMB) }, func(l *Limits, v int64) { l.InitMemoryMB = int(v) }, showCount},
}

func showCount(v int64) string {
	if v <= 0 {
		return "unset"
	}
	return strconv.FormatInt(v, 10)
}

// limitValue is the limit v (0: unset) stands for: def when unset, and
// no limit at all (the largest value) when def is 0 too.
func limitValue(v, def int64) int64 {
	if v <= 0 {
		v = def
	}
	if v <= 0 {
		return math.MaxInt64
	}
	return v
}

// keep remembers what *p holds now and returns what puts it back.
func keep[T any](p *T) func() {
	v := *p
	return func() { *p = v }
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/egress"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/journal"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/mcp"
	"github.com/nodwyn/nodwyn/internal/prim"
	"github.com/nodwyn/nodwyn/internal/sandbox"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/termtext"
)

// DoctorCmd is `nodwyn doctor`.
type DoctorCmd struct {
	Folder string `short:"C" name:"folder" default:"." help:"The folder a run would work in: the project's trusted .nodwyn/config.toml is found and read as a run reads it."`
}

// Help says what doctor prints.
func (DoctorCmd) Help() string {
	return `Prints what a person needs to see why a run behaves as it does, and
changes nothing (except that it reads the trust record):

  version            this binary's version
  config, data       the directories (XDG_CONFIG_HOME, XDG_DATA_HOME)
  config sources     the config files read, in order (a later one wins), and
                     the environment; then every key that is set, its value
                     and where it came from (file:line or env NAME)
  project            where the project's .nodwyn/ is (the folder's, else the
                     nearest above it up to the git work tree's root; where
                     it looked when there is none), and whether its files
                     are trusted and read
  provider           name, model and base_url as a run would use them
  api key            whether one is found, and where (the variable's name or
                     credentials.toml); never the key
  key in a parent    for a key from the environment: whether a process above
                     this one (its parent, theirs …, as this user) was started
                     with it, so that /proc/PID/environ shows it to every
                     program of the same user; which one, and where else the
                     key can be kept
  git, shell         the programs the tools run
  journal key        the fingerprint of this machine's journal key, which
                     signs the self-checks (nodwyn journal verify)
  sandbox            how commands run (the execution seam) and what that
                     contains
  kernel floor       whether Landlock denies the credential directories to
                     every command (the ABI, the paths), or why not
  key in /proc       whether a secret-looking variable is still in
                     /proc/PID/environ, where the programs nodwyn runs could
                     read it
  CA roots           where the TLS roots for an https:// endpoint come from
  mcp servers        each MCP server declared ([mcp.servers.NAME]), started
                     as a run starts it and stopped: transport, state, tools,
                     time to ready, and why one failed (nodwyn mcp list)

Flags of 'nodwyn run' (--provider, --model …) are not applied: doctor shows
what the files and the environment choose.`
}

// Run prints the report. Problems it finds (a config file that does not
// parse, a key file with the wrong mode) are lines of the report, not its
// end; it exits 1 when there was one, so a script can tell.
func (c *DoctorCmd) Run(e *env) error {
	home, _ := os.UserHomeDir()
	dirs := config.ResolveDirs(e.getenv, home)
	w := e.stdout
	problems := 0
	bad := func(format string, a ...any) {
		problems++
		fmt.Fprintf(w, format+"\n", a...)
	}
	fmt.Fprintf(w, "version: nodwyn %s\n", Version)
	fmt.Fprintf(w, "config: %s\n", dirs.Config)
	fmt.Fprintf(w, "data: %s\n", dirs.Data)

	folder, err := filepath.Abs(c.Folder)
	if err != nil {
		return usageErr("--folder: %v", err)
	}
	var project []byte
	// Where the project's .nodwyn/ is: the folder's, else the nearest
	// above it in its git work tree, as a run looks; where it looked when
	// there is none.
	projectDir, looked := config.FindProject(folder)
	where, none := folder, ""
	if _, err := os.Lstat(filepath.Join(projectDir, ".nodwyn")); err != nil {
		if _, err := os.Lstat(filepath.Join(looked[len(looked)-1], ".git")); err == nil {
			none = fmt.Sprintf("no .nodwyn/ (looked in %s, up to the git work tree's root)", strings.Join(looked, ", "))
		} else {
			none = "no .nodwyn/ (looked in the folder only: it is in no git work tree)"
		}
	} else if projectDir != folder {
		where = fmt.Sprintf("%s (found from %s)", projectDir, folder)
	}
	if pt, err := launch.TrustedProject(dirs, folder); err != nil {
		bad("project: %s: %v", where, err)
	} else {
		project = pt.Config
		switch {
		case pt.Note != "":
			fmt.Fprintf(w, "project: %s: %s\n", where, pt.Note)
		case none != "":
			fmt.Fprintf(w, "project: %s: %s\n", where, none)
		case project == nil:
			fmt.Fprintf(w, "project: %s: no .nodwyn/config.toml\n", where)
		default:
			fmt.Fprintf(w, "project: %s: trusted, its config.toml is read\n", where)
		}
	}
	cfg, err := config.LoadWith(dirs, folder, project, e.getenv)
	if err != nil {
		bad("config sources: %v", err)
		cfg = &config.Config{Origin: map[string]string{}}
	} else if len(cfg.Sources) == 0 {
		fmt.Fprintf(w, "config sources: no config file (%s does not exist); the defaults and the environment\n", filepath.Join(dirs.Config, "config.toml"))
	} else {
		fmt.Fprintf(w, "config sources: %s, then the environment\n", strings.Join(cfg.Sources, ", "))
	}
	printSettings(w, cfg)
	for _, n := range cfg.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}

	p := cfg.Provider
	switch p.Name {
	case "":
		fmt.Fprintln(w, "provider: none chosen (a run needs --provider, --script, or [provider] name in config.toml)")
	default:
		base := shownValue(p.BaseURL)
		if base == "" {
			base = "(the provider's default)"
		}
		fmt.Fprintf(w, "provider: %s, model %s, base_url %s\n", p.Name, orNone(p.Model), base)
	}
	if p.Name == "openai" || p.Name == "anthropic" {
		line, f := keyWhere(dirs, p, e.getenv)
		fmt.Fprintln(w, "api key: "+line)
		if name, ok := strings.CutPrefix(f.Where, "$"); ok && f.Key != "" {
			fmt.Fprintln(w, "key in a parent: "+parentsLine(name, f.Key, dirs, p.Name))
		}
	}

	if path, err := exec.LookPath("git"); err != nil {
		fmt.Fprintln(w, "git: not found on PATH (the git tools and the working copy of a git checkout need it)")
	} else {
		out, _ := exec.Command(path, "--version").Output()
		fmt.Fprintf(w, "git: %s (%s)\n", path, strings.TrimSpace(string(out)))
	}
	fmt.Fprintln(w, "shell: "+shellLine(e.getenv))

	switch key, err := journal.LoadKey(dirs.Data); {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(w, "journal key: none yet (%s is made by the first self-check)\n", journal.KeyPath(dirs.Data))
	case err != nil:
		bad("journal key: %v", err)
	default:
		fmt.Fprintf(w, "journal key: %s (%s)\n", journal.Fingerprint(key.Public()), key.Path())
	}

	fmt.Fprintln(w, "sandbox: "+sandboxLine(cfg, folder))
	fmt.Fprintln(w, "kernel floor: "+floorLine(e, home, dirs, folder))
	fmt.Fprint(w, confinementLines(e, cfg, home, folder))
	if name := secretInProc(); name != "" {
		bad("key in /proc: %s is in /proc/%d/environ, which the programs nodwyn runs can read (the re-exec that moves secrets out of the environment failed)", name, os.Getpid())
	} else {
		fmt.Fprintf(w, "key in /proc: no secret-looking variable in /proc/%d/environ (nodwyn moves them out of its environment as it starts)\n", os.Getpid())
	}
	fmt.Fprintln(w, "CA roots: "+caRootsLine(e.getenv))
	if len(cfg.MCP.Servers) > 0 {
		if failed, err := doctorMCP(w, cfg, dirs, folder, project != nil, e.getenv); err != nil {
			bad("mcp servers: %s", termtext.Line(err.Error()))
		} else if failed > 0 {
			problems++
		}
	} else {
		fmt.Fprintln(w, "mcp servers: none declared ([mcp.servers.NAME] in config.toml)")
	}
	if problems > 0 {
		return &exitError{code: ExitFailed}
	}
	return nil
}

// doctorMCPBound bounds the whole probe of doctor's "mcp servers:" lines,
// beyond the servers' own init_timeout.
const doctorMCPBound = 30 * time.Second

// doctorMCP starts the declared servers as a run in folder would
// (nodwyn mcp list's probe), prints a line for each, and stops them.
func doctorMCP(w io.Writer, cfg *config.Config, dirs config.Dirs, folder string, trusted bool, getenv func(string) string) (failed int, err error) {
	contract, given, err := launch.LoadContract("", folder)
	if err != nil {
		contract, given = nil, false // the sandbox line says what is wrong with it
	}
	opts := session.Options{Folder: folder, Dirs: dirs, Getenv: getenv} // the hidden variables too: the catalogue reads them
	launch.ConfigOptions(&opts, cfg, contract, given, trusted)
	ctx, cancel := context.WithTimeout(context.Background(), doctorMCPBound)
	defer cancel()
	statuses, tools, err := session.ProbeMCP(ctx, opts)
	if err != nil {
		return 0, err
	}
	ready := len(statuses)
	for _, st := range statuses {
		if st.State != mcp.StateReady {
			ready--
		}
	}
	fmt.Fprintf(w, "mcp servers: %d declared, %d ready (started as a run starts them, then stopped; nodwyn mcp list -v lists their tools)\n", len(statuses), ready)
	return printMCP(w, "  ", cfg, statuses, tools, false), nil
}

// sandboxLine says how commands run and what that contains, for the
// "sandbox:" line: the [sandbox] settings of the configuration and of the
// folder's contract, resolved as a run resolves them (a profile's sandbox
// setting, which only a run's Scheme knows, may still choose a working
// copy).
func sandboxLine(cfg *config.Config, folder string) string {
	layers := []config.SeamLayer{{Source: cfg.Origin["sandbox.mode"], Seam: cfg.Sandbox, MayUndo: true}}
	extra := ""
	if c, err := config.LoadContract(config.ProjectContract(folder), true); err != nil {
		extra = "; the contract: " + err.Error()
	} else if c != nil {
		src := c.Path
		if c.SandboxLine > 0 {
			src = fmt.Sprintf("%s:%d", c.Path, c.SandboxLine)
		}
		layers = append(layers, config.SeamLayer{Source: src, Seam: c.Sandbox})
		extra = fmt.Sprintf("; contract %s with %d check(s)", c.Path, len(c.Checks))
	}
	seam, from, _ := config.ResolveSeam(layers)
	if from == "" {
		from = "the default"
	}
	return sandbox.CapsOf(sandbox.Mode(seam.Mode)).String() + " from " + from + extra + "; not sandbox mode, which only nodwyn run --sandbox container sets"
}

// floorLine is the kernel floor a run in folder would have: on, with the
// Landlock ABI and what it denies, or off and why.
func floorLine(e *env, home string, dirs config.Dirs, folder string) string {
	d := guard.NewPathDenylist(guard.Options{Folder: folder, Home: home, ConfigDir: dirs.Config, DataDir: dirs.Data,
		CredentialsDir: e.getenv("CREDENTIALS_DIRECTORY"), Getenv: e.getenv})
	f, err := sandbox.NewFloor(d.Dirs, nil)
	if err != nil {
		return "off (" + err.Error() + "); a run says so in its first line, and the guard alone stands between commands and the credential directories"
	}
	var there []string
	for _, p := range f.Denied() {
		if _, err := os.Lstat(p); err == nil {
			there = append(there, p)
		}
	}
	s := f.String() + "; --no-kernel-floor turns it off for one run"
	if len(there) > 0 {
		s += "\n  denied now (they exist): " + strings.Join(there, ", ")
	}
	return s
}

// secretInProc is the name of a secret-looking variable in this process's
// /proc/PID/environ (what a child could read), or "": one CleanEnvironment
// would have hidden, by its name or its value.
func secretInProc() string {
	b, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return ""
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if name, value, ok := strings.Cut(kv, "="); ok && hidden(name, value) {
			return name
		}
	}
	return ""
}

// parentsLine is the "key in a parent:" line for a key found in the
// variable name: the processes above this one that hold it (parentsHolding)
// and where else the key can be kept, or that none does.
func parentsLine(name, key string, dirs config.Dirs, provider string) string {
	held := parentsHolding(name, key, "/proc", os.Getppid(), os.Getuid())
	if len(held) == 0 {
		return fmt.Sprintf("no process above this one holds $%s in the environment it was started with", name)
	}
	return fmt.Sprintf("$%s is in the environment %s was started with, and any program running as you (a command nodwyn runs included) can read it in /proc/PID/environ for as long as it runs; unsetting it there does not take it out. "+
		"Keep the key where no process's environment holds it: the system keychain ('nodwyn login %s'), or %s under [keys] (mode 0600)",
		name, strings.Join(held, ", "), provider, config.CredentialsPath(dirs))
}

// parentsHolding walks from pid (this process's parent) up to pid 1 and
// names, as "comm (pid N)", each process of uid whose /proc/PID/environ —
// the environment it was started with, which export and unset in a shell
// do not change — has name=key. A process of another user, or one whose
// environ cannot be read, is passed over: a program of this user cannot
// read it either.
func parentsHolding(name, key, proc string, pid, uid int) []string {
	var held []string
	for seen := 0; pid > 0 && seen < 256; seen++ {
		dir := filepath.Join(proc, strconv.Itoa(pid))
		status, err := os.ReadFile(filepath.Join(dir, "status"))
		if err != nil {
			break
		}
		ppid, owner := -1, -1
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "PPid:"); ok {
				ppid, _ = strconv.Atoi(strings.TrimSpace(v))
			} else if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					owner, _ = strconv.Atoi(f[0])
				}
			}
		}
		if owner == uid && environHas(filepath.Join(dir, "environ"), name, key) {
			comm, _ := os.ReadFile(filepath.Join(dir, "comm"))
			held = append(held, fmt.Sprintf("%s (pid %d)", strings.TrimSpace(string(comm)), pid))
		}
		if pid == 1 {
			break
		}
		pid = ppid
	}
	return held
}

// environHas reports whether the environ file at path has an entry name=
// whose value is key (as the key was found: space around it trimmed).
func environHas(path, name, key string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok && strings.TrimSpace(v) == key {
			return true
		}
	}
	return false
}

// shownValue is s as doctor prints a setting: a URL's password replaced
// with xxxxx, any other secret-shaped value (prim.SecretValue) not at all.
func shownValue(s string) string {
	if !prim.SecretValue(s) {
		return s
	}
	if u, err := url.Parse(strings.TrimSpace(s)); err == nil && u.User != nil {
		bare := *u
		bare.User = nil
		if !prim.SecretValue(bare.String()) { // the password was the secret
			return u.Redacted()
		}
	}
	return "(not shown: it holds a secret)"
}

// caRootsLine says where the TLS roots come from, as Go's crypto/x509 looks
// for them on Linux.
func caRootsLine(getenv func(string) string) string {
	if f := getenv("SSL_CERT_FILE"); f != "" {
		return f + " (SSL_CERT_FILE)"
	}
	if d := getenv("SSL_CERT_DIR"); d != "" {
		return d + " (SSL_CERT_DIR)"
	}
	for _, f := range []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
		"/etc/pki/tls/cacert.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/cert.pem"} {
		if fi, err := os.Stat(f); err == nil && fi.Size() > 0 {
			return f + " (the system's)"
		}
	}
	return "none found: an https:// endpoint will fail to verify (set SSL_CERT_FILE)"
}

// printSettings prints each key that is set, its value and its origin.
func printSettings(w io.Writer, cfg *config.Config) {
	keys := make([]string, 0, len(cfg.Origin))
	for k := range cfg.Origin {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	values := settingValues(reflect.ValueOf(cfg.File), "")
	for _, k := range keys {
		if name, ok := strings.CutPrefix(k, "mcp.servers."); ok {
			// A server (its name needs no quotes): what it runs, its env
			// and headers by name only.
			fmt.Fprintf(w, "  %s = %s  (%s)\n", k, termtext.Line(cfg.MCP.Servers[name].Declared(false)), cfg.Origin[k])
			continue
		}
		fmt.Fprintf(w, "  %s = %s  (%s)\n", k, values[k], cfg.Origin[k])
	}
}

// settingValues maps each dotted toml key of v (a config.File) to its value
// as TOML would write it.
func settingValues(v reflect.Value, prefix string) map[string]string {
	out := map[string]string{}
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		key := prefix + f.Tag.Get("toml")
		if _, text := fv.Interface().(fmt.Stringer); f.Type.Kind() == reflect.Struct && !text {
			for k, s := range settingValues(fv, key+".") {
				out[k] = s
			}
			continue
		}
		switch x := fv.Interface().(type) {
		case string:
			out[key] = fmt.Sprintf("%q", shownValue(x))
		case fmt.Stringer:
			out[key] = fmt.Sprintf("%q", x.String())
		default:
			out[key] = fmt.Sprint(x)
		}
	}
	return out
}

// keyWhere says whether the provider's key is found and where, never what:
// where a run would look, in its order (findKey), the system keychain too.
// It returns what it found as well.
func keyWhere(dirs config.Dirs, p config.Provider, getenv func(string) string) (string, launch.KeyFound) {
	env := p.KeyEnv
	if env == "" {
		env = config.DefaultKeyEnv(p.Name)
	}
	f, err := launch.FindKey(dirs, p.Name, p.KeyEnv, getenv, false)
	switch {
	case err != nil:
		return fmt.Sprintf("not read: %v", err), launch.KeyFound{}
	case f.Key != "":
		return "found in " + f.Where, f
	}
	keychainNote := ""
	if f.NoKeychain != "" {
		keychainNote = " (not here: " + f.NoKeychain + ")"
	}
	return fmt.Sprintf("not found: set %s, or put it in the system keychain with 'nodwyn login %s'%s, in $CREDENTIALS_DIRECTORY/%s, or in %s under [keys]",
		env, p.Name, keychainNote, p.Name, config.CredentialsPath(dirs)), f
}

// shellLine names the shell the tools run commands with (bash, else sh, as
// package prim chooses) and the person's $SHELL.
func shellLine(getenv func(string) string) string {
	sh := ""
	for _, name := range []string{"bash", "sh"} {
		if p, err := exec.LookPath(name); err == nil {
			sh = p
			break
		}
	}
	if sh == "" {
		sh = "/bin/sh (neither bash nor sh is on PATH)"
	}
	return fmt.Sprintf("%s runs the commands (-c); $SHELL is %s", sh, orNone(getenv("SHELL")))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// confinementLines say, one line each, how a run in folder outside sandbox
// mode would confine its commands: reads, writes, processes, network (as
// the run's first lines do; docs/sandbox.md).
func confinementLines(e *env, cfg *config.Config, home, folder string) string {
	var b strings.Builder
	fmt.Fprintln(&b, "confinement of a run here (outside sandbox mode; sandbox mode confines reads only):")
	if _, err := sandbox.LandlockABI(); err != nil {
		fmt.Fprintf(&b, "  reads, writes: open (no kernel floor: %v)\n", err)
	} else {
		fmt.Fprintln(&b, "  reads: nodwyn's credential catalogue is denied to every command (Landlock)")
		fmt.Fprintf(&b, "  writes: %s (Landlock); changes to .git/config, .git/hooks and .nodwyn/ are undone after each command; [sandbox] writable or --writable widens it\n",
			session.WritesLine(folder, home, cfg.Sandbox.Writable))
	}
	net := cfg.Sandbox.Network != "open"
	var ns *sandbox.SessionNS
	var nsErr error
	if cfg.Sandbox.Namespaces == "off" {
		nsErr = fmt.Errorf("[sandbox] namespaces = \"off\" in %s", cfg.Origin["sandbox.namespaces"])
	} else {
		ns, nsErr = sandbox.NewSessionNS(net)
	}
	how := sandbox.NewHost(sandbox.HostOptions{}).Confinement()
	switch {
	case nsErr == nil:
		ns.Close()
		fmt.Fprintf(&b, "  processes: a PID namespace of the session's own: commands see no other process, and all they start ends with the session (%s)\n", how)
	default:
		fmt.Fprintf(&b, "  processes: all commands start ends with the session (%s); other processes are visible (%v)\n", how, nsErr)
	}
	switch {
	case !net:
		fmt.Fprintf(&b, "  network: open ([sandbox] network = \"open\" in %s)\n", cfg.Origin["sandbox.network"])
	case nsErr != nil:
		fmt.Fprintf(&b, "  network: %s\n", session.LandlockNetworkLine(nsErr, cfg.Sandbox.AllowPorts))
	default:
		allow, _ := egress.Defaults(context.Background(), folder, os.Environ())
		var hosts []string
		for _, r := range allow {
			hosts = append(hosts, r.Pattern)
		}
		hosts = append(hosts, cfg.Sandbox.AllowHosts...)
		if len(hosts) == 0 {
			hosts = []string{"no host yet"}
		}
		fmt.Fprintf(&b, "  network: only through nodwyn's proxy (a network namespace holds only loopback), which allows %s; [sandbox] allow_hosts adds hosts\n", strings.Join(hosts, ", "))
	}
	return b.String()
}

package launch

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/keychain"
	"github.com/nodwyn/nodwyn/internal/mcp"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/termtext"
	"github.com/nodwyn/nodwyn/internal/trust"
)

// ProjectTrust decides which project files a run loads: the project's
// config.toml and Scheme files when they are all trusted (or the person
// says yes at the terminal, or the run says --trust-project); nothing of
// the project's otherwise. An unattended run with untrusted files stops
// (exit 2) before any model call. The bytes are the ones that were
// hashed: the files are never read a second time.
type ProjectTrust struct {
	Config []byte
	Scheme map[string][]byte
	Note   string // said on stderr before the run (why the project's files were or were not loaded)
	// Trusted: the project has files trust judges and the person trusted
	// them (recorded, or --trust-project for this run); false when it has
	// none, so a project with only a contract.toml is not the person's.
	Trusted bool
}

// TrustRecord is the path of the trust record.
func TrustRecord(dirs config.Dirs) string { return filepath.Join(dirs.Data, "trust.json") }

// OpenTrust opens the trust record.
func OpenTrust(dirs config.Dirs) (*trust.Store, error) {
	if !filepath.IsAbs(dirs.Data) {
		return nil, usageErr("no data directory for the trust record: set HOME or XDG_DATA_HOME")
	}
	st, err := trust.Open(TrustRecord(dirs))
	if err != nil {
		return nil, usageErr("%v\n(fix or remove %s; then trust your projects again with: nodwyn trust -C DIR)", err, TrustRecord(dirs))
	}
	return st, nil
}

// CheckProjectTrust judges the project's files of folder: trustFlag is
// --trust-project, unattended says nobody may be asked, ask asks the
// person (nil: nobody can).
func CheckProjectTrust(dirs config.Dirs, folder string, trustFlag, unattended bool, ask func(*trust.Store, *trust.Project) bool) (ProjectTrust, error) {
	st, err := OpenTrust(dirs)
	if err != nil {
		return ProjectTrust{}, err
	}
	// The project's .nodwyn/ is the folder's, else the nearest one above
	// it in its git work tree (config.FindProject).
	p, err := st.Check(config.ProjectDir(folder))
	if err != nil {
		return ProjectTrust{}, usageErr("%v", err)
	}
	bad := p.Untrusted()
	load := ProjectTrust{Config: p.Config(), Scheme: p.Scheme(), Trusted: len(p.Files) > 0}
	if len(bad) == 0 {
		return load, nil
	}
	// The note and the error are said on the terminal: the names escaped.
	var names []string
	for _, f := range bad {
		names = append(names, fmt.Sprintf("%s (%s)", termtext.Line(f.Path), f.Status))
	}
	list := strings.Join(names, ", ")
	shown := termtext.Line(p.Folder)
	switch {
	case trustFlag:
		load.Note = "loading the project's untrusted files for this run only (--trust-project): " + list
		return load, nil
	case unattended || ask == nil:
		return ProjectTrust{}, usageErr("the project's files are not trusted: %s\nnothing was sent to the model. Read them, then trust them with:\n  nodwyn trust -C %s\nor load them for this run only with --trust-project", list, shown)
	}
	if ask(st, p) {
		if err := st.Trust(p); err != nil {
			return ProjectTrust{}, &Error{Kind: Failed, Err: fmt.Errorf("recording trust in %s: %w", st.Path(), err)}
		}
		load.Note = fmt.Sprintf("trusted %s's project files (recorded in %s)", shown, st.Path())
		load.Trusted = true
		return load, nil
	}
	return ProjectTrust{Note: fmt.Sprintf("the project's .nodwyn/ files are not loaded: not trusted: %s (trust them with: nodwyn trust -C %s)", list, shown)}, nil
}

// TrustedProject is the project's files when they are trusted, else none
// (with a note saying so): for the commands that ask nobody.
func TrustedProject(dirs config.Dirs, folder string) (ProjectTrust, error) {
	return CheckProjectTrust(dirs, folder, false, false, func(*trust.Store, *trust.Project) bool { return false })
}

// MCPServers are the MCP servers cfg declares, as a session takes them,
// in the order of their names.
func MCPServers(cfg *config.Config) []session.MCPServer {
	var out []session.MCPServer
	for _, name := range cfg.MCPServerNames() {
		s := cfg.MCP.Servers[name]
		out = append(out, session.MCPServer{
			Server: mcp.Server{
				Name: name, Command: s.Command, Args: s.Args, Env: s.Env,
				URL: s.URL, Headers: s.Headers,
			},
			Allow: s.Allow, AllowTools: s.AllowTools,
			Origin:      cfg.Origin[config.MCPServerKey(name)],
			InitTimeout: s.InitTimeout.Std(),
		})
	}
	return out
}

// ConfigOptions sets in opts what the configuration decides of a session
// besides the model: how commands run (the execution seam, which the MCP
// servers share), what was not taken, the contract, and the MCP servers.
// A run, nodwyn mcp list and doctor all assemble it here, so that the
// servers a probe starts are started as a run starts them.
func ConfigOptions(opts *session.Options, cfg *config.Config, contract *config.Contract, contractGiven, projectTrusted bool) {
	opts.ConfigSeam, opts.ConfigSeamFrom, opts.ConfigNotes = cfg.Sandbox, cfg.Origin["sandbox.mode"], cfg.Notes
	opts.ConfigSeamAllowFrom, opts.ConfigSeamNetworkFrom = cfg.Origin["sandbox.allow_hosts"], cfg.Origin["sandbox.network"]
	opts.ConfigSeamNamespacesFrom = cfg.Origin["sandbox.namespaces"]
	opts.Contract, opts.ContractGiven, opts.ContractTrusted = contract, contractGiven, projectTrusted
	opts.MCP = MCPServers(cfg)
	// What ${NAME} took from the environment is a key: redacted wherever
	// it would be shown or logged, as the provider's is.
	opts.Secrets = append(opts.Secrets, secretsOf(cfg.Secrets...)...)
}

// KeyFound is where a run's key was found.
type KeyFound struct {
	Key   string
	Where string // "$OPENAI_API_KEY", "/…/credentials.toml ([keys] openai)", …; never the key
	// NoKeychain says why the keychain had nothing to give when no key was
	// found: it was not to be asked (--no-keychain), or there is none here
	// (keychain.ErrUnavailable). "" when it was asked and had none.
	NoKeychain string
}

// FindKey looks for provider's key where a run does, in this order: the
// environment (keyEnv, else OPENAI_API_KEY or ANTHROPIC_API_KEY),
// credentials.toml, $CREDENTIALS_DIRECTORY/<provider> (config.APIKeyWhere),
// then — unless noKeychain — the system keychain, which is not touched
// when an earlier source gives a key. A keychain that is not there is no
// key (KeyFound.NoKeychain says why); one that fails or does not answer
// within its deadline is an error, as a malformed credentials file is.
func FindKey(dirs config.Dirs, provider, keyEnv string, getenv func(string) string, noKeychain bool) (KeyFound, error) {
	key, where, err := config.APIKeyWhere(dirs, provider, keyEnv, getenv)
	if err != nil || key != "" {
		return KeyFound{Key: key, Where: where}, err
	}
	if noKeychain {
		return KeyFound{NoKeychain: "--no-keychain: the system keychain was not asked"}, nil
	}
	key, err = keychain.Keychain{Getenv: getenv}.Get(provider)
	switch {
	case errors.Is(err, keychain.ErrUnavailable):
		return KeyFound{NoKeychain: err.Error()}, nil
	case err != nil:
		return KeyFound{}, err
	case key != "":
		return KeyFound{Key: key, Where: keychain.Where(provider)}, nil
	}
	return KeyFound{}, nil
}

// NoKeyError is a run's refusal when no key was found (and the provider's
// official endpoint needs one): every place one can be put.
func NoKeyError(dirs config.Dirs, provider, keyEnv string, f KeyFound) error {
	if keyEnv == "" {
		keyEnv = config.DefaultKeyEnv(provider)
	}
	msg := fmt.Sprintf("no API key for %s: set %s, put it in %s under [keys], or store it with 'nodwyn login %s'", provider, keyEnv, config.CredentialsPath(dirs), provider)
	if f.NoKeychain != "" {
		msg += "\n(" + f.NoKeychain + ")"
	}
	return usageErr("%s", msg)
}

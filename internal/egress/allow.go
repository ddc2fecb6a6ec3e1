package egress

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rule is one entry of an allowlist: a host pattern and where it comes
// from.
type Rule struct {
	// Pattern is a host ("example.com", "10.1.2.3") or "*.suffix", which
	// matches every name below suffix but not suffix itself.
	Pattern string `json:"pattern"`
	// Source says where the rule comes from, for the log and a refusal:
	// "go.mod: the Go module proxy", "/home/p/.config/nodwyn/config.toml:4".
	Source string `json:"source"`
	// Person is set for a rule the person gave (their config.toml, an
	// answer at the terminal). Only such a rule, and only an exact host,
	// lets a name reach a loopback or link-local address
	// ([Decision.Local]).
	Person bool `json:"person,omitempty"`
	// Port, when not 0, is the one port the rule allows: only a person's
	// entry for a local service ("127.0.0.1:5432", "localhost:3000",
	// "[::1]:8080", see [LocalPort]) has one; every other rule allows every
	// port of its host.
	Port int `json:"port,omitempty"`
}

// String is the rule's entry as the person writes it: the pattern, with
// its port when it has one.
func (r Rule) String() string {
	if r.Port == 0 {
		return r.Pattern
	}
	return net.JoinHostPort(r.Pattern, strconv.Itoa(r.Port))
}

// LocalPort parses an allow_hosts entry that names a local service by its
// port: a loopback address or localhost, a colon and a port
// ("127.0.0.1:5432", "localhost:3000", "[::1]:8080"). host comes back
// without brackets. ok is false for anything else, a host without a port
// included.
func LocalPort(entry string) (host string, port int, ok bool) {
	h, ps, err := net.SplitHostPort(entry)
	if err != nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(ps)
	if err != nil || n < 1 || n > 65535 || strings.HasPrefix(ps, "+") {
		return "", 0, false
	}
	h = strings.ToLower(h)
	if h != "localhost" {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Unmap().IsLoopback() || a.Zone() != "" {
			return "", 0, false
		}
		h = a.Unmap().String()
	}
	return h, n, true
}

// CheckPattern says what is wrong with an allow_hosts entry, in a sentence
// that names it, or nil.
func CheckPattern(p string) error {
	q := strings.TrimPrefix(p, "*.")
	switch {
	case p == "" || q == "":
		return fmt.Errorf("allow_hosts entry %q is empty: write a host (example.com) or *.example.com", p)
	case strings.Contains(p, "://") || strings.ContainsAny(q, "/@ \t*"):
		return fmt.Errorf("allow_hosts entry %q is not a host: write only the host (example.com) or *.example.com, without scheme, path or port", p)
	}
	if strings.Contains(q, ":") {
		if a, err := netip.ParseAddr(normalHost(q)); err == nil && a.Zone() == "" { // a zone would take "]:80" in
			return nil
		}
		if _, _, ok := LocalPort(p); ok {
			return nil
		}
		return fmt.Errorf("allow_hosts entry %q has a port or is not a host: write only the host (the proxy allows every port of an allowed host); "+
			"a port goes only with a service on this machine's loopback, as in \"127.0.0.1:5432\", \"localhost:3000\" or \"[::1]:8080\"", p)
	}
	return nil
}

// Allowlist decides connections by host: a host is allowed when a rule
// names it or a *.suffix rule matches it. The zero value refuses
// everything; it is safe for use by several goroutines (a host allowed at
// the terminal for the session is added while connections run).
type Allowlist struct {
	mu    sync.Mutex
	rules []Rule
}

// Add adds rules, after checking every pattern (see CheckPattern). It
// adds none when one is wrong.
func (a *Allowlist) Add(rules ...Rule) error {
	for _, r := range rules {
		if err := CheckPattern(r.Pattern); err != nil {
			if r.Source != "" {
				return fmt.Errorf("%s: %w", r.Source, err)
			}
			return err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range rules {
		if h, port, ok := LocalPort(r.Pattern); ok {
			r.Pattern, r.Port = h, port
		}
		r.Pattern = normalHost(r.Pattern)
		a.rules = append(a.rules, r)
	}
	return nil
}

// Rules is a copy of the list, in the order added.
func (a *Allowlist) Rules() []Rule {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.rules)
}

// Decide is a [Proxy.Decide]: the first rule that matches allows, an exact
// rule of the person's before any other (so it gives Local); no match
// refuses. The port matters only to a rule that has one (a local service's).
func (a *Allowlist) Decide(_ context.Context, host string, port int) Decision {
	host = normalHost(host)
	a.mu.Lock()
	defer a.mu.Unlock()
	var found *Rule
	for i := range a.rules {
		r := &a.rules[i]
		if r.Port != 0 && r.Port != port {
			continue
		}
		if r.Pattern == host && r.Person {
			found = r
			break
		}
		if found == nil && matches(r.Pattern, host) {
			found = r
		}
	}
	if found == nil {
		return Decision{Rule: fmt.Sprintf("no allowed host or pattern matches %q", host)}
	}
	return Decision{
		Allow: true,
		Rule:  fmt.Sprintf("%q from %s", found.String(), found.Source),
		Local: found.Person && found.Pattern == host,
	}
}

func matches(pattern, host string) bool {
	if suffix, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+suffix)
	}
	return pattern == host
}

// ecosystem is what a folder's files say it will fetch from: the files that
// show it and the hosts its tools contact with their default settings.
type ecosystem struct {
	name    string
	markers []string // file names; a name ending in * matches a prefix
	hosts   []string
	why     string // where the hosts come from
}

// ecosystems are the package registries allowed by default, each from its
// tool's documented defaults. A registry configured elsewhere shows up as a
// refusal that names its host; the person adds it to allow_hosts.
var ecosystems = []ecosystem{
	// go help environment: GOPROXY defaults to https://proxy.golang.org,direct
	// and GOSUMDB to sum.golang.org. "direct" (a module the proxy lacks,
	// GOPRIVATE, GONOPROXY) reaches the module's own VCS host, which is not
	// a default. A go.mod toolchain line downloads the toolchain through the
	// same proxy. Checked on 2026-12-05 with go mod tidy (go 1.26, an empty
	// module cache and no go.sum) through this proxy: one host,
	// proxy.golang.org, which served the zips itself (no
	// storage.googleapis.com) and the checksum database under its
	// /sumdb/sum.golang.org/ path; Go goes to sum.golang.org directly only
	// when the proxy does not offer that path.
	//
	// GOPROXY's list falls back only along itself ("https://a,https://b"
	// on a 404 or 410, "|" on any error, "direct" to the module's own
	// host), never to proxy.golang.org; the defaults stay allowed beside
	// the person's setting all the same, for a command that does not get
	// it (registries.go). GOPRIVATE and GONOPROXY modules come from their
	// own hosts (goPrivateHosts).
	{"Go", []string{"go.mod", "go.work"}, []string{"proxy.golang.org", "sum.golang.org"}, "the Go module proxy and checksum database (GOPROXY's and GOSUMDB's defaults)"},
	// npm config: registry defaults to https://registry.npmjs.org/ (npm,
	// pnpm, bun); Yarn 1 writes https://registry.yarnpkg.com into yarn.lock.
	{"npm", []string{"package.json", "package-lock.json", "pnpm-lock.yaml"}, []string{"registry.npmjs.org"}, "the npm registry (npm's registry default)"},
	{"Yarn", []string{"yarn.lock"}, []string{"registry.yarnpkg.com", "registry.npmjs.org"}, "the Yarn registry (yarn.lock's resolved URLs)"},
	// pip, uv and Poetry: the index pypi.org/simple; the files it links to
	// are on files.pythonhosted.org.
	{"Python", []string{"requirements*.txt", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "poetry.lock", "uv.lock"},
		[]string{"pypi.org", "files.pythonhosted.org"}, "PyPI (pip's index-url default and the host of its files)"},
	// Cargo: the sparse index index.crates.io (the default since Rust 1.70);
	// its config.json sends downloads to static.crates.io; crates.io is the
	// API (cargo search, publish, older download URLs).
	{"Rust", []string{"Cargo.toml", "Cargo.lock"}, []string{"crates.io", "index.crates.io", "static.crates.io"}, "crates.io (Cargo's default registry and its download host)"},
	// Maven Central: Maven's super POM names repo.maven.apache.org; Gradle's
	// mavenCentral() names repo.maven.apache.org; repo1.maven.org is the
	// same repository under its older name.
	{"Maven", []string{"pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"},
		[]string{"repo.maven.apache.org", "repo1.maven.org"}, "Maven Central (Maven's super POM, Gradle's mavenCentral())"},
	// Gradle's plugin portal (plugins { id … }) and the wrapper's
	// distributionUrl (services.gradle.org, which sends the file from
	// downloads.gradle.org). Not checked against the network here.
	{"Gradle", []string{"build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradlew"},
		[]string{"plugins.gradle.org", "services.gradle.org", "downloads.gradle.org"}, "the Gradle plugin portal and wrapper distributions"},
	// Bundler's default source https://rubygems.org; Bundler 2 reads the
	// compact index from index.rubygems.org.
	{"Ruby", []string{"Gemfile", "Gemfile.lock", "*.gemspec"}, []string{"rubygems.org", "index.rubygems.org"}, "RubyGems (Bundler's default source)"},
}

// Use is an ecosystem a run uses beside its folder's files: Ecosystem is
// one of ecosystems' names ("npm", "Python", "Go", "Rust", "Maven"),
// Source says who uses it ("config.toml:3: the MCP server everything").
type Use struct{ Ecosystem, Source string }

// skipDirs are not searched for ecosystem files: what tools download or
// build, not what the folder is.
var skipDirs = map[string]bool{"node_modules": true, "vendor": true, "target": true, "build": true, "dist": true, "testdata": true}

// Defaults are the rules a folder implies: the package registries of the
// ecosystems whose files are in it (its top two levels), each tool's
// default and the ones the person configured for it (registries.go), and
// the hosts of its git remotes. env is nodwyn's own environment (the
// person's), read for GOPROXY, GOSUMDB, GOPRIVATE, GONOPROXY, GOENV,
// npm_config_*, PIP_*, UV_*, HOME, PATH and XDG_CONFIG_*, with the files
// these point at (the go env file, ~/.npmrc, pip.conf); nil reads none.
//
// noted are hosts the folder's own files name (a registry= line in its
// .npmrc, an --index-url in a requirements file) that are not allowed: a
// project (or a command of an earlier session, which may write in the
// folder) must not choose where commands may send the folder's contents.
// The lead tells the person, who adds them to allow_hosts.
//
// uses are ecosystems the run uses beside the folder's files (a stdio MCP
// server the person declared that starts with npx fetches it from npm's
// registry): theirs are allowed as if the folder had a marker, the rule's
// source saying why.
func Defaults(ctx context.Context, folder string, env []string, uses ...Use) (allow, noted []Rule) {
	getenv := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	seen := map[string]bool{}
	add := func(list *[]Rule, host, source string) {
		host = normalHost(host)
		if host == "" || seen[host] || CheckPattern(host) != nil {
			return
		}
		seen[host] = true
		*list = append(*list, Rule{Pattern: host, Source: source})
	}
	found := markers(folder)
	for _, e := range ecosystems {
		var marker string
		for _, m := range e.markers {
			if f, ok := found[m]; ok {
				marker = f
				break
			}
		}
		for _, u := range uses {
			if marker == "" && u.Ecosystem == e.name {
				marker = u.Source
			}
		}
		if marker == "" {
			continue
		}
		source := marker + ": " + e.why
		// The person's own settings first (their rules' sources say
		// where each was set), then the tool's defaults.
		var mine []configured
		switch e.name {
		case "Go":
			for _, h := range goHosts(getenv) {
				mine = append(mine, configured(h))
			}
		case "npm", "Yarn": // Yarn 1 reads npm's configuration
			mine = npmRegistries(env, getenv)
		case "Python":
			mine = pipIndexes(getenv)
		}
		for _, c := range mine {
			add(&allow, c.host, marker+": "+c.from)
		}
		for _, h := range e.hosts {
			add(&allow, h, source)
		}
	}
	for _, r := range gitRemotes(ctx, folder) {
		add(&allow, r.Pattern, r.Source)
	}
	noted = folderRegistries(folder, seen)
	return allow, noted
}

// markers finds the ecosystem files in folder and one level below (a
// monorepo's packages), skipping hidden and generated directories: the
// marker (or pattern) to the first path found, relative to folder.
func markers(folder string) map[string]string {
	found := map[string]string{}
	var patterns []string
	for _, e := range ecosystems {
		patterns = append(patterns, e.markers...)
	}
	look := func(dir, rel string) []os.DirEntry {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil
		}
		for _, de := range entries {
			if de.IsDir() {
				continue
			}
			for _, p := range patterns {
				if _, done := found[p]; done {
					continue
				}
				if ok, _ := filepath.Match(p, de.Name()); ok {
					found[p] = filepath.Join(rel, de.Name())
				}
			}
		}
		return entries
	}
	for i, de := range look(folder, "") {
		if i > 1000 {
			break
		}
		if de.IsDir() && !strings.HasPrefix(de.Name(), ".") && !skipDirs[de.Name()] {
			look(filepath.Join(folder, de.Name()), de.Name())
		}
	}
	return found
}

type goHost struct{ host, from string }

// goHosts are the hosts the person set in GOPROXY, GOSUMDB, GOPRIVATE and
// GONOPROXY, from the environment, else the go env file (go env -w); the
// defaults are not among them.
func goHosts(getenv func(string) string) []goHost {
	file := map[string]string{}
	path := getenv("GOENV")
	if path == "" {
		if cfg := getenv("XDG_CONFIG_HOME"); cfg != "" {
			path = filepath.Join(cfg, "go", "env")
		} else if home := getenv("HOME"); home != "" {
			path = filepath.Join(home, ".config", "go", "env")
		}
	}
	if path != "" && path != "off" {
		if f, err := os.Open(path); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if k, v, ok := strings.Cut(sc.Text(), "="); ok {
					file[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			f.Close()
		}
	}
	setting := func(k, def string) (string, string) {
		if v := getenv(k); v != "" {
			return v, k + " in nodwyn's environment"
		}
		if v := file[k]; v != "" {
			return v, k + " in " + path
		}
		return def, ""
	}
	var hosts []goHost
	proxy, from := setting("GOPROXY", "")
	for _, p := range strings.FieldsFunc(proxy, func(r rune) bool { return r == ',' || r == '|' }) {
		if h := urlHost(p); h != "" {
			hosts = append(hosts, goHost{h, from})
		}
	}
	sumdb, from := setting("GOSUMDB", "")
	// "off", "name", "name+key" or "name+key url" (go help module-auth).
	if f := strings.Fields(sumdb); len(f) == 2 {
		hosts = append(hosts, goHost{urlHost(f[1]), from})
	} else if len(f) == 1 && f[0] != "off" {
		name, _, _ := strings.Cut(f[0], "+")
		hosts = append(hosts, goHost{name, from})
	}
	return append(hosts, goPrivateHosts(setting)...)
}

// urlHost is the host of an http(s) URL, or "".
func urlHost(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return ""
	}
	return u.Hostname()
}

// gitRemotes are the hosts of the folder's git remotes (fetch and push
// URLs, after url.<base>.insteadOf), each once.
func gitRemotes(ctx context.Context, folder string) []Rule {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// remote -v reads only configuration; core.fsmonitor=false all the
	// same, so that no hook of the folder's runs in nodwyn's process.
	cmd := exec.CommandContext(ctx, "git", "-c", "core.fsmonitor=false", "-C", folder, "remote", "-v")
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.Output()
	if err != nil {
		return nil // not a repository, or no git
	}
	var rules []Rule
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if h := remoteHost(f[1]); h != "" {
			rules = append(rules, Rule{Pattern: h, Source: fmt.Sprintf("git remote %q of the folder (%s)", f[0], f[1])})
		}
	}
	return rules
}

// remoteHost is the host of a git remote URL: scheme://[user@]host[:port]/…
// or the scp-like [user@]host:path; "" for a local path, file://, or a
// remote helper (transport::address).
func remoteHost(s string) string {
	// transport::address runs a remote helper (ext::cmd, codecommit::…);
	// git's rule: URL scheme characters, then "::".
	if i := strings.Index(s, "::"); i > 0 && strings.Trim(s[:i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-") == "" {
		return ""
	}
	if scheme, _, ok := strings.Cut(s, "://"); ok {
		switch scheme {
		case "http", "https", "ssh", "git", "git+ssh", "ssh+git", "ftp", "ftps":
		default:
			return ""
		}
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		return normalHost(u.Hostname())
	}
	// scp-like: a colon before any slash (git's rule; a path with a slash
	// before its first colon is local).
	colon := strings.Index(s, ":")
	if s, ok := strings.CutPrefix(s, "["); ok { // [user@host:port]:path, [::1]:path
		if end := strings.Index(s, "]:"); end > 0 {
			h := s[:end]
			if i := strings.LastIndex(h, "@"); i >= 0 {
				h = h[i+1:]
			}
			if _, err := netip.ParseAddr(h); err != nil {
				if hh, _, ok := strings.Cut(h, ":"); ok {
					h = hh
				}
			}
			return normalHost(h)
		}
		return ""
	}
	if colon <= 0 || strings.Contains(s[:colon], "/") {
		return ""
	}
	h := s[:colon]
	if i := strings.LastIndex(h, "@"); i >= 0 {
		h = h[i+1:]
	}
	return normalHost(h)
}

// folderRegistries are the hosts the folder's own files point package
// tools at: registry= lines in its .npmrc and --index-url/--extra-index-url
// in requirements files. Only noted (see Defaults).
func folderRegistries(folder string, seen map[string]bool) []Rule {
	var noted []Rule
	note := func(host, source string) {
		host = normalHost(host)
		if host == "" || seen[host] {
			return
		}
		seen[host] = true
		noted = append(noted, Rule{Pattern: host, Source: source})
	}
	scan := func(name string, each func(line string) string) {
		f, err := os.Open(filepath.Join(folder, name))
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			if h := each(strings.TrimSpace(sc.Text())); h != "" {
				note(h, fmt.Sprintf("%s:%d (the folder's own file, so not allowed)", name, n))
			}
		}
	}
	scan(".npmrc", func(line string) string {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return ""
		}
		k = strings.TrimSpace(k)
		if k == "registry" || strings.HasSuffix(k, ":registry") {
			return urlHost(v)
		}
		return ""
	})
	reqs, _ := filepath.Glob(filepath.Join(folder, "requirements*.txt"))
	for _, r := range reqs {
		scan(filepath.Base(r), func(line string) string {
			f := strings.Fields(strings.ReplaceAll(line, "=", " "))
			if len(f) >= 2 && (f[0] == "--index-url" || f[0] == "-i" || f[0] == "--extra-index-url") {
				return urlHost(f[1])
			}
			return ""
		})
	}
	return noted
}

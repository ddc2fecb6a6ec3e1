package egress

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The registries the person configured for their package tools, read from
// nodwyn's environment and the tools' own configuration files, the places
// each tool reads (npm config ls -l, pip config debug): only the host of a
// registry or index URL is taken, and a rule's source names the file and
// line or the variable, never what the line holds (these files hold
// tokens: //host/:_authToken=…, a password in an index URL). The tools'
// defaults stay allowed beside them: a command may not get the person's
// setting (a variable holding a password is not passed to commands; uv,
// Poetry and Yarn 2 do not read pip.conf or .npmrc), and then falls back
// to them.

// etcDir is where the system's configuration is (/etc/pip.conf); tests
// put a temporary directory here.
var etcDir = "/etc"

// configured is a registry host the person set, and where.
type configured struct{ host, from string }

// getenvFold is getenv for a variable the tool reads whatever its case
// (npm reads npm_config_* and NPM_CONFIG_* alike): the last set wins.
func getenvFold(env []string, name string) (string, string) {
	var v, as string
	for _, kv := range env {
		k, val, ok := strings.Cut(kv, "=")
		if ok && strings.EqualFold(k, name) && val != "" {
			v, as = val, k
		}
	}
	return v, as
}

// npmRegistries are the registries of the person's npm configuration:
// npm_config_registry in nodwyn's environment, the registry= and
// @scope:registry= lines of their user config (npm_config_userconfig, else
// ~/.npmrc) and global config (npm_config_globalconfig, else
// PREFIX/etc/npmrc, PREFIX being npm_config_prefix or where node is on
// PATH). The folder's own .npmrc is not the person's: folderRegistries
// only notes it.
func npmRegistries(env []string, getenv func(string) string) []configured {
	var out []configured
	if v, as := getenvFold(env, "npm_config_registry"); v != "" {
		if h := urlHost(v); h != "" {
			out = append(out, configured{h, as + " in nodwyn's environment"})
		}
	}
	user, _ := getenvFold(env, "npm_config_userconfig")
	if user == "" && getenv("HOME") != "" {
		user = filepath.Join(getenv("HOME"), ".npmrc")
	}
	global, _ := getenvFold(env, "npm_config_globalconfig")
	if global == "" {
		prefix, _ := getenvFold(env, "npm_config_prefix")
		if prefix == "" {
			if node := lookPath("node", getenv("PATH")); node != "" {
				prefix = filepath.Dir(filepath.Dir(node))
			}
		}
		if prefix != "" {
			global = filepath.Join(prefix, "etc", "npmrc")
		}
	}
	for _, f := range []string{user, global} {
		if f == "" {
			continue
		}
		eachLine(f, func(n int, line string) {
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				return
			}
			k = strings.TrimSpace(k)
			if k != "registry" && !(strings.HasPrefix(k, "@") && strings.HasSuffix(k, ":registry")) {
				return
			}
			if h := urlHost(expandNpm(unquote(v), getenv)); h != "" {
				out = append(out, configured{h, fmt.Sprintf("%s:%d (your npm configuration)", f, n)})
			}
		})
	}
	return out
}

// pipIndexes are the indexes of the person's pip configuration:
// PIP_INDEX_URL and PIP_EXTRA_INDEX_URL (and uv's UV_INDEX_URL,
// UV_DEFAULT_INDEX, UV_EXTRA_INDEX_URL) in nodwyn's environment, and
// index-url and extra-index-url in the files pip reads (pip config debug):
// each of XDG_CONFIG_DIRS (else /etc/xdg) /pip/pip.conf, /etc/pip.conf,
// ~/.pip/pip.conf, XDG_CONFIG_HOME (else ~/.config) /pip/pip.conf, and
// PIP_CONFIG_FILE. PIP_CONFIG_FILE=/dev/null stops pip reading any file,
// and so here. The site file (the running Python's prefix, a venv in the
// folder) is not the person's.
func pipIndexes(getenv func(string) string) []configured {
	var out []configured
	for _, k := range []string{"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL"} {
		for _, u := range strings.Fields(getenv(k)) {
			if h := urlHost(u); h != "" {
				out = append(out, configured{h, k + " in nodwyn's environment"})
			}
		}
	}
	if getenv("PIP_CONFIG_FILE") == os.DevNull {
		return out
	}
	var files []string
	dirs := getenv("XDG_CONFIG_DIRS")
	if dirs == "" {
		dirs = "/etc/xdg"
	}
	for _, d := range filepath.SplitList(dirs) {
		if filepath.IsAbs(d) {
			files = append(files, filepath.Join(d, "pip", "pip.conf"))
		}
	}
	files = append(files, filepath.Join(etcDir, "pip.conf"))
	if home := getenv("HOME"); home != "" {
		files = append(files, filepath.Join(home, ".pip", "pip.conf"))
		files = append(files, filepath.Join(home, ".config", "pip", "pip.conf"))
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		files = append(files, filepath.Join(x, "pip", "pip.conf"))
	}
	if f := getenv("PIP_CONFIG_FILE"); f != "" {
		files = append(files, f)
	}
	for _, f := range files {
		out = append(out, pipConf(f)...)
	}
	return out
}

// pipConf reads index-url and extra-index-url (either spelling, any
// section: pip takes [global] and the command's) from one pip.conf; a
// value goes on over indented lines (configparser's continuation).
func pipConf(path string) []configured {
	var out []configured
	key, keyLine := "", 0
	take := func(v string) {
		for _, u := range strings.Fields(v) {
			if h := urlHost(u); h != "" {
				out = append(out, configured{h, fmt.Sprintf("%s:%d (your pip configuration)", path, keyLine)})
			}
		}
	}
	eachRawLine(path, func(n int, raw string) {
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' || line[0] == ';' {
			return
		}
		if raw[0] == ' ' || raw[0] == '\t' {
			if key != "" {
				take(line) // a continuation of key's value
			}
			return
		}
		key = ""
		if line[0] == '[' {
			return
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			return
		}
		k := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(line[:i])), "_", "-")
		if k == "index-url" || k == "extra-index-url" {
			key, keyLine = k, n
			take(line[i+1:])
		}
	})
	return out
}

// goPrivateHosts are the hosts of GOPRIVATE and GONOPROXY's patterns: the
// modules go fetches directly from their own hosts. A pattern's first
// element is the host; "*.corp.example" stays a pattern, any other glob
// is left out.
func goPrivateHosts(setting func(k, def string) (string, string)) []goHost {
	var out []goHost
	for _, k := range []string{"GOPRIVATE", "GONOPROXY"} {
		v, from := setting(k, "")
		for _, p := range strings.Split(v, ",") {
			h, _, _ := strings.Cut(strings.TrimSpace(p), "/")
			if rest := strings.TrimPrefix(h, "*."); rest != "" && !strings.ContainsAny(rest, "*?[\\") {
				out = append(out, goHost{h, from + " (modules fetched from their own host)"})
			}
		}
	}
	return out
}

// unquote takes the quotes off an ini value.
func unquote(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// expandNpm replaces ${NAME} (and ${NAME?}) in an .npmrc value from the
// environment, as npm does.
func expandNpm(v string, getenv func(string) string) string {
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			return v
		}
		j := strings.Index(v[i:], "}")
		if j < 0 {
			return v
		}
		name := strings.TrimSuffix(v[i+2:i+j], "?")
		v = v[:i] + getenv(name) + v[i+j+1:]
	}
}

// eachLine calls f with each line of the file at path that is not a
// comment, trimmed, and its number. A file that is missing or unreadable
// has none.
func eachLine(path string, f func(n int, line string)) {
	eachRawLine(path, func(n int, raw string) {
		line := strings.TrimSpace(raw)
		if line != "" && line[0] != '#' && line[0] != ';' {
			f(n, line)
		}
	})
}

func eachRawLine(path string, f func(n int, raw string)) {
	file, err := os.Open(path)
	if err != nil {
		return
	}
	defer file.Close()
	if st, err := file.Stat(); err != nil || !st.Mode().IsRegular() {
		return
	}
	sc := bufio.NewScanner(file)
	for n := 1; sc.Scan(); n++ {
		if raw := sc.Text(); raw != "" {
			f(n, raw)
		}
	}
}

// lookPath finds an executable named name on path (a PATH value).
func lookPath(name, path string) string {
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

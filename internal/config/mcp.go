package config

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// MCP is [mcp] in config.toml: the MCP servers whose tools a run offers.
type MCP struct {
	Servers map[string]MCPServer `toml:"servers"` // [mcp.servers.NAME]
}

// MCPServer is one [mcp.servers.NAME]: exactly one of Command (a stdio
// server, a process of the session) and URL (streamable HTTP).
//
// In the person's own config.toml, a value of Env or Headers may name a
// variable of nodwyn's environment as ${NAME}, replaced when the file is
// loaded, so that no key needs to sit in a file. A project's
// .nodwyn/config.toml may not (that would send the person's secrets to a
// server the project chose), and its Allow and AllowTools are noted and
// not taken: only the person allows a tool to run without a confirm.
type MCPServer struct {
	Command     string            `toml:"command"`      // stdio: the program, found on PATH
	Args        []string          `toml:"args"`         // its arguments
	Env         map[string]string `toml:"env"`          // added to the scrubbed environment
	URL         string            `toml:"url"`          // streamable HTTP endpoint
	Headers     map[string]string `toml:"headers"`      // sent with every request (Authorization, …)
	Allow       bool              `toml:"allow"`        // every tool runs without a confirm (person's config only)
	AllowTools  []string          `toml:"allow_tools"`  // these tools (remote names) run without a confirm (person's config only)
	InitTimeout Duration          `toml:"init_timeout"` // 0: internal/mcp's default
}

// Transport is "stdio" (Command) or "http" (URL).
func (s MCPServer) Transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// Declared is what the server runs or reaches, for nodwyn trust, doctor
// and nodwyn mcp list: the command line, or the URL with the names (never
// the values) of its headers. With envValues the variables of env are
// shown with their values (nodwyn trust: a project's file cannot take
// one from the environment, and a value such as LD_PRELOAD's matters),
// else by name only (a person's value may hold a key).
func (s MCPServer) Declared(envValues bool) string {
	if s.URL != "" {
		if len(s.Headers) == 0 {
			return s.URL
		}
		return fmt.Sprintf("%s (headers %s)", s.URL, strings.Join(sortedNames(s.Headers), ", "))
	}
	var b strings.Builder
	for _, name := range sortedNames(s.Env) {
		if envValues {
			fmt.Fprintf(&b, "%s=%s ", name, shellQuote(s.Env[name]))
		} else {
			fmt.Fprintf(&b, "%s=… ", name)
		}
	}
	b.WriteString(shellQuote(s.Command))
	for _, a := range s.Args {
		b.WriteString(" " + shellQuote(a))
	}
	return b.String()
}

// MCPServerKey is the key of server name in Config.Origin.
func MCPServerKey(name string) string { return "mcp.servers." + quoteKey(name) }

// MCPServerNames are the declared servers' names, sorted.
func (c *Config) MCPServerNames() []string { return sortedNames(c.MCP.Servers) }

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@+%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// mcpServerName is what a server's NAME looks like: the first half of its
// tools' names (NAME__tool), which the providers limit to [a-zA-Z0-9_-].
var mcpServerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// mcpEnvName is what a variable's name in env looks like.
var mcpEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// serverKeys are the keys of an [mcp.servers.NAME], by name.
var serverKeys = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	t := reflect.TypeFor[MCPServer]()
	for i := range t.NumField() {
		m[t.Field(i).Tag.Get("toml")] = t.Field(i).Type
	}
	return m
}()

// isMCPServerKey: k is [mcp.servers.NAME] or below it.
func isMCPServerKey(k toml.Key) bool {
	return len(k) >= 3 && k[0] == "mcp" && k[1] == "servers"
}

// checkMCPKey checks one key at or below [mcp.servers.NAME], whose value
// is v: the name, the key, its type, and the names in env and headers.
func checkMCPKey(fail func(key, format string, args ...any) error, path string, line int, k toml.Key, v any) error {
	ks := k.String()
	name := k[2]
	switch len(k) {
	case 3:
		if _, ok := v.(map[string]any); !ok {
			return fail(ks, "must be a table ([mcp.servers.%s] with command or url), not a value", quoteKey(name))
		}
		if !mcpServerName.MatchString(name) || strings.Contains(name, "__") {
			return fail(ks, "%q is not a server name: its tools are named NAME__tool, so a name is 1 to 32 letters, digits, '-' and '_' (not \"__\"), starting with a letter or digit, as in [mcp.servers.github]", name)
		}
		return nil
	case 4:
		typ, ok := serverKeys[k[3]]
		if !ok {
			return unknownServerKey(path, line, k, v)
		}
		if typ.Kind() == reflect.Map {
			if _, ok := v.(map[string]any); !ok {
				return fail(ks, "value %s: want a table of strings, as %s = { NAME = \"value\" }", shortValue(v), k[3])
			}
			return nil
		}
		if err := checkType(leaf{key: ks, typ: typ}, v); err != nil {
			return fail(ks, "%v", err)
		}
		return nil
	case 5:
		if k[3] != "env" && k[3] != "headers" {
			return unknownServerKey(path, line, k[:4], v)
		}
		if _, ok := v.(string); !ok {
			return fail(ks, "value %s: want a string", shortValue(v))
		}
		if k[3] == "env" && !mcpEnvName.MatchString(k[4]) {
			return fail(ks, "%q is not the name of an environment variable: letters, digits and '_', not starting with a digit", k[4])
		}
		if k[3] == "headers" && !headerName(k[4]) {
			return fail(ks, "%q is not an HTTP header name: letters, digits and !#$%%&'*+-.^_`|~ only, as Authorization", k[4])
		}
		return nil
	}
	return fail(ks, "too deep: [mcp.servers.%s] %s holds NAME = \"value\" lines only", quoteKey(name), k[3])
}

// unknownServerKey is the error for a key an [mcp.servers.NAME] does not have.
func unknownServerKey(path string, line int, k toml.Key, v any) error {
	ks := k.String()
	e := &Error{File: path, Line: line, Key: ks}
	last := strings.ToLower(strings.ReplaceAll(k[len(k)-1], "-", "_"))
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range serverKeys {
			if !yield(n) {
				return
			}
		}
	})
	if s, _ := v.(string); secretKeys[last] || looksLikeSecret(s) {
		e.Msg = fmt.Sprintf("unknown key %s: a server's key goes in a header or a variable whose value names your environment, as headers = { Authorization = \"Bearer ${GITHUB_TOKEN}\" } or env = { API_KEY = \"${API_KEY}\" } (your own config.toml only)", ks)
		return e
	}
	if near := Suggest(k[len(k)-1], names); near != "" {
		e.Msg = fmt.Sprintf("unknown key %s; did you mean %s?", ks, joinTo(strings.Join(k[:len(k)-1], "."), near))
		return e
	}
	e.Msg = fmt.Sprintf("unknown key %s; the keys of [%s] are %s", ks, toml.Key(k[:3]).String(), strings.Join(names, ", "))
	return e
}

// headerName: an HTTP token (RFC 9110).
func headerName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// envRef finds ${NAME} in a value.
var envRef = regexp.MustCompile(`\$\{([^}]*)\}`)

// layerMCP checks the servers one file declares and adds them to c: a
// server declared by an earlier file (the person's) keeps its
// declaration. project says the file is a project's.
func (c *Config) layerMCP(path string, lines lineIndex, servers map[string]MCPServer, project bool, getenv func(string) string) error {
	for _, name := range sortedNames(servers) {
		s := servers[name]
		key := "mcp.servers." + quoteKey(name)
		fail := func(sub, format string, args ...any) error {
			k := key
			if sub != "" {
				k += "." + sub
			}
			return &Error{File: path, Line: lines.find(k), Key: k, Msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case s.Command == "" && s.URL == "":
			return fail("", "set command (a program nodwyn starts and talks to on its stdin and stdout) or url (a streamable HTTP endpoint), as command = \"npx\" with args = [\"-y\", \"@modelcontextprotocol/server-everything\"], or url = \"https://example.com/mcp\"")
		case s.Command != "" && s.URL != "":
			return fail("url", "set command (a stdio server) or url (streamable HTTP), not both")
		case s.URL != "" && len(s.Args) > 0:
			return fail("args", "args are for a stdio server (command), not a url")
		case s.URL != "" && len(s.Env) > 0:
			return fail("env", "env is for a stdio server (command), not a url; a url server's key goes in headers")
		case s.Command != "" && len(s.Headers) > 0:
			return fail("headers", "headers are for a url server, not a stdio server (command); give it env instead")
		case s.Command != "" && strings.TrimSpace(s.Command) != s.Command:
			return fail("command", "%q has white space around it: the program alone, its arguments in args", s.Command)
		}
		if s.URL != "" {
			u, err := url.Parse(s.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fail("url", "%q is not an http:// or https:// URL with a host, as url = \"https://example.com/mcp\"", s.URL)
			}
			if u.User != nil {
				return fail("url", "the url holds a user or password: give it in headers (Authorization) from your environment instead, as headers = { Authorization = \"Bearer ${TOKEN}\" }")
			}
		}
		for _, sub := range []struct {
			table string
			m     map[string]string
		}{{"env", s.Env}, {"headers", s.Headers}} {
			for _, n := range sortedNames(sub.m) {
				v := sub.m[n]
				vkey := sub.table + "." + quoteKey(n)
				refs := envRef.FindAllStringSubmatch(v, -1)
				if project && (len(refs) > 0 || strings.Contains(v, "${")) {
					return fail(vkey, "a project's config cannot take values from your environment (it would send them to a server the project chose): declare the server in your own config.toml, or write the value itself")
				}
				if strings.Contains(envRef.ReplaceAllString(v, ""), "${") {
					return fail(vkey, "an unclosed ${: write ${NAME} to take the variable NAME of nodwyn's environment")
				}
				for _, r := range refs {
					if !mcpEnvName.MatchString(r[1]) {
						return fail(vkey, "${%s} is not a variable's name: write ${NAME}, NAME of letters, digits and '_'", r[1])
					}
					v := getenv(r[1])
					if v == "" {
						return fail(vkey, "takes ${%s}, which is not set in nodwyn's environment: set it (export %s=...), or remove the server", r[1], r[1])
					}
					if !slices.Contains(c.Secrets, v) {
						c.Secrets = append(c.Secrets, v)
					}
				}
				v = envRef.ReplaceAllStringFunc(v, func(ref string) string { return getenv(ref[2 : len(ref)-1]) })
				if strings.ContainsAny(v, "\r\n\x00") {
					return fail(vkey, "the value holds a line break or NUL, which no header or variable may")
				}
				sub.m[n] = v
			}
		}
		for i, t := range s.AllowTools {
			if strings.TrimSpace(t) == "" {
				return fail("allow_tools", "entry %d is empty: name a tool as the server names it, as allow_tools = [\"search\"]", i+1)
			}
		}
		origin := fmt.Sprintf("%s:%d", path, lines.find(key))
		if project {
			if s.Allow || len(s.AllowTools) > 0 {
				c.Notes = append(c.Notes, fmt.Sprintf("%s sets allow or allow_tools for MCP server %s; not taken: only your own config.toml lets a tool run without a confirm", origin, name))
				s.Allow, s.AllowTools = false, nil
			}
			if _, taken := c.MCP.Servers[name]; taken {
				c.Notes = append(c.Notes, fmt.Sprintf("%s declares MCP server %s; not taken: your own config.toml declares one of that name (%s)", origin, name, c.Origin[MCPServerKey(name)]))
				continue
			}
		}
		if c.MCP.Servers == nil {
			c.MCP.Servers = map[string]MCPServer{}
		}
		c.MCP.Servers[name] = s
		c.Origin[MCPServerKey(name)] = origin
	}
	return nil
}

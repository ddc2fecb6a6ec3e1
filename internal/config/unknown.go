package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// envName is what the name of an environment variable looks like.
var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// unknownKey is the error for the key k that File does not have, at line of
// the file at path, whose value is v. In order: a name a secret goes under
// (api_key, token …) is told where keys are kept, or, when its value is the
// name of a variable, about key_env; a typo of a known key is answered with
// that key ("did you mean provider.model?"); a key that belongs under a
// table is told which; only when nothing is near are the keys listed, those
// of its table when the table is known. A value is never shown.
func unknownKey(path string, line int, k toml.Key, v any) error {
	// The first part that is not known is the one to name ([mcp.server.x]
	// is the unknown mcp.server).
	known := allKeys()
	for i := 1; i < len(k); i++ {
		if !known[k[:i].String()] {
			k, v = k[:i], map[string]any{}
			break
		}
	}
	ks := k.String()
	last := strings.ToLower(strings.ReplaceAll(k[len(k)-1], "-", "_"))
	e := &Error{File: path, Line: line, Key: ks}
	s, isString := v.(string)
	keyEnv := fmt.Sprintf("unknown key %s; to name the environment variable that holds the provider's key, write key_env = %q under [provider]", ks, s)
	switch {
	case secretKeys[last] && isString && envName.MatchString(s):
		e.Msg = keyEnv
		return e
	case secretKeys[last]:
		e.Msg = fmt.Sprintf("unknown key %s: %s", ks, keysNotHere)
		return e
	}
	parent := strings.Join(k[:len(k)-1], ".")
	var siblings []string
	for key := range allKeys() {
		if p, name := splitLast(key); p == parent {
			siblings = append(siblings, name)
		}
	}
	if near := Suggest(k[len(k)-1], siblings); near != "" {
		e.Msg = fmt.Sprintf("unknown key %s; did you mean %s?", ks, joinTo(parent, near))
		return e
	}
	// A known key's name in the wrong table, or a typo of one.
	var names []string
	byName := map[string]string{}
	for _, l := range leaves {
		_, name := splitLast(l.key)
		if _, dup := byName[name]; !dup {
			names = append(names, name)
			byName[name] = l.key
		}
	}
	if full, ok := byName[k[len(k)-1]]; ok {
		e.Msg = fmt.Sprintf("unknown key %s; did you mean %s (under [%s])?", ks, full, parentOf(full))
		return e
	}
	if near := Suggest(k[len(k)-1], names); near != "" && parent == "" {
		full := byName[near]
		e.Msg = fmt.Sprintf("unknown key %s; did you mean %s (under [%s])?", ks, full, parentOf(full))
		return e
	}
	if isString && (strings.HasSuffix(last, "_key") || strings.HasSuffix(last, "_token")) && looksLikeSecret(s) {
		e.Msg = fmt.Sprintf("unknown key %s: %s", ks, keysNotHere)
		return e
	}
	if tables[parent] {
		var known []string
		for _, l := range leaves {
			if p, _ := splitLast(l.key); p == parent {
				known = append(known, l.key)
			}
		}
		e.Msg = fmt.Sprintf("unknown key %s; the keys of [%s] are %s", ks, parent, strings.Join(known, ", "))
		return e
	}
	e.Msg = fmt.Sprintf("unknown key %s; the known keys are %s", ks, knownKeys())
	return e
}

const keysNotHere = `keys are never read from config.toml: put the key in the environment variable that provider.key_env names, in the system keychain (nodwyn login PROVIDER), or in credentials.toml in the configuration directory ([keys] <provider> = "...")`

// looksLikeSecret: a long word with no space that is not a variable's name.
func looksLikeSecret(s string) bool {
	return len(s) >= 20 && !strings.ContainsAny(s, " \t\n") && !envName.MatchString(s)
}

// allKeys is every settable key and every table of File.
func allKeys() map[string]bool {
	m := map[string]bool{}
	for _, l := range leaves {
		m[l.key] = true
	}
	for t := range tables {
		m[t] = true
	}
	return m
}

func splitLast(key string) (parent, name string) {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

func parentOf(key string) string { p, _ := splitLast(key); return p }

func joinTo(parent, name string) string {
	if parent == "" {
		return quoteKey(name)
	}
	return parent + "." + quoteKey(name)
}

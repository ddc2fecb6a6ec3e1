package prim

import "strings"

// secretWords are parts of a variable's name that keep it from every
// program a tool runs, allow-listed or not.
var secretWords = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"}

// SecretName reports whether a variable's name looks like it holds a secret.
func SecretName(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// allowed reports whether name is on the allow-list: an exact name, or a
// prefix ending in '*' ("LC_*").
func allowed(name string, allow []string) bool {
	for _, a := range allow {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if name == a {
			return true
		}
	}
	return false
}

// ScrubEnv returns the entries of environ ("KEY=VALUE") whose names are on
// the allow-list, minus any whose name looks like a secret's (*KEY*,
// *SECRET*, *TOKEN*, *PASSWORD*, *PASSWD*, *CREDENTIAL*, in any case) even
// when allow-listed. PWD and OLDPWD never pass: the shell sets them. A name
// that appears twice keeps its last value.
func ScrubEnv(environ []string, allow []string) []string {
	out := make([]string, 0, len(allow))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || name == "PWD" || name == "OLDPWD" {
			continue
		}
		if !allowed(name, allow) || SecretName(name) {
			continue
		}
		out = setEnv(out, name, kv[len(name)+1:])
	}
	return out
}

// setEnv sets name to value in env, replacing an earlier entry.
func setEnv(env []string, name, value string) []string {
	for i, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); n == name {
			env[i] = name + "=" + value
			return env
		}
	}
	return append(env, name+"="+value)
}

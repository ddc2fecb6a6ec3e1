package bashread

// The programs that print what a protected directory or a running
// credential daemon holds without naming it.

import (
	"slices"
	"strings"
)

// secretPrinters are programs that print what a protected directory or a
// running credential daemon holds without naming it: when their words (not
// options) hold one of seqs in a row (none: always) and, with opts, one of
// these options (a trailing * a prefix). The floor's file rules do not
// cover a running agent, which hands out what it holds to whoever asks on
// its socket.
var secretPrinters = map[string]struct{ seqs, opts, what string }{
	"gpg":               {opts: "--export-secret-* --export-ssh-key", what: "the secret keys in ~/.gnupg"},
	"gpg2":              {opts: "--export-secret-* --export-ssh-key", what: "the secret keys in ~/.gnupg"},
	"ssh-add":           {what: "the keys the running ssh-agent holds"},
	"gpg-connect-agent": {what: "the secret keys the running gpg-agent holds"},
	"git":               {seqs: "credential fill", what: "the passwords and tokens git's credential helper keeps"},
	"secret-tool":       {seqs: "lookup, search", what: "the secrets the desktop keyring holds"},
	"security":          {seqs: "find-generic-password, find-internet-password", opts: "-w -g", what: "the passwords the keychain holds"},
	"keyctl":            {seqs: "print, read, pipe", what: "the secrets the kernel keyring holds"},
	"aws":               {seqs: "configure get, configure export-credentials", what: "the keys in ~/.aws"},
	"kubectl":           {seqs: "config view", opts: "--raw --raw=* --flatten", what: "the cluster credentials in ~/.kube"},
	"oc":                {seqs: "config view", opts: "--raw --raw=* --flatten", what: "the cluster credentials in ~/.kube"},
	"gcloud":            {seqs: "print-access-token, print-identity-token, config config-helper", what: "an access token made from the credentials in ~/.config/gcloud"},
	"az":                {seqs: "get-access-token", what: "an access token made from the credentials in ~/.azure"},
}

// credentialPrinter reports what a command prints from a protected
// directory without naming it (secretPrinters), or from another process's
// environment or memory.
func credentialPrinter(base string, args []string) string {
	switch base {
	case "ps":
		// BSD-style e (ps e, ps auxe, ps eww) prints every process's
		// environment: /proc/*/environ by another name.
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && strings.Contains(a, "e") && strings.Trim(a, "auxwefhjlmrsvTtSnXZcL") == "" {
				return "other processes' environments (/proc/*/environ)"
			}
		}
	case "gdb", "lldb", "gcore", "pstack", "strace", "ltrace", "eu-stack", "pyrasite", "py-spy":
		// Attaching to a running process reads its memory and environment.
		for i, a := range args {
			if a == "-p" || a == "--pid" || strings.HasPrefix(a, "--pid=") || a == "--attach-pid" || a == "attach" ||
				(base == "gcore" || base == "pstack") && i == len(args)-1 && a != "" && strings.Trim(a, "0123456789$") == "" {
				return "another process's memory and environment (/proc/*/mem, /proc/*/environ)"
			}
		}
	}
	sp, ok := secretPrinters[base]
	if !ok {
		return ""
	}
	var words []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	seq := sp.seqs == ""
	for _, want := range strings.Split(sp.seqs, ", ") {
		w := strings.Fields(want)
		for i := 0; !seq && w != nil && i+len(w) <= len(words); i++ {
			seq = slices.Equal(words[i:i+len(w)], w)
		}
	}
	opt := sp.opts == ""
	for _, o := range strings.Fields(sp.opts) {
		p, prefix := strings.CutSuffix(o, "*")
		opt = opt || slices.ContainsFunc(args, func(a string) bool { return a == o || prefix && strings.HasPrefix(a, p) })
	}
	if seq && opt {
		return sp.what
	}
	return ""
}

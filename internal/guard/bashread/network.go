package bashread

// The network tools: ssh and its kin, scp, rsync, curl, socat, nc.

import (
	"slices"
	"strings"
)

// remote reports whether an scp or rsync operand names another host.
func remote(a string) bool {
	i := strings.Index(a, ":")
	return !strings.HasPrefix(a, "-") && (strings.HasPrefix(a, "rsync://") || i > 0 && !strings.Contains(a[:i], "/"))
}

// rsync to or from another host is a network tool, otherwise a copy.
func (an *Reading) rsync(base string, args []string, stdin string) string {
	if slices.ContainsFunc(args, remote) {
		an.reaches(base)
		return an.network(base, args, stdin)
	}
	return an.generic(base, args, stdin)
}

// network judges a network tool: the local files it reads, writes or
// runs (its options' roles); scp's and rsync's local operands are copied
// whole.
func (an *Reading) network(base string, args []string, stdin string) string {
	if base == "socat" {
		for _, a := range args {
			if strings.HasPrefix(a, "-") && len(a) > 1 {
				continue
			}
			typ, rest, _ := strings.Cut(a, ":")
			switch strings.ToUpper(typ) {
			case "EXEC", "SYSTEM":
				cmd, _, _ := strings.Cut(rest, ",")
				an.script(cmd, nil)
			case "FILE", "OPEN", "CREATE", "GOPEN", "PIPE", "UNIX-CONNECT", "UNIX-LISTEN":
				p, _, _ := strings.Cut(rest, ",")
				an.judge(p, UseOperand)
			}
		}
		return markUnknown
	}
	ro := UseOperand
	switch base {
	case "ssh", "sftp", "mosh", "scp", "rsync":
		ro = roleNone
		// Clusters of short options (ssh -vo ProxyCommand=…, -vi key):
		// each option its own word, a value option's attached value after it.
		var words []string
		for i, a := range args {
			if a == "--" {
				words = append(words, args[i:]...)
				break
			}
			words = append(words, splitCluster(a, lookup(base).roles)...)
		}
		args = words
	}
	plain := an.opts(args, ro, lookup(base).roles, func(opt string, r Use, v string) {
		switch {
		case opt == "--files-from":
			an.listFile(v, "")
		case r != roleValue:
		case opt == "-o": // ssh -o Key=value
			k, v, _ := strings.Cut(v, "=")
			switch strings.ToLower(k) {
			case "proxycommand", "localcommand", "knownhostscommand":
				an.script(v, nil)
			case "identityfile", "userknownhostsfile", "certificatefile", "controlpath":
				an.judge(v, UseOperand)
			}
		default: // curl's data and forms: @file, <file
			if i := strings.Index(v, "@"); i >= 0 {
				f, _, _ := strings.Cut(v[i+1:], ";")
				an.judge(f, UseOperand)
			} else if i := strings.Index(v, "<"); i >= 0 && (opt == "-F" || opt == "--form") {
				an.judge(v[i+1:], UseOperand)
			}
			an.operands([]string{v}, UseOperand)
		}
	})
	if base == "scp" || base == "rsync" {
		for _, a := range plain {
			if !remote(a) {
				an.judge(a, UseRecursive)
			}
		}
	}
	return markUnknown
}

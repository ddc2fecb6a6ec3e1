package bashread

// The wrappers that need code of their own: command, parallel, busybox,
// watch, chroot, su and script, env, xargs. (A plain wrapper is a table
// entry: wrapped, in table.go.)

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
)

// commandCmd: command -v names a command; otherwise command runs it.
func (an *Reading) commandCmd(base string, args []string, stdin string) string {
	if len(args) > 0 && (args[0] == "-v" || args[0] == "-V") {
		return ""
	}
	return an.wrapped(plainWrapper, args, stdin)
}

// parallel runs its operands as a command line, with its input's words.
func (an *Reading) parallel(base string, args []string, stdin string) string {
	an.uncertain = true
	return an.script(strings.Join(an.opts(args, roleRest, nil, nil), " "), nil)
}

func (an *Reading) busybox(base string, args []string, stdin string) string {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return an.exec(args, stdin)
	}
	return ""
}

// watch runs its operands as a command line.
func (an *Reading) watch(base string, args []string, stdin string) string {
	return an.script(strings.Join(an.opts(args, roleRest, lookup(base).roles, nil), " "), nil)
}

// chroot runs its command in a whole tree.
func (an *Reading) chroot(base string, args []string, stdin string) string {
	if len(args) > 0 {
		an.judge(args[0], UseRecursive)
		return an.exec(args[1:], stdin)
	}
	return ""
}

// su and script run -c's command (-qc: a cluster that ends in c).
func (an *Reading) su(base string, args []string, stdin string) string {
	for i, a := range args {
		short := len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.HasSuffix(a, "c")
		if (short || a == "--command") && i+1 < len(args) {
			return an.script(args[i+1], nil)
		}
		if v, ok := strings.CutPrefix(a, "--command="); ok {
			return an.script(v, nil)
		}
	}
	return ""
}

// envCmd looks through env: its options (-S splits a command line), its
// assignments and the command.
func (an *Reading) envCmd(base string, args []string, stdin string) string {
	saved := an.vars
	an.vars = make(map[string]expand.Variable, len(saved))
	for k, v := range saved {
		an.vars[k] = v
	}
	defer func() { an.vars = saved }()
	split := ""
	rest := an.opts(args, roleRest, lookup(base).roles, func(_ string, r Use, v string) {
		switch r {
		case roleValue:
			split = v
		case roleCwd:
			an.judge(v, UseOperand)
			an.setCwd(v)
		}
	})
	if split != "" {
		return an.envCmd(base, append(strings.Fields(split), rest...), stdin)
	}
	for ; len(rest) > 0 && (rest[0] == "-" || strings.Contains(rest[0], "=")); rest = rest[1:] {
		if k, v, ok := strings.Cut(rest[0], "="); ok {
			an.setVar(k, v)
			an.varCarries(k, v)
		}
	}
	if len(rest) == 0 {
		return ""
	}
	if strings.HasPrefix(rest[0], "-") {
		return an.envCmd(base, rest, stdin) // an option after the assignments
	}
	return an.exec(rest, stdin)
}

// xargs hands its input's words to the command it runs.
func (an *Reading) xargs(base string, args []string, stdin string) string {
	repl := ""
	cmd := an.opts(args, roleRest, lookup(base).roles, func(opt string, r Use, v string) {
		switch r {
		case roleValue: // -I, --replace
			repl = v
		case UseOperand: // -a, --arg-file
			stdin = an.readFile(v)
		}
	})
	if repl == "" && slices.Contains(args[:len(args)-len(cmd)], "-i") {
		repl = "{}"
	}
	if len(cmd) == 0 {
		cmd = []string{"echo"}
	}
	words := strings.Fields(stdin)
	if strings.Contains(stdin, markTree) {
		// find's names keep their marker: fields split around it.
		words = strings.Fields(strings.ReplaceAll(stdin, markTree, markTree+" "))
		words = joinMarkers(words)
	}
	if len(words) > maxFields {
		words = words[:maxFields]
		an.uncertain = true
	}
	if repl != "" {
		if len(words) == 0 {
			words = []string{""}
		}
		var out strings.Builder
		for _, w := range words {
			argv := make([]string, len(cmd))
			for j, c := range cmd {
				argv[j] = strings.ReplaceAll(c, repl, w)
			}
			out.WriteString(an.exec(argv, ""))
		}
		return out.String()
	}
	return an.exec(append(append([]string(nil), cmd...), words...), "")
}

// joinMarkers glues a lone tree marker back onto the word before it.
func joinMarkers(words []string) []string {
	var out []string
	for _, w := range words {
		if w == markTree && len(out) > 0 {
			out[len(out)-1] += markTree
			continue
		}
		out = append(out, w)
	}
	return out
}

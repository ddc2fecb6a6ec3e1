package bashread

// The shell's own builtins, whose effect is on the shell: its directory,
// variables, positional parameters, options and what it prints. They are
// code, not entries of the program table.

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
)

// builtin judges the shell's own builtins, whose effect is on the shell:
// its directory, variables, positional parameters, options and what it
// prints.
func (an *Reading) builtin(base string, args []string, stdin string, allProse bool) (string, bool) {
	switch base {
	case "eval":
		return an.scriptHere(strings.Join(args, " "), an.pos), true
	case "source", ".":
		if len(args) > 0 {
			an.judge(args[0], UseOperand)
			an.scriptFileIn(args[0], args[1:], true, true)
		}
		an.uncertain = an.uncertain || len(args) == 0
		return markUnknown, true
	case "cd", "pushd":
		return an.cd(base, args), true
	case "popd":
		if n := len(an.dirs); n > 0 {
			an.cwd, an.dirs = an.dirs[n-1], an.dirs[:n-1]
		} else {
			an.cwdOK = false
		}
		return "", true
	case "pwd":
		if !an.cwdOK {
			return markUnknown, true
		}
		return an.cwd + "\n", true
	case "echo":
		i := 0
		for i < len(args) && (args[i] == "-n" || args[i] == "-e" || args[i] == "-E" || args[i] == "-ne" || args[i] == "-en") {
			i++
		}
		return strings.Join(args[i:], " ") + "\n", true
	case "printf":
		if allProse {
			if args[0] == "--" {
				args = args[1:]
			}
			return an.format(args[0], args[1:]), true // prose, into a file
		}
		return an.printf(args), true
	case "read", "mapfile", "readarray":
		return an.read(base, args, stdin), true
	case "set":
		if i := indexOf(args, "--"); i >= 0 {
			an.pos = append([]string(nil), args[i+1:]...)
		} else if len(args) > 0 && !strings.HasPrefix(args[0], "-") && !strings.HasPrefix(args[0], "+") {
			an.pos = append([]string(nil), args...)
		}
		return "", true
	case "shift":
		if len(an.pos) > 0 {
			an.pos = an.pos[1:]
		}
		return "", true
	case "export", "declare", "typeset", "local", "readonly":
		for _, a := range args {
			if k, v, ok := strings.Cut(a, "="); ok {
				an.setVar(k, v)
				an.varCarries(k, v)
			}
		}
		return "", true
	case "alias":
		for _, a := range args {
			if _, v, ok := strings.Cut(a, "="); ok {
				an.script(v, nil)
			}
		}
		return "", true
	case "trap":
		if len(args) > 0 {
			an.script(args[0], nil)
		}
		return "", true
	case "shopt", "setopt":
		for _, a := range args {
			if strings.Contains(a, "dotglob") || strings.Contains(strings.ToLower(a), "globdots") || strings.Contains(strings.ToLower(a), "glob_dots") ||
				strings.Contains(a, markUnknown) || strings.Contains(a, markBuilt) {
				an.dotglobSet = 2
			}
		}
		return "", true
	case "true", "false", ":", "exit", "return", "wait", "sleep", "kill", "jobs", "disown", "unset", "umask",
		"ulimit", "hash", "type", "which", "help", "date":
		return "", true
	}
	return "", false
}

// cd follows cd and pushd.
func (an *Reading) cd(base string, args []string) string {
	dir := ""
	for i, a := range args {
		if a == "--" {
			if i+1 < len(args) {
				dir = args[i+1]
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			dir = a
			break
		}
	}
	if base == "pushd" && dir != "-" && (strings.HasPrefix(dir, "+") || strings.HasPrefix(dir, "-")) {
		an.cwdOK = false // a rotation of the directory stack
		return ""
	}
	if dir == "-" {
		dir = an.getVar("OLDPWD")
	}
	if dir == "" {
		dir = an.rd.Home
	}
	// CDPATH: a relative name is looked up in each of its directories
	// first; every candidate is judged, and the first that exists is
	// where cd goes.
	if cdpath := an.getVar("CDPATH"); cdpath != "" && cdpath != markUnknown && !filepath.IsAbs(dir) &&
		!strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../") && dir != "." && dir != ".." {
		if strings.Contains(cdpath, markUnknown) || strings.Contains(cdpath, markBuilt) {
			an.uncertain = true
			an.judge(dir, UseOperand)
			an.cwdOK = false
			return ""
		}
		chosen := ""
		for _, c := range strings.Split(cdpath, ":") {
			if c == "" {
				c = "."
			}
			if c == "~" || strings.HasPrefix(c, "~/") {
				c = an.rd.Home + c[1:] // a tilde after ":" in an assignment
			}
			cand := JoinRaw(c, dir)
			if !filepath.IsAbs(c) {
				cand = JoinRaw(an.cwd, cand)
			}
			an.judge(cand, UseOperand)
			if fi, err := an.stat(an.unalias(cand)); chosen == "" && err == nil && fi.IsDir() {
				chosen = cand
			}
		}
		if chosen != "" {
			dir = chosen
		}
	}
	an.judge(dir, UseOperand)
	if base == "pushd" {
		an.dirs = append(an.dirs, an.cwd)
	}
	old, oldOK := an.cwd, an.cwdOK
	an.setCwd(dir)
	an.oldpwd = ""
	if oldOK {
		an.oldpwd = old
	}
	return ""
}

func (an *Reading) printf(args []string) string {
	if len(args) > 1 && args[0] == "-v" {
		if len(args) > 2 {
			an.setVar(args[1], an.format(args[2], args[3:]))
		}
		return ""
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return ""
	}
	s := an.format(args[0], args[1:])
	an.scanText(s, false)
	return s
}

// format is printf's output: the format is reused while arguments remain.
func (an *Reading) format(format string, args []string) string {
	var b strings.Builder
	for i := 0; i < 64; i++ {
		s, n, err := expand.Format(an.cfg(), format, args)
		if err != nil {
			return format + " " + strings.Join(args, " ")
		}
		b.WriteString(s)
		if n <= 0 || n >= len(args) {
			break
		}
		args = args[n:]
	}
	return b.String()
}

// read assigns standard input to variables; every line of it is judged as
// a path, since a while-read loop exists to hand its lines to a command.
func (an *Reading) read(base string, args []string, stdin string) string {
	var names []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if strings.ContainsAny(a, "pdnNtuaC") && i+1 < len(args) && len(a) == 2 {
				if a == "-a" {
					names = append(names, args[i+1])
				}
				i++
			}
			continue
		}
		names = append(names, a)
	}
	if len(names) == 0 {
		names = []string{"REPLY"}
		if base != "read" {
			names = []string{"MAPFILE"}
		}
	}
	lines := strings.Split(strings.TrimSuffix(stdin, "\n"), "\n")
	for _, l := range lines {
		an.judge(l, UseOperand)
	}
	if base != "read" {
		an.vars[names[0]] = expand.Variable{Set: true, Kind: expand.Indexed, List: lines}
		return ""
	}
	first := lines[0]
	if len(lines) > 1 {
		// Later lines reach the loop's body too: the analysis judged
		// them above; the variable gets the first with a marker.
		first += markUnknown
	}
	fs := strings.Fields(first)
	for i, n := range names {
		switch {
		case i < len(fs) && i == len(names)-1:
			an.setVar(n, strings.Join(fs[i:], " "))
		case i < len(fs):
			an.setVar(n, fs[i])
		default:
			an.setVar(n, "")
		}
	}
	return ""
}

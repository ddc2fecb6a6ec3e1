package bashread

// The programs of files and names: rm, dd, ln and mount (the links a line
// makes), find, and the programs that print names, not contents.

import (
	"path/filepath"
	"strings"
)

// rm -rf is a hard trigger.
func (an *Reading) rm(base string, args []string, stdin string) string {
	r, f := false, false
	for _, a := range args {
		short := strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--")
		r = r || a == "--recursive" || short && strings.ContainsAny(a, "rR")
		f = f || a == "--force" || short && strings.Contains(a, "f")
	}
	if r && f {
		an.act(ActRemovesTree, base, "")
	}
	return an.generic(base, args, stdin)
}

// dd reads if= and writes of=.
func (an *Reading) dd(base string, args []string, stdin string) string {
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "if":
			an.judge(v, UseOperand)
		case "of":
			an.judge(v, UseWrite)
			an.write(v)
			if strings.HasPrefix(v, "/dev/") {
				an.act(ActDeviceWrite, base, v)
			}
		}
	}
	return markUnknown
}

// namesOnly judges a program that prints names, not contents; its output
// is what it names.
func (an *Reading) namesOnly(base string, args []string, stdin string) string {
	plain := an.operands(args, UseOperand)
	if base == "fd" || base == "fdfind" {
		if len(plain) > 1 {
			plain = plain[1:]
		} else {
			plain = []string{"."}
		}
	}
	if base == "locate" {
		return markUnknown
	}
	if len(plain) == 0 {
		plain = []string{"."}
	}
	var out strings.Builder
	for _, p := range plain {
		switch base {
		case "realpath", "readlink":
			q := p
			if !filepath.IsAbs(q) {
				q = JoinRaw(an.cwd, q)
			}
			out.WriteString(an.phys(q) + "\n")
		case "dirname":
			out.WriteString(filepath.Dir(p) + "\n")
		case "basename":
			out.WriteString(filepath.Base(p) + "\n")
		default:
			q := p
			if !filepath.IsAbs(q) {
				q = JoinRaw(an.cwd, q)
			}
			if base == "ls" && !strings.ContainsAny(q, markUnknown+markBuilt) {
				if fi, err := an.stat(an.unalias(q)); err == nil && !fi.IsDir() {
					out.WriteString(p + "\n") // ls names a file as it was given
					continue
				}
			}
			out.WriteString(filepath.Clean(q) + "/" + markTree + "\n")
			if base == "ls" || base == "tree" {
				// ls prints the names in a directory, not their paths
				out.WriteString(markTree + "\n")
			}
		}
		if base == "basename" {
			break
		}
	}
	return out.String()
}

// link records links and bind mounts the line makes, so that later paths
// through them are judged by where they lead.
func (an *Reading) link(base string, args []string, stdin string) string {
	plain := an.operands(args, UseOperand)
	if base == "mount" && !hasAny(args, "--bind", "-B", "--rbind", "-o") {
		return ""
	}
	if len(plain) >= 2 {
		target := plain[len(plain)-2]
		link := plain[len(plain)-1]
		if !filepath.IsAbs(target) {
			if base == "ln" && !hasAny(args, "-r", "--relative") {
				target = filepath.Join(filepath.Dir(JoinRaw(an.cwd, link)), target)
			} else {
				target = JoinRaw(an.cwd, target)
			}
		}
		if !filepath.IsAbs(link) {
			link = JoinRaw(an.cwd, link)
		}
		an.aliases[filepath.Clean(link)] = filepath.Clean(target)
		an.write(link)
		an.judge(target, UseRecursive)
	}
	return ""
}

// findCmd judges find: its roots, the files its actions write, and
// -exec's command with {} standing for anything under the roots. Its output
// is its roots, marked as trees.
func (an *Reading) findCmd(base string, args []string, stdin string) string {
	var roots []string
	i := 0
	for i < len(args) && (args[i] == "-H" || args[i] == "-L" || args[i] == "-P" || strings.HasPrefix(args[i], "-O") || args[i] == "-D") {
		if args[i] == "-D" {
			i++
		}
		i++
	}
	for i < len(args) && !strings.HasPrefix(args[i], "-") && args[i] != "(" && args[i] != "!" {
		roots = append(roots, args[i])
		i++
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	for _, r := range roots {
		an.judge(r, UseOperand)
	}
	var out strings.Builder
	for _, r := range roots {
		out.WriteString(findTree(r) + "\n")
	}
	tree := strings.Fields(out.String())
	for ; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			cmd := args[i+1 : j]
			i = j
			for _, t := range tree {
				argv := make([]string, len(cmd))
				for k, c := range cmd {
					argv[k] = strings.ReplaceAll(c, "{}", t)
				}
				an.exec(argv, "")
			}
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				an.judge(args[i+1], UseWrite)
				an.write(args[i+1])
				i++
			}
		case "-newer", "-anewer", "-cnewer", "-samefile":
			if i+1 < len(args) {
				an.judge(args[i+1], UseOperand)
				i++
			}
		case "-delete":
			for _, r := range roots {
				an.write(r)
			}
		}
	}
	return out.String()
}

// findTree is what find prints of a root: the root, "/" and anything under
// it. A root that is wholly a value the analysis cannot know (find "$DIR",
// find $(cat dir.txt)) prints that unknown path and anything under it,
// not "/" and anything under it: an unset variable is the empty name,
// which find refuses, and a set one names what it names. A root the line
// writes with its own slash ("$DIR"/) keeps it, as rm -rf "$DIR"/ does.
func findTree(r string) string {
	if r != "" && strings.Trim(r, markUnknown+markBuilt) == "" {
		return r + markTree
	}
	return strings.TrimSuffix(r, "/") + "/" + markTree
}

package cli

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/termtext"
	"github.com/nodwyn/nodwyn/internal/trust"
)

// TrustCmd is `nodwyn trust`.
type TrustCmd struct {
	Folder string `short:"C" name:"folder" default:"." help:"The project folder whose .nodwyn/ files to trust (its own .nodwyn/, else the nearest one above it in its git work tree)."`
	List   bool   `help:"List the trusted folders and their files."`
	Revoke bool   `help:"Forget the folder's trust: its .nodwyn/ files are not loaded until it is trusted again."`
}

// Help explains what trust covers.
func (TrustCmd) Help() string {
	return `A project's .nodwyn/config.toml and its Scheme files (.nodwyn/init.scm and
every .nodwyn/**/*.scm it may load) run only once you have trusted them, in the
manner of direnv: 'nodwyn trust' shows each file (path, size, sha256, and what
changed since it was last trusted) and records its sha256 in
$XDG_DATA_HOME/nodwyn/trust.json. A file that changes afterwards is untrusted
again. nodwyn's embedded init.scm and your own $XDG_CONFIG_HOME/nodwyn/init.scm
are always trusted.

When 'nodwyn run' meets untrusted project files it asks at a terminal; an
unattended run (--unattended, --sandbox, --no-confirm, or no terminal on standard
input) stops with exit 2 before any model call, unless the run says
--trust-project (a flag of that run only: config and Scheme cannot say it).

The project's .nodwyn/ is the folder's own, else the nearest one above it up
to the root of its git work tree (where a run finds it too).`
}

// Run records, lists or revokes trust.
func (c *TrustCmd) Run(e *env) error {
	if c.List && c.Revoke {
		return usageErr("give --list or --revoke, not both")
	}
	home, _ := os.UserHomeDir()
	st, err := launch.OpenTrust(config.ResolveDirs(e.getenv, home))
	if err != nil {
		return err
	}
	if c.List {
		dirs := st.List()
		if len(dirs) == 0 {
			fmt.Fprintln(e.stdout, "no project is trusted")
			return nil
		}
		// The names are the projects' (a file's name may hold a newline or
		// an escape sequence): escaped, one line each.
		for _, d := range dirs {
			fmt.Fprintln(e.stdout, termtext.Line(d))
			files := st.Projects[d]
			for _, rel := range slices.Sorted(maps.Keys(files)) {
				en := files[rel]
				fmt.Fprintf(e.stdout, "  %s  %d bytes  sha256 %s\n", termtext.Line(rel), en.Size, termtext.Line(en.SHA256))
			}
		}
		return nil
	}
	// The project is found from a subdirectory as a run finds it.
	folder := config.ProjectDir(c.Folder)
	if c.Revoke {
		had, err := st.Revoke(folder)
		if err != nil {
			return &exitError{code: ExitFailed, err: err}
		}
		abs, _ := trust.Abs(folder)
		abs = termtext.Line(abs)
		if had {
			fmt.Fprintf(e.stdout, "revoked: %s's .nodwyn/ files are not loaded until it is trusted again\n", abs)
		} else {
			fmt.Fprintf(e.stdout, "%s was not trusted: nothing to revoke\n", abs)
		}
		return nil
	}
	p, err := st.Check(folder)
	if err != nil {
		return usageErr("%v", err)
	}
	n := 0
	for _, f := range p.Files {
		if f.Status != trust.Removed {
			n++
		}
	}
	if n == 0 {
		if len(p.Files) > 0 { // trusted once, all gone now
			showProject(e.stdout, st, p)
			if _, err := st.Revoke(p.Folder); err != nil {
				return &exitError{code: ExitFailed, err: err}
			}
		}
		abs, _ := filepath.Abs(c.Folder)
		_, looked := config.FindProject(abs)
		fmt.Fprintf(e.stdout, "no project files (.nodwyn/config.toml, .nodwyn/**/*.scm) in %s: nothing to trust\n", termtext.Line(strings.Join(looked, ", ")))
		return nil
	}
	showProject(e.stdout, st, p)
	if err := st.Trust(p); err != nil {
		return &exitError{code: ExitFailed, err: fmt.Errorf("recording trust in %s: %w", st.Path(), err)}
	}
	fmt.Fprintf(e.stdout, "trusted: %s (%d %s), recorded in %s\n", termtext.Line(p.Folder), n, plural(n, "file", "files"), st.Path())
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// showProject prints each project file with its status and, for a file
// that is new or changed, what it adds or changes. The project chose the
// files' names and contents, so both are escaped (termtext): neither can
// hide lines from the person reading them before answering.
func showProject(w io.Writer, st *trust.Store, p *trust.Project) {
	fmt.Fprintf(w, "project files of %s:\n", termtext.Line(p.Folder))
	for _, f := range p.Files {
		name := termtext.Line(f.Path)
		switch f.Status {
		case trust.Removed:
			fmt.Fprintf(w, "  %s  (%s; was %d bytes, sha256 %s)\n", name, f.Status, f.Was.Size, termtext.Line(f.Was.SHA256))
			continue
		default:
			fmt.Fprintf(w, "  %s  %d bytes  sha256 %s  (%s)\n", name, f.Size, f.SHA256, f.Status)
		}
		if f.Rel == ".nodwyn/config.toml" {
			for _, l := range projectMCPLines(p.Folder, f.Data) {
				fmt.Fprintf(w, "    %s\n", termtext.Line(l))
			}
		}
		var diff []string
		switch f.Status {
		case trust.New:
			diff = trust.Diff(nil, f.Data, 20)
		case trust.Changed:
			if old, ok := st.Previous(f); ok {
				fmt.Fprintf(w, "    what changed since it was trusted (was %d bytes):\n", f.Was.Size)
				diff = trust.Diff(old, f.Data, 40)
			} else {
				fmt.Fprintf(w, "    (was %d bytes, sha256 %s; no copy of the trusted version was kept to compare)\n", f.Was.Size, termtext.Line(f.Was.SHA256))
				diff = trust.Diff(nil, f.Data, 20)
			}
		}
		for _, l := range diff {
			fmt.Fprintf(w, "    %s\n", termtext.Text(l))
		}
	}
}

// projectMCPLines say which MCP servers a project's config.toml (data)
// declares, with the command line each runs as a process of the person's
// runs, or the URL it is reached at: what trusting the file starts.
func projectMCPLines(folder string, data []byte) []string {
	if !bytes.Contains(data, []byte("mcp")) {
		return nil
	}
	c, err := config.LoadWith(config.Dirs{}, folder, data, func(string) string { return "" })
	if err != nil {
		return []string{fmt.Sprintf("(the file does not load, so no MCP server of it would start: %v)", err)}
	}
	names := c.MCPServerNames()
	if len(names) == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("MCP %s it declares (each stdio server runs as a process of your runs, as a command would):", plural(len(names), "server", "servers"))}
	for _, n := range names {
		s := c.MCP.Servers[n]
		out = append(out, fmt.Sprintf("  %s: %s %s", n, s.Transport(), s.Declared(true)))
	}
	for _, note := range c.Notes {
		out = append(out, "  "+note)
	}
	return out
}

// terminalTrustAsk asks the person at the terminal on stdin; nil when
// stdin is not a terminal (nobody to ask).
func terminalTrustAsk(e *env) func(*trust.Store, *trust.Project) bool {
	f, ok := e.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return func(st *trust.Store, p *trust.Project) bool { return askTrust(f, e.stderr, st, p) }
}

// askTrust shows the untrusted project and reads one answer line.
func askTrust(in io.Reader, out io.Writer, st *trust.Store, p *trust.Project) bool {
	fmt.Fprintln(out, "This folder has project files nodwyn has not been told to trust; they run as you.")
	showProject(out, st, p)
	fmt.Fprint(out, "trust them and load them now? [y/N]: ")
	// One line, a byte at a time: the terminal's confirms read stdin later.
	return readYes(in)
}

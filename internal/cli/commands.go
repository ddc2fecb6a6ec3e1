package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/event"
	"github.com/nodwyn/nodwyn/internal/guard"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/prim"
	"github.com/nodwyn/nodwyn/internal/roles"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/nodwyn/nodwyn/internal/termtext"
)

// GuardCmd is `nodwyn guard`.
type GuardCmd struct {
	Sandbox    string   `help:"Judge as in a --sandbox container run." placeholder:"container"`
	Folder     string   `short:"C" name:"folder" default:"." help:"The run's folder."`
	Tool       string   `default:"shell-exec" help:"The tool (any of prim's table): the line is its command line (shell-exec, run-tests …), or else its path (fs-read, fs-write, fs-edit …)."`
	Unattended bool     `help:"Judge as in an unattended run."`
	Lean       bool     `help:"Judge as in the lean profile."`
	JSON       bool     `name:"json" help:"Print one JSON object: {\"decision\", \"checker\", \"reason\"}."`
	Line       []string `arg:"" passthrough:"" help:"The command line or path (after --)."`
}

// Help documents the exit codes.
func (GuardCmd) Help() string {
	return `Nothing is run. Exit codes: 0 allow, 3 would confirm (ordinary or security), 1 refused, 2 usage.

The line is judged as a run on this machine would judge it: with the kernel
floor when this kernel has Landlock (then, in sandbox mode, a line is not
refused only for building a path the guard cannot follow: the kernel refuses
what it really opens; see 'nodwyn doctor' and docs/sandbox.md).`
}

// Run judges the line.
func (c *GuardCmd) Run(e *env) error {
	words := c.Line
	if len(words) > 0 && words[0] == "--" { // kong keeps the separator in a passthrough argument
		words = words[1:]
	}
	line := strings.TrimSpace(strings.Join(words, " "))
	if line == "" {
		return usageErr("give the command line or path to judge after --")
	}
	if c.Sandbox != "" && c.Sandbox != "container" {
		return usageErr("--sandbox %q: the only value is 'container'", c.Sandbox)
	}
	folder, err := filepath.Abs(c.Folder)
	if err != nil {
		return usageErr("--folder: %v", err)
	}
	home, _ := os.UserHomeDir()
	dirs := config.ResolveDirs(e.getenv, home)
	sandbox := c.Sandbox == "container"
	// The guard of a dry session: the built-in checkers and those the init
	// chain adds, the project's only when it is trusted (as a run has them).
	pt, err := launch.TrustedProject(dirs, folder)
	if err != nil {
		return err
	}
	if pt.Note != "" {
		fmt.Fprintln(e.stderr, "nodwyn guard: "+pt.Note)
	}
	profile := "full"
	if c.Lean {
		profile = "lean"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := session.New(ctx, session.Options{
		Folder: folder, Dry: true, Sandbox: sandbox, Unattended: c.Unattended || sandbox, Profile: profile,
		Dirs: dirs, Getenv: e.getenv, Stdout: termtext.Writer(e.stderr), ProjectScheme: pt.Scheme, // what Scheme displays: escaped
	})
	if err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	defer s.Close()
	req, err := guardRequest(c.Tool, line)
	if err != nil {
		return err
	}
	d := s.Judge(ctx, req)
	if c.JSON {
		b, _ := json.Marshal(map[string]string{"decision": d.Verdict.String(), "checker": d.Checker, "reason": d.Reason})
		fmt.Fprintln(e.stdout, string(b))
	} else {
		// One line, whatever the path or a project's checker put in the reason.
		fmt.Fprintf(e.stdout, "%s", d.Verdict)
		if d.Checker != "" {
			fmt.Fprintf(e.stdout, " (%s)", termtext.Line(d.Checker))
		}
		if d.Reason != "" {
			fmt.Fprintf(e.stdout, ": %s", termtext.Line(d.Reason))
		}
		fmt.Fprintln(e.stdout)
	}
	switch d.Verdict {
	case guard.Allow:
		return nil
	case guard.Refuse:
		return &exitError{code: ExitFailed}
	default:
		return &exitError{code: ExitBudget}
	}
}

// guardRequest is the call of tool that line stands for, as prim's table
// has the tool: line is its command line, or else its path; its other
// required string parameters are empty.
func guardRequest(tool, line string) (guard.Request, error) {
	var names []string
	for _, t := range prim.Table() {
		names = append(names, t.Name)
		if t.Name != tool {
			continue
		}
		req := guard.Request{Tool: tool, Args: map[string]any{}}
		var cmd, path string
		for _, p := range t.Params {
			switch {
			case p.Role == roles.Command && cmd == "":
				cmd = p.Name
			case p.Role.IsPath() && path == "":
				path = p.Name
			case p.Required && p.Type == prim.String:
				req.Args[p.Name] = ""
			}
		}
		switch {
		case cmd != "":
			req.Args[cmd] = line
		case path != "":
			req.Args[path] = line
		default:
			return req, usageErr("--tool %s takes no command line and no path: nothing to judge", tool)
		}
		return req, nil
	}
	return guard.Request{}, usageErr("--tool %q: no such tool; the tools are: %s", tool, strings.Join(names, ", "))
}

func openStore(e *env) (*store.Store, error) {
	home, _ := os.UserHomeDir()
	dirs := config.ResolveDirs(e.getenv, home)
	return store.Open(dirs.Data)
}

// SessionsCmd is `nodwyn sessions`.
type SessionsCmd struct {
	Limit int  `short:"n" name:"limit" default:"20" help:"List the newest N sessions (0: all of them)." placeholder:"N"`
	JSON  bool `name:"json" help:"Print the sessions as JSON."`
}

// Run lists sessions.
func (c *SessionsCmd) Run(e *env) error {
	st, err := openStore(e)
	if err != nil {
		return err
	}
	list, err := st.ListSessions()
	if err != nil {
		return err
	}
	if c.Limit < 0 {
		return usageErr("--limit %d: give a number of sessions, or 0 for all of them", c.Limit)
	}
	more := 0
	if c.Limit > 0 && len(list) > c.Limit {
		more, list = len(list)-c.Limit, list[:c.Limit]
	}
	defer func() {
		if more > 0 { // on stderr: stdout stays the listing, or the JSON
			fmt.Fprintf(e.stderr, "%d more; --limit 0 for all\n", more)
		}
	}()
	if c.JSON {
		for i := range list {
			list[i].Messages = nil
		}
		return json.NewEncoder(e.stdout).Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "no sessions yet")
		return nil
	}
	// A task is whatever was typed or pasted (or a script gave), and a
	// state file can be edited: each cell is escaped to one line, so none
	// can move the cursor, erase rows or shift the columns.
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tUPDATED\tTOKENS\tFOLDER\tTASK")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Line(s.ID), termtext.Line(s.Status), s.Updated.Local().Format("2006-01-02 15:04"), sessionUsage(s.Usage),
			termtext.Line(s.Folder), termtext.Line(oneLine(s.Instruction, 50)))
	}
	return tw.Flush()
}

// LogCmd is `nodwyn log`.
type LogCmd struct {
	ID   string `arg:"" optional:"" default:"last" help:"The session: an id from 'nodwyn sessions', its start, or 'last' (the default)."`
	JSON bool   `name:"json" help:"Print the raw JSONL events."`
}

// Run renders a session's log.
func (c *LogCmd) Run(e *env) error {
	st, err := openStore(e)
	if err != nil {
		return err
	}
	id, err := st.ResolveID(c.ID)
	if err != nil {
		return usageErr("%v", err) // it names the id it was given
	}
	path := st.LogPath(id)
	if _, err := os.Stat(path); err != nil {
		return usageErr("no log for session %s at %s; 'nodwyn sessions' lists the ids", id, path)
	}
	if c.JSON {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(b)
		return err
	}
	evs, bad, err := store.ReadLogSkipping(path)
	if err != nil {
		return err
	}
	store.RenderLog(e.stdout, evs)
	for _, n := range bad {
		fmt.Fprintf(e.stderr, "nodwyn: %s line %d is not a valid event; skipped\n", path, n)
	}
	return nil
}

// UndoCmd is `nodwyn undo`.
type UndoCmd struct {
	Path    string `arg:"" optional:"" help:"The file whose versions to list (absolute, or relative to the current folder); when left out, every file under the folder (-C)."`
	Folder  string `short:"C" name:"folder" default:"." help:"Without a PATH: the folder whose files' versions to list or restore."`
	All     bool   `help:"Without a PATH: the versions of every folder's files."`
	Restore int    `help:"Restore the version with this number (from the listing); without a PATH only a version of a file under the folder (-C) is restored."`
}

// Run lists or restores versions.
func (c *UndoCmd) Run(e *env) error {
	st, err := openStore(e)
	if err != nil {
		return err
	}
	path := c.Path
	if path != "" {
		if path, err = filepath.Abs(path); err != nil {
			return usageErr("%v", err)
		}
	}
	vs, err := st.Versions(path)
	if err != nil {
		return err
	}
	where := ifPath(path)
	if path == "" && !c.All { // only the versions of files under the folder
		folder := launch.Physical(c.Folder)
		where = " under " + folder
		kept := vs[:0]
		for _, v := range vs {
			if rel, err := filepath.Rel(folder, v.Path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				kept = append(kept, v)
			}
		}
		vs = kept
	}
	if c.Restore != 0 {
		for _, v := range vs {
			if v.ID == c.Restore {
				if err := st.Restore(v); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "restored %s to version %d (%s, session %s)\n", termtext.Line(v.Path), v.ID, v.Time.Local().Format("2006-01-02 15:04:05"), v.Session)
				return nil
			}
		}
		return usageErr("no version %d%s; run 'nodwyn undo %s' to list them (--all: every folder's)", c.Restore, where, c.Path)
	}
	if len(vs) == 0 {
		fmt.Fprintln(e.stdout, "no versions kept"+where)
		return nil
	}
	// The paths are the ones the model's file tools wrote: escaped, one
	// row each.
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tTIME\tSESSION\tSIZE\tPATH")
	for _, v := range vs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\n", v.ID, v.Time.Local().Format("2006-01-02 15:04:05"), termtext.Line(v.Session), v.Size, termtext.Line(v.Path))
	}
	tw.Flush()
	fmt.Fprintln(e.stdout, "restore one with: nodwyn undo --restore VERSION")
	return nil
}

func ifPath(p string) string {
	if p == "" {
		return ""
	}
	return " for " + p
}

// sessionUsage is a saved session's usage in a column: "41k tokens in · 3k out
// · $0.07" ("-" before its first reply).
func sessionUsage(u map[string]int) string {
	d := event.Usage{InputTokens: u["input_tokens"], CachedTokens: u["cached_tokens"], OutputTokens: u["output_tokens"]}
	if c, ok := u["cost_micro_usd"]; ok {
		cost := float64(c) / 1e6
		d.CostUSD = &cost
	}
	t := strings.TrimPrefix(usageText(d), " · ")
	if t == "" {
		return "-"
	}
	return t
}

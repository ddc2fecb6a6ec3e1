package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/launch"
	"github.com/nodwyn/nodwyn/internal/mcp"
	"github.com/nodwyn/nodwyn/internal/session"
	"github.com/nodwyn/nodwyn/internal/termtext"
)

// MCPCmd is `nodwyn mcp`.
type MCPCmd struct {
	List MCPListCmd `cmd:"" help:"Start the declared MCP servers as a run would, list each one's state and tools, and stop them."`
}

// Help says where servers are declared.
func (MCPCmd) Help() string {
	return `MCP servers are declared in your config.toml, and in a project's
.nodwyn/config.toml once you trust it, as [mcp.servers.NAME] with command and
args (a stdio server: a process of the run, under the kernel floor and the
confinement of commands) or url and headers (streamable HTTP). Their tools
reach the model as NAME__tool; each call is an ordinary confirm unless your
own config.toml says allow = true or allow_tools = [...] (docs/config.md).`
}

// MCPListCmd is `nodwyn mcp list`.
type MCPListCmd struct {
	Folder  string `short:"C" name:"folder" default:"." help:"The folder a run would work in: its project's trusted .nodwyn/config.toml adds its servers."`
	Verbose bool   `short:"v" name:"verbose" help:"Also list each tool: the name the model sees and its one-line description."`
	Sandbox string `name:"sandbox" placeholder:"container" help:"Start them as a run in sandbox mode would (--sandbox container)."`
}

// Help says what is printed.
func (MCPListCmd) Help() string {
	return `Starts each MCP server the configuration declares exactly as a run in the
folder would (the same execution seam, kernel floor, namespaces and scrubbed
environment), waits until each answers its initialize and lists its tools, or
is left out at its init_timeout, then stops them all. For each server: its
transport, its state (ready, failed), how many tools it offers, how long it
took to be ready, and why it failed with the last lines it wrote to stderr.

Exit status: 0 when every server is ready (or none is declared), 1 when one
failed, 2 when the configuration does not load.`
}

// Run probes the servers and prints them.
func (c *MCPListCmd) Run(e *env) error {
	if c.Sandbox != "" && c.Sandbox != "container" {
		return usageErr("--sandbox %q: the only value is 'container'", c.Sandbox)
	}
	home, dirs := launch.HomeDirs(e.getenv)
	folder, err := filepath.Abs(c.Folder)
	if err != nil {
		return usageErr("--folder: %v", err)
	}
	if p, err := filepath.EvalSymlinks(folder); err == nil {
		folder = p
	}
	if err := launch.CheckFolder(folder, home, dirs, c.Sandbox != ""); err != nil {
		return err
	}
	pt, err := launch.TrustedProject(dirs, folder)
	if err != nil {
		return err
	}
	if pt.Note != "" {
		fmt.Fprintln(e.stderr, "nodwyn: "+pt.Note)
	}
	cfg, err := config.LoadWith(dirs, folder, pt.Config, e.getenv)
	if err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	for _, n := range cfg.Notes {
		fmt.Fprintln(e.stderr, "nodwyn: note: "+termtext.Line(n))
	}
	if len(cfg.MCP.Servers) == 0 {
		fmt.Fprintf(e.stdout, "no MCP server is declared (add [mcp.servers.NAME] to %s; see docs/config.md)\n", filepath.Join(dirs.Config, "config.toml"))
		return nil
	}
	contract, given, err := launch.LoadContract("", folder)
	if err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	opts := session.Options{Folder: folder, Dirs: dirs, Getenv: e.getenv, Sandbox: c.Sandbox != "", Unattended: c.Sandbox != "", Yolo: c.Sandbox != ""}
	launch.ConfigOptions(&opts, cfg, contract, given, pt.Trusted)
	ctx, stop := signalContext()
	defer stop()
	statuses, tools, err := session.ProbeMCP(ctx, opts)
	if err != nil {
		return &exitError{code: ExitFailed, err: fmt.Errorf("starting the MCP servers: %w", err)}
	}
	if failed := printMCP(e.stdout, "", cfg, statuses, tools, c.Verbose); failed > 0 {
		return &exitError{code: ExitFailed, err: fmt.Errorf("%d of %d MCP %s did not start", failed, len(statuses), plural(len(statuses), "server", "servers"))}
	}
	return nil
}

// printMCP prints one line for each server (indented by indent), its
// tools under it with verbose, and returns how many are not ready. What
// a server said of itself (its errors, its stderr, its tools' names and
// descriptions) is escaped: it cannot draw on the terminal.
func printMCP(w io.Writer, indent string, cfg *config.Config, statuses []mcp.Status, tools []mcp.Tool, verbose bool) (failed int) {
	for _, st := range statuses {
		decl := cfg.MCP.Servers[st.Name]
		line := fmt.Sprintf("%s%s: %s, %s", indent, st.Name, st.Transport, st.State)
		if st.State == mcp.StateReady {
			line += fmt.Sprintf(", %d %s, ready in %s", st.Tools, plural(st.Tools, "tool", "tools"), roundDuration(st.Took))
		} else {
			failed++
			if st.Took > 0 {
				line += fmt.Sprintf(" after %s", roundDuration(st.Took))
			}
		}
		if st.Server != "" {
			line += " (" + st.Server + ")"
		}
		fmt.Fprintln(w, termtext.Line(line))
		fmt.Fprintf(w, "%s  %s  (%s)\n", indent, termtext.Line(decl.Declared(false)), termtext.Line(cfg.Origin[config.MCPServerKey(st.Name)]))
		if st.Err != nil {
			fmt.Fprintf(w, "%s  error: %s\n", indent, termtext.Line(st.Err.Error()))
		}
		if st.State != mcp.StateReady && strings.TrimSpace(st.Stderr) != "" {
			fmt.Fprintf(w, "%s  its stderr, last lines:\n", indent)
			for _, l := range strings.Split(strings.TrimRight(st.Stderr, "\n"), "\n") {
				fmt.Fprintf(w, "%s    %s\n", indent, termtext.Line(l))
			}
		}
		if !verbose {
			continue
		}
		for _, t := range tools {
			if t.Server != st.Name {
				continue
			}
			allowed := ""
			if decl.Allow || containsString(decl.AllowTools, t.Remote) {
				allowed = " [allowed]"
			}
			fmt.Fprintf(w, "%s  %s%s: %s\n", indent, termtext.Line(t.Name), allowed, termtext.Line(t.Summary))
		}
	}
	return failed
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// signalContext ends on SIGINT or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// Package mcptest is the MCP server nodwyn's tests run: the same SDK
// nodwyn's client uses, over stdio or streamable HTTP, with misbehaviours
// chosen by flag. A test binary becomes the server when it is started with
// Env set (TestMain calls ServeIfAsked first), so no test builds a program:
//
//	func TestMain(m *testing.M) { mcptest.ServeIfAsked(); os.Exit(m.Run()) }
//
// and a server is declared as Command: os.Args[0], Args: flags, Env:
// {Env: "1"} (StdioEnv). Its tools:
//
//	echo {text}           answers the text
//	slow {}               answers when the call is cancelled, not before (says so on stderr)
//	crash {}              exits (status 3) in the middle of the call, leaving a child holding its stdout
//	fail {}               answers with isError set
//	mixed {}              answers text, an image, a resource link and an embedded resource
//	getenv {name}         answers the variable's value, or (unset)
//	spawn {}              starts a child that sleeps, and answers its pid
//	read_file {path}      answers the file's content, or the error reading it
//	write_file {path, content}  writes the file, answers "wrote N bytes" or the error
//	fetch {url}           answers the URL it was given (it fetches nothing)
//	home_probe {}         reads $HOME/.ssh/id_rsa and appends to $HOME/.bashrc on its own,
//	                      and answers what each gave: the kernel floor's test
//	tool_NN {...}         -tools N adds N tools with realistic descriptions and schemas
//
// Flags: -http ADDR serves streamable HTTP there and prints its URL on a
// line; -require-header "Name: value" refuses HTTP requests without it;
// -silent reads stdin and never answers (the server that never answers
// initialize; it ignores SIGTERM and its stdin's end, so only SIGKILL
// stops it); -tools N; -sleep sleeps until killed (spawn's and crash's
// child).
package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Env is the variable that makes a test binary the server: ServeIfAsked
// serves when it is set, with the binary's arguments as the flags.
const Env = "NODWYN_MCPTEST"

// StdioEnv is the Env of a server entry that runs the test binary as the
// server.
func StdioEnv() map[string]string { return map[string]string{Env: "1"} }

// ServeIfAsked serves, and exits, when Env is set; otherwise it returns.
// TestMain calls it before anything else.
func ServeIfAsked() {
	if os.Getenv(Env) == "" {
		return
	}
	if err := Serve(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Serve runs the server as the flags in args say, over stdio unless -http
// is given, until its stdin ends (stdio) or it is killed (HTTP).
func Serve(args []string) error {
	fs := flag.NewFlagSet("mcptest", flag.ContinueOnError)
	httpAddr := fs.String("http", "", "serve streamable HTTP on this address (127.0.0.1:0) and print its URL")
	header := fs.String("require-header", "", "with -http: refuse requests without this header (Name: value)")
	silent := fs.Bool("silent", false, "read stdin and never answer")
	sleep := fs.Bool("sleep", false, "sleep until killed")
	ntools := fs.Int("tools", 0, "add this many generated tools")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *sleep:
		select {}
	case *silent:
		signal.Ignore(syscall.SIGTERM)
		_, _ = io.Copy(io.Discard, os.Stdin)
		select {}
	}
	s := NewServer(*ntools)
	if *httpAddr == "" {
		return s.Run(context.Background(), &sdk.StdioTransport{})
	}
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	return http.Serve(ln, Handler(s, *header))
}

// Handler serves s over streamable HTTP; requireHeader ("Name: value"),
// when not "", refuses requests without that header (401).
func Handler(s *sdk.Server, requireHeader string) http.Handler {
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	if requireHeader == "" {
		return h
	}
	name, value, _ := strings.Cut(requireHeader, ":")
	value = strings.TrimSpace(value)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(name) != value {
			http.Error(w, "missing "+name, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

var empty = json.RawMessage(`{"type":"object","properties":{}}`)

func args[T any](req *sdk.CallToolRequest) (T, error) {
	var a T
	err := json.Unmarshal(req.Params.Arguments, &a)
	return a, err
}

// NewServer is the server with its fixed tools and ntools generated ones.
func NewServer(ntools int) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "nodwyn-test", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{
		Name:        "echo",
		Description: "Echo the text back. Useful for checking that the server answers.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"]}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		a, err := args[struct{ Text string }](req)
		if err != nil {
			return nil, err
		}
		return text(a.Text), nil
	})
	s.AddTool(&sdk.Tool{Name: "slow", Description: "Answer only when cancelled.", InputSchema: empty},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "mcpserver: slow call started")
			<-ctx.Done()
			fmt.Fprintln(os.Stderr, "mcpserver: slow call cancelled")
			return text("cancelled"), nil
		})
	s.AddTool(&sdk.Tool{Name: "crash", Description: "Exit in the middle of the call.", InputSchema: empty},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			// It leaves a child holding its stdout, as a shell wrapper's
			// server can: the pipe does not end with the server.
			if self, err := os.Executable(); err == nil {
				child := exec.Command(self, "-sleep")
				child.Stdout = os.Stdout
				if child.Start() == nil {
					fmt.Fprintf(os.Stderr, "mcpserver: child %d\n", child.Process.Pid)
				}
			}
			fmt.Fprintln(os.Stderr, "mcpserver: crashing as asked")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "fail", Description: "Answer with an error result.", InputSchema: empty},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			r := text("it failed as asked")
			r.IsError = true
			return r, nil
		})
	s.AddTool(&sdk.Tool{Name: "mixed", Description: "Answer every kind of content.", InputSchema: empty},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			size := int64(2048)
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "first"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG fake")},
				&sdk.TextContent{Text: "second"},
				&sdk.ResourceLink{URI: "file:///tmp/report.txt", Name: "report", MIMEType: "text/plain", Size: &size},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://notes", MIMEType: "text/plain", Text: "hello\nworld"}},
			}}, nil
		})
	s.AddTool(&sdk.Tool{
		Name:        "getenv",
		Description: "Answer the value of an environment variable.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		a, err := args[struct{ Name string }](req)
		if err != nil {
			return nil, err
		}
		v, ok := os.LookupEnv(a.Name)
		if !ok {
			return text("(unset)"), nil
		}
		return text(v), nil
	})
	s.AddTool(&sdk.Tool{Name: "spawn", Description: "Start a child that sleeps; answer its pid.", InputSchema: empty},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			self, err := os.Executable()
			if err != nil {
				return nil, err
			}
			cmd := exec.Command(self, "-sleep")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			go func() { _ = cmd.Wait() }()
			return text(strconv.Itoa(cmd.Process.Pid)), nil
		})
	s.AddTool(&sdk.Tool{
		Name:        "read_file",
		Description: "Read a file and answer its content.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the file to read"}},"required":["path"]}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		a, err := args[struct{ Path string }](req)
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(a.Path)
		if err != nil {
			r := text(err.Error())
			r.IsError = true
			return r, nil
		}
		return text(string(b)), nil
	})
	s.AddTool(&sdk.Tool{
		Name:        "write_file",
		Description: "Write content to a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the file to write"},"content":{"type":"string"}},"required":["path","content"]}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		a, err := args[struct{ Path, Content string }](req)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(a.Path, []byte(a.Content), 0o644); err != nil {
			r := text(err.Error())
			r.IsError = true
			return r, nil
		}
		return text(fmt.Sprintf("wrote %d bytes", len(a.Content))), nil
	})
	s.AddTool(&sdk.Tool{
		Name:        "fetch",
		Description: "Answer the URL given (nothing is fetched).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","format":"uri"}},"required":["url"]}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		a, err := args[struct{ URL string }](req)
		if err != nil {
			return nil, err
		}
		return text("fetched " + a.URL), nil
	})
	s.AddTool(&sdk.Tool{Name: "home_probe", Description: "Read ~/.ssh/id_rsa and append to ~/.bashrc, on the server's own account.", InputSchema: empty},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(HomeProbe()), nil
		})
	for i := range ntools {
		addGenerated(s, i)
	}
	return s
}

// HomeProbe reads $HOME/.ssh/id_rsa and appends a line to $HOME/.bashrc,
// and says what each gave: "read: <content or error>; write: <ok or
// error>". A denied access names the error (permission denied).
func HomeProbe() string {
	home := os.Getenv("HOME")
	var out []string
	if b, err := os.ReadFile(filepath.Join(home, ".ssh", "id_rsa")); err != nil {
		out = append(out, "read: "+errText(err))
	} else {
		out = append(out, "read: "+strings.TrimSpace(string(b)))
	}
	f, err := os.OpenFile(filepath.Join(home, ".bashrc"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.WriteString("echo pwned\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		out = append(out, "write: "+errText(err))
	} else {
		out = append(out, "write: ok")
	}
	return strings.Join(out, "; ")
}

func errText(err error) string {
	if errors.Is(err, os.ErrPermission) {
		return "permission denied (" + err.Error() + ")"
	}
	return err.Error()
}

// The generated tools look like those of the servers people declare (a
// code host's, a database's): a few sentences of description and eight
// parameters, each described, some with enums and formats.
var kinds = []struct{ verb, noun, about string }{
	{"create", "issue", "Create a new issue in a repository. The issue is opened with the given title and body, and may be assigned and labelled at once. Returns the issue's number and URL."},
	{"list", "pull_requests", "List pull requests in a repository, newest first. Filter by state, base branch and author; results are paginated. Each entry has the number, title, author, state and head branch."},
	{"search", "code", "Search code across repositories with the code host's query syntax. Supports qualifiers such as language:, path: and repo:. Returns matching files with line fragments."},
	{"get", "file_contents", "Get the contents of a file or directory at a given ref. Files are returned decoded; directories as a listing of entries with their types and sizes."},
	{"run", "query", "Run a read-only SQL query against the configured database and return the rows as a table. Long results are truncated to the row limit; use LIMIT and OFFSET to page."},
}

// Generated reports whether name is the remote name of a generated tool.
func Generated(name string) bool {
	for _, k := range kinds {
		if strings.HasPrefix(name, k.verb+"_"+k.noun+"_") {
			return true
		}
	}
	return false
}

func addGenerated(s *sdk.Server, i int) {
	k := kinds[i%len(kinds)]
	name := fmt.Sprintf("%s_%s_%02d", k.verb, k.noun, i)
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"owner":    map[string]any{"type": "string", "description": "The account owner of the repository. The name is not case sensitive."},
			"repo":     map[string]any{"type": "string", "description": "The name of the repository without the .git extension. The name is not case sensitive."},
			"path":     map[string]any{"type": "string", "description": "Path of the file or directory in the repository, relative to its root (for example src/main.go)."},
			"url":      map[string]any{"type": "string", "format": "uri", "description": "The web address of the item, as returned by an earlier call; when given, owner and repo may be left out."},
			"state":    map[string]any{"type": "string", "enum": []string{"open", "closed", "all"}, "default": "open", "description": "Which items to include, by their state."},
			"per_page": map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "default": 30, "description": "The number of results per page (max 100)."},
			"page":     map[string]any{"type": "integer", "minimum": 1, "default": 1, "description": "The page number of the results to fetch."},
			"labels":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Labels to associate with the item. Only people with push access can set labels; they are silently dropped otherwise."},
		},
		"required":             []string{"owner", "repo"},
		"additionalProperties": false,
	}
	raw, _ := json.Marshal(schema)
	s.AddTool(&sdk.Tool{Name: name, Description: k.about, InputSchema: json.RawMessage(raw)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(name + " done"), nil
		})
}

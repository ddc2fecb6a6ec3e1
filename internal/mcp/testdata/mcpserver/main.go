// Command mcpserver is the MCP server internal/mcp's tests run: the same SDK
// nodwyn's client uses, over stdio (the default) or streamable HTTP on
// 127.0.0.1 (-http). Its tools:
//
//	echo {text}       answers the text
//	slow {}           answers when the call is cancelled, not before (says so on stderr)
//	crash {}          exits (status 3) in the middle of the call, leaving a child holding its stdout
//	fail {}           answers with isError set
//	mixed {}          answers text, an image, a resource link and an embedded resource
//	getenv {name}     answers the variable's value, or (unset)
//	spawn {}          starts a child that sleeps, and answers its pid
//	tool_NN {...}     -tools N adds N tools with realistic descriptions and schemas
//
// -silent is a plain program that reads stdin and never answers anything:
// the server that never answers initialize. It ignores SIGTERM and keeps
// running after its stdin ends, so only SIGKILL stops it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address (127.0.0.1:0) and print its URL")
	header := flag.String("require-header", "", "with -http: refuse requests without this header (Name: value)")
	silent := flag.Bool("silent", false, "read stdin and never answer")
	sleep := flag.Bool("sleep", false, "sleep until killed (spawn's child)")
	ntools := flag.Int("tools", 0, "add this many generated tools")
	flag.Parse()

	switch {
	case *sleep:
		select {}
	case *silent:
		signal.Ignore(syscall.SIGTERM)
		_, _ = io.Copy(io.Discard, os.Stdin)
		select {}
	}

	s := newServer(*ntools)
	if *httpAddr == "" {
		if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "mcpserver:", err)
			os.Exit(1)
		}
		return
	}
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpserver:", err)
		os.Exit(1)
	}
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	if *header != "" {
		name, value, _ := cut(*header)
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(name) != value {
				http.Error(w, "missing "+name, http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	if err := http.Serve(ln, h); err != nil {
		fmt.Fprintln(os.Stderr, "mcpserver:", err)
		os.Exit(1)
	}
}

func cut(h string) (string, string, bool) {
	for i := 0; i < len(h); i++ {
		if h[i] == ':' {
			v := h[i+1:]
			for len(v) > 0 && v[0] == ' ' {
				v = v[1:]
			}
			return h[:i], v, true
		}
	}
	return h, "", false
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

var empty = json.RawMessage(`{"type":"object","properties":{}}`)

func newServer(ntools int) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "nodwyn-test", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{
		Name:        "echo",
		Description: "Echo the text back. Useful for checking that the server answers.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"]}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		return text(args.Text), nil
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
		var args struct{ Name string }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		v, ok := os.LookupEnv(args.Name)
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
	for i := range ntools {
		addGenerated(s, i)
	}
	return s
}

// The generated tools look like those of the servers people declare (a
// code host's, a database's): a few sentences of description and five or
// six parameters, each described, some with enums and formats.
var kinds = []struct{ verb, noun, about string }{
	{"create", "issue", "Create a new issue in a repository. The issue is opened with the given title and body, and may be assigned and labelled at once. Returns the issue's number and URL."},
	{"list", "pull_requests", "List pull requests in a repository, newest first. Filter by state, base branch and author; results are paginated. Each entry has the number, title, author, state and head branch."},
	{"search", "code", "Search code across repositories with the code host's query syntax. Supports qualifiers such as language:, path: and repo:. Returns matching files with line fragments."},
	{"get", "file_contents", "Get the contents of a file or directory at a given ref. Files are returned decoded; directories as a listing of entries with their types and sizes."},
	{"run", "query", "Run a read-only SQL query against the configured database and return the rows as a table. Long results are truncated to the row limit; use LIMIT and OFFSET to page."},
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

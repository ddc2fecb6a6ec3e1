package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/mcp/mcptest"
)

// tokens estimates a text's tokens as its bytes / 4 (the usual rule of
// thumb for English and JSON; a provider's tokenizer differs by a few
// tenths either way, the same way for both sides of the comparison).
func tokens(s string) int { return (len(s) + 3) / 4 }

// listCost is what 50 generated tools (mcptest -tools 50: a
// code host's and a database's tools, each a few sentences and eight
// described parameters) cost in a request: as names and one-liners, one
// line each ("name: summary"), against as a provider's tool definitions
// with their full descriptions and schemas.
func listCost(tb testing.TB) (n, lean, full int) {
	m := Start(context.Background(), []Server{testServer("gh", "-tools", "50")}, fastOpts())
	defer m.Close()
	if st := m.Servers()[0]; st.State != StateReady {
		tb.Fatalf("%+v", st)
	}
	var lines strings.Builder
	var defs []map[string]any
	for _, t := range m.Tools("gh") {
		if !mcptest.Generated(t.Remote) {
			continue // the fixed tools (echo, slow, …)
		}
		n++
		lines.WriteString(t.Name + ": " + t.Summary + "\n")
		defs = append(defs, map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.Schema})
	}
	b, err := json.Marshal(defs)
	if err != nil {
		tb.Fatal(err)
	}
	return n, tokens(lines.String()), tokens(string(b))
}

// TestToolListTokens logs the figure issue 31 asks for; run with -v:
//
//	go test -run TestToolListTokens -v ./internal/mcp/
func TestToolListTokens(t *testing.T) {
	n, lean, full := listCost(t)
	if n != 50 {
		t.Fatalf("%d generated tools, want 50", n)
	}
	t.Logf("%d MCP tools: names and one-liners ≈ %d tokens, full descriptions and schemas ≈ %d tokens (bytes/4)", n, lean, full)
	if lean*5 > full {
		t.Errorf("the one-liners (%d tokens) are not a fraction of the schemas (%d)", lean, full)
	}
}

func BenchmarkToolListTokens(b *testing.B) {
	var n, lean, full int
	for b.Loop() {
		n, lean, full = listCost(b)
	}
	b.ReportMetric(float64(n), "tools")
	b.ReportMetric(float64(lean), "lean-tokens")
	b.ReportMetric(float64(full), "full-tokens")
}

// BenchmarkStartStdio is the start-up one stdio server adds: starting the
// process, initialize, tools/list (its Close is not counted).
//
//	go test -run '^$' -bench Start -benchtime 20x ./internal/mcp/
func BenchmarkStartStdio(b *testing.B) {
	servers := []Server{testServer("t")}
	for b.Loop() {
		m := Start(context.Background(), servers, fastOpts())
		b.StopTimer()
		if st := m.Servers()[0]; st.State != StateReady {
			b.Fatalf("%+v", st)
		}
		m.Close()
		b.StartTimer()
	}
}

// BenchmarkStartNone is the same with no server declared.
func BenchmarkStartNone(b *testing.B) {
	for b.Loop() {
		m := Start(context.Background(), nil, fastOpts())
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
}

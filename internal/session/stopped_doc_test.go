package session

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every value the session writes in tool.result's stopped is one
// docs/events.md names, and it names no other: stopCause's for each cause
// a run's context ends with, and closeInterrupted's two.
func TestStoppedValuesAreDocumented(t *testing.T) {
	causes := []error{ErrInterrupted, ErrDeadline, ErrToolBudget, ErrStorage, context.Canceled}
	var written []string
	for _, cause := range causes {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		written = append(written, stopCause(ctx).code)
	}
	written = append(written, stoppedNotRun, stoppedSessionEnded)
	// A stopReason added to stopCause is a cause this test must list.
	src, err := os.ReadFile("turn.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), `stopReason{"`); n != len(causes) {
		t.Errorf("turn.go has %d stopReason values, the test tries %d causes: add the new cause to the list", n, len(causes))
	}

	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "events.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "\n## `tool.result`\n")
	row := ""
	for line := range strings.Lines(after) {
		if strings.HasPrefix(line, "| `stopped` |") {
			row = line
			break
		}
	}
	cells := strings.Split(row, "|")
	if !ok || len(cells) < 5 {
		t.Fatalf("docs/events.md has no row for tool.result's stopped")
	}
	var named []string
	for _, m := range regexp.MustCompile("`([^`]*)`").FindAllStringSubmatch(cells[4], -1) {
		named = append(named, m[1])
	}
	for _, v := range written {
		if !slices.Contains(named, v) {
			t.Errorf("the session writes stopped %q, which docs/events.md does not name (it names %q)", v, named)
		}
	}
	for _, v := range named {
		if !slices.Contains(written, v) {
			t.Errorf("docs/events.md names stopped %q, which the session does not write (it writes %q)", v, written)
		}
	}
}

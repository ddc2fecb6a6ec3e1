package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// A command parsed by itself (oneCommand, the fast start) gets exactly
// the values the whole CLI gives it, defaults included.
func TestOneCommandParsesAsTheWholeCLI(t *testing.T) {
	for _, args := range [][]string{
		{"run", "task"},
		{"run", "--provider", "openai", "--model", "m", "--unattended", "-q", "-C", "/tmp", "a", "task"},
		{"run", "--judge", "--timeout", "5m", "--max-tool-calls", "3", "x"},
		{"run", "--judge=gpt-x", "--reasoning", "high", "--sandbox", "container", "x"},
		{"chat", "--provider", "anthropic"},
		{"guard", "--sandbox", "container", "--", "cat", "a"},
		{"daemon", "--socket", "/tmp/s"},
		{"version"},
	} {
		var whole CLI
		p, err := kong.New(&whole, kong.Name("nodwyn"), kong.Exit(func(int) { t.Fatalf("%v: exit", args) }))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Parse(args); err != nil {
			t.Fatalf("%v: the whole CLI: %v", args, err)
		}
		root := oneCommand(args)
		if root == nil {
			t.Fatalf("%v: no fast start", args)
		}
		p1, err := kong.New(root, kong.Name("nodwyn"), kong.Exit(func(int) { t.Fatalf("%v: exit", args) }))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p1.Parse(args); err != nil {
			t.Fatalf("%v: by itself: %v", args, err)
		}
		got := reflect.ValueOf(root).Elem().Field(0).Interface()
		want := reflect.ValueOf(whole).FieldByName(reflect.ValueOf(root).Elem().Type().Field(0).Name).Interface()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v:\nby itself  %+v\nwhole CLI  %+v", args, got, want)
		}
	}
	// Help, and no command, go through the whole CLI.
	for _, args := range [][]string{nil, {"--help"}, {"run", "--help"}, {"run", "-h", "x"}, {"runs"}, {"--json", "run"}} {
		if oneCommand(args) != nil {
			t.Errorf("%v: a fast start", args)
		}
	}
}

// What a mistake prints is the whole CLI's message, once, as before.
func TestOneCommandErrorsAreTheWholeCLIs(t *testing.T) {
	var out, errOut strings.Builder
	code := Main([]string{"run", "--no-such-flag", "x"}, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d", code, ExitUsage)
	}
	for _, want := range []string{"nodwyn: unknown flag --no-such-flag", "run 'nodwyn run --help' for usage"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q: %s", want, errOut.String())
		}
	}
	if n := strings.Count(errOut.String(), "unknown flag"); n != 1 {
		t.Errorf("the error printed %d times", n)
	}
}

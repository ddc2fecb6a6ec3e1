package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// A contract says how a run's work is checked: the checks self-check runs
// (the first declared one) and, optionally, how commands run ([sandbox]).
// It is <folder>/.nodwyn/contract.toml, or the file nodwyn run --contract
// names (a harness's own, outside the folder):
//
//	[[check]]
//	name = "unit"
//	command = "go test ./..."
//
//	[sandbox]
//	mode = "working_copy"
//
// Self-validation is evidence only: nothing nodwyn decides changes with a
// check's result. A check's command is judged by the guard like any command
// line before it runs.
type Contract struct {
	Path    string // the file read
	Checks  []Check
	Sandbox Seam
	// SandboxLine is the line of [sandbox] mode in the file, 0 if unset.
	SandboxLine int
}

// Check is one [[check]] of a contract.
type Check struct {
	Name    string `toml:"name"`
	Command string `toml:"command"`
}

// ProjectContract returns the path of the project's contract for a run in
// folder, in the .nodwyn/ [ProjectDir] finds.
func ProjectContract(folder string) string {
	return filepath.Join(ProjectDir(folder), ".nodwyn", "contract.toml")
}

// LoadContract reads a contract. A file that does not exist is (nil, nil)
// when missingOK, else an error. A malformed file, an unknown key, a check
// without a name or a command, and [sandbox] mode = "container" are
// *Error values naming the file and the line.
func LoadContract(path string, missingOK bool) (*Contract, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if missingOK && errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read contract %s: %w", path, err)
	}
	return ParseContract(path, data)
}

// ParseContract is LoadContract of data read from path.
func ParseContract(path string, data []byte) (*Contract, error) {
	text := string(data)
	lines := keyLines(text)
	var f struct {
		Check   []Check `toml:"check"`
		Sandbox Seam    `toml:"sandbox"`
	}
	md, err := toml.Decode(text, &f)
	if err != nil {
		var te toml.ParseError
		if errors.As(err, &te) {
			return nil, parseError(path, text, lines, err)
		}
		return nil, &Error{File: path, Msg: strings.TrimPrefix(err.Error(), "toml: ") + `; a contract holds [[check]] tables (name = "...", command = "...") and an optional [sandbox] table`}
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0].String()
		return nil, &Error{File: path, Line: lines.find(k), Key: k, Msg: "unknown key; a contract holds [[check]] name and command, and [sandbox] mode and checkout"}
	}
	c := &Contract{Path: path, Checks: f.Check, Sandbox: f.Sandbox}
	checkLines := tableLines(text, "[[check]]")
	for i, ch := range f.Check {
		line := 0
		if i < len(checkLines) {
			line = checkLines[i]
		}
		switch {
		case strings.TrimSpace(ch.Name) == "":
			return nil, &Error{File: path, Line: line, Key: fmt.Sprintf("check[%d].name", i+1), Msg: `a check needs a name: name = "unit"`}
		case strings.TrimSpace(ch.Command) == "":
			return nil, &Error{File: path, Line: line, Key: fmt.Sprintf("check[%d].command", i+1), Msg: `a check needs a command: command = "go test ./..."`}
		}
	}
	if md.IsDefined("sandbox", "mode") {
		c.SandboxLine = lines.find("sandbox.mode")
		if err := CheckSeamMode(f.Sandbox.Mode); err != nil {
			return nil, &Error{File: path, Line: c.SandboxLine, Key: "sandbox.mode", Msg: err.Error()}
		}
	}
	if md.IsDefined("sandbox", "deny") {
		return nil, &Error{File: path, Line: lines.find("sandbox.deny"), Key: "sandbox.deny", Msg: "a contract cannot add to the credential catalogue; only your own config.toml's [sandbox] deny does: remove the key"}
	}
	for _, k := range []string{"allow_hosts", "allow_ports", "network", "namespaces"} {
		if md.IsDefined("sandbox", k) {
			return nil, &Error{File: path, Line: lines.find("sandbox." + k), Key: "sandbox." + k, Msg: "a contract cannot choose where commands may connect; only your own config.toml's [sandbox] " + k + " does: remove the key"}
		}
	}
	if md.IsDefined("sandbox", "writable") {
		return nil, &Error{File: path, Line: lines.find("sandbox.writable"), Key: "sandbox.writable", Msg: "a contract cannot widen what commands may write; only your own config.toml's [sandbox] writable does: remove the key"}
	}
	if md.IsDefined("sandbox") && md.Type("sandbox") != "Hash" {
		return nil, &Error{File: path, Line: lines.find("sandbox"), Key: "sandbox", Msg: "must be a table ([sandbox] with mode and checkout); sandbox mode is a property of a run (nodwyn run --sandbox container)"}
	}
	return c, nil
}

// tableLines returns the lines (1-based) where header starts a table.
func tableLines(text, header string) []int {
	var out []int
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), header) {
			out = append(out, i+1)
		}
	}
	return out
}

// SeamLayer is one source of [sandbox] settings.
type SeamLayer struct {
	Source string // where it came from: "<file>:<line>", "the profile full"
	Seam   Seam
	// MayUndo: this source may choose no_sandbox over an earlier
	// working_copy (the person's own config, a --contract FILE given on
	// the command line). A project's files and a profile only contain
	// more: their no_sandbox after a working_copy is not taken.
	MayUndo bool
}

// ResolveSeam applies layers in order (the configuration, the profile, the
// contract), a later one winning key by key, and returns the result (mode
// "no_sandbox" and checkout "." when none sets them), where the mode came
// from ("" for the default), and notes on what was not taken.
func ResolveSeam(layers []SeamLayer) (seam Seam, modeFrom string, notes []string) {
	seam = Seam{Mode: "no_sandbox", Checkout: "."}
	for _, l := range layers {
		if m := l.Seam.Mode; m != "" && m != seam.Mode {
			if seam.Mode == "working_copy" && !l.MayUndo {
				notes = append(notes, fmt.Sprintf("%s asks for [sandbox] mode = %q; kept %q from %s: only the person's config or --contract can undo a working copy", l.Source, m, seam.Mode, modeFrom))
			} else {
				seam.Mode, modeFrom = m, l.Source
			}
		}
		if l.Seam.Checkout != "" {
			seam.Checkout = l.Seam.Checkout
		}
	}
	return seam, modeFrom, notes
}

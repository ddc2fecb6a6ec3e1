package prim

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/sandbox"
)

func TestSelfCheckIsOfferedOnlyInAWorkingCopyWithARecorder(t *testing.T) {
	for _, tc := range []struct {
		seam  sandbox.Mode
		sc    *SelfCheck
		offer bool
	}{
		{"", nil, false},
		{sandbox.ModeNoSandbox, &SelfCheck{}, false},
		{sandbox.ModeWorkingCopy, nil, false},
		{sandbox.ModeWorkingCopy, &SelfCheck{}, true},
	} {
		tools := newTools(t, Options{Seam: tc.seam, SelfCheck: tc.sc})
		got := slices.Contains(tools.Names(), "self-check") && slices.Contains(tools.Names(), "run-tests")
		if got != tc.offer {
			t.Errorf("seam %q selfcheck %v: offered %v, want %v", tc.seam, tc.sc != nil, got, tc.offer)
		}
		if !got {
			res := run(t, tools, "self-check", nil)
			if !res.IsError || !strings.Contains(res.Output, "not offered here") {
				t.Errorf("self-check where not offered: %q", res.Output)
			}
		}
	}
}

func TestSelfCheckRunsTheContractsFirstCheckAndRecordsIt(t *testing.T) {
	var got []Validation
	folder := t.TempDir()
	writeFile(t, folder, "test.sh", "echo checking; echo polluted > out.txt; exit 3\n")
	tools := newTools(t, Options{Folder: folder, Seam: sandbox.ModeWorkingCopy, SelfCheck: &SelfCheck{
		Contract: "c.toml",
		Checks:   []Check{{Name: "unit", Command: "sh test.sh"}, {Name: "lint", Command: "false"}},
		Record:   func(v Validation) (string, error) { got = append(got, v); return "journal entry 1", nil },
	}})
	// The model's "command" is not what runs: the contract's is.
	res := run(t, tools, "self-check", map[string]any{"command": "echo injected"})
	if res.ExitCode != 3 || !strings.Contains(res.Output, "checking") || strings.Contains(res.Output, "injected") {
		t.Fatalf("self-check: exit %d %q", res.ExitCode, res.Output)
	}
	if !strings.Contains(res.Output, "[work dir sha256:") || !strings.Contains(res.Output, "journal entry 1]") {
		t.Errorf("no hash or journal note: %q", res.Output)
	}
	if len(got) != 1 || got[0].Check != "unit" || got[0].Command != "sh test.sh" || got[0].Exit != 3 ||
		!strings.HasPrefix(got[0].WorkDirHash, "sha256:") || got[0].Summary != `check "unit" failed (exit 3): checking` {
		t.Errorf("recorded %+v", got)
	}
	if exists(folder + "/out.txt") {
		t.Error("the check's output file reached the folder")
	}
	res = run(t, tools, "run-tests", map[string]any{"command": "echo fine"})
	if res.ExitCode != 0 || len(got) != 2 || got[1].Tool != "run-tests" || got[1].Summary != "passed (exit 0): fine" {
		t.Errorf("run-tests: %q, recorded %+v", res.Output, got)
	}
}

func TestSelfCheckWithoutAContractSaysSo(t *testing.T) {
	tools := newTools(t, Options{Seam: sandbox.ModeWorkingCopy, SelfCheck: &SelfCheck{}})
	res := run(t, tools, "self-check", nil)
	if res.IsError || !strings.Contains(res.Output, "there is no contract") || !strings.Contains(res.Output, "run-tests") {
		t.Errorf("%+v", res)
	}
	tools = newTools(t, Options{Seam: sandbox.ModeWorkingCopy, SelfCheck: &SelfCheck{Contract: "/h/c.toml"}})
	if res := run(t, tools, "self-check", nil); !strings.Contains(res.Output, "/h/c.toml declares no [[check]]") {
		t.Errorf("%+v", res)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A project's [limits] may only lower a budget: what would raise the
// person's (or the default, or lift a limit the person set) is noted and
// not taken; what lowers it, or sets one where the person has none, is
// taken.
func TestAProjectsLimitsOnlyTighten(t *testing.T) {
	for _, c := range []struct {
		name, person, project string
		want                  Limits
		notes                 int
	}{
		{"raises every limit", "max_tool_calls = 100\ntimeout = \"30m\"\ninit_steps = 1000000\ninit_memory_mb = 64\n",
			"max_tool_calls = 5000\ntimeout = \"10h\"\ninit_steps = 2000000000\ninit_memory_mb = 8192\n",
			Limits{MaxToolCalls: 100, Timeout: Duration(30 * time.Minute), InitSteps: 1000000, InitMemoryMB: 64}, 4},
		{"raises the defaults", "", "init_steps = 2000000000\ninit_memory_mb = 8192\n", Limits{}, 2},
		{"lifts a limit with 0", "max_tool_calls = 100\n", "max_tool_calls = 0\n", Limits{MaxToolCalls: 100}, 1},
		{"lowers every limit", "max_tool_calls = 100\ntimeout = \"30m\"\n",
			"max_tool_calls = 20\ntimeout = \"5m\"\ninit_steps = 1000\ninit_memory_mb = 16\n",
			Limits{MaxToolCalls: 20, Timeout: Duration(5 * time.Minute), InitSteps: 1000, InitMemoryMB: 16}, 0},
		{"sets one the person has not", "", "max_tool_calls = 50\ntimeout = \"1h\"\n", Limits{MaxToolCalls: 50, Timeout: Duration(time.Hour)}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			dirs, folder := setup(t)
			if c.person != "" {
				write(t, filepath.Join(dirs.Config, "config.toml"), "[limits]\n"+c.person)
			}
			write(t, ProjectConfig(folder), "[limits]\n"+c.project)
			cfg, err := Load(dirs, folder, env(nil))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Limits != c.want {
				t.Errorf("limits = %+v, want %+v", cfg.Limits, c.want)
			}
			if len(cfg.Notes) != c.notes {
				t.Errorf("notes = %q, want %d", cfg.Notes, c.notes)
			}
			for _, n := range cfg.Notes {
				if !strings.Contains(n, ProjectConfig(folder)) || !strings.Contains(n, "may only lower a limit") {
					t.Errorf("note %q", n)
				}
			}
			for _, k := range limitKeys {
				// A limit not taken keeps the person's origin.
				if o := cfg.Origin[k.key]; strings.HasPrefix(o, ProjectConfig(folder)) && strings.Contains(strings.Join(cfg.Notes, "\n"), "] "+strings.TrimPrefix(k.key, "limits.")+" = ") {
					t.Errorf("%s was not taken but its origin is the project's: %s", k.key, o)
				}
			}
		})
	}
}

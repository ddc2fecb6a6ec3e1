package cli

import (
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/config"
)

// The rules between the mode flags, each shown both ways.
func TestResolveOptions(t *testing.T) {
	cfg := &config.Config{}
	cases := []struct {
		name string
		run  RunCmd
		want runOptions
		err  string
	}{
		{name: "default", run: RunCmd{}, want: runOptions{}},
		{name: "sandbox implies yolo and unattended", run: RunCmd{Sandbox: "container"}, want: runOptions{sandbox: true, unattended: true, yolo: true}},
		{name: "only container", run: RunCmd{Sandbox: "vm"}, err: "the only value is 'container'"},
		{name: "sandbox excludes judge", run: RunCmd{Sandbox: "container", Judge: JudgeFlag{On: true}}, err: "excludes --judge"},
		{name: "no-confirm excludes judge", run: RunCmd{NoConfirm: true, Judge: JudgeFlag{On: true}}, err: "--no-confirm excludes --judge"},
		{name: "yolo excludes judge", run: RunCmd{Yolo: true, Judge: JudgeFlag{On: true}}, err: "--yolo excludes --judge"},
		{name: "sandbox excludes no-confirm", run: RunCmd{Sandbox: "container", NoConfirm: true}, err: "excludes --no-confirm"},
		{name: "judge implies unattended", run: RunCmd{Judge: JudgeFlag{On: true}}, want: runOptions{unattended: true, judge: true}},
		{name: "judge with a model", run: RunCmd{Unattended: true, Judge: JudgeFlag{On: true, Model: "small"}}, want: runOptions{unattended: true, judge: true, judgeModel: "small"}},
		{name: "no-confirm alone", run: RunCmd{NoConfirm: true}, want: runOptions{noConfirm: true}},
		{name: "unattended without yolo", run: RunCmd{Unattended: true}, want: runOptions{unattended: true}},
		{name: "flag profile over config", run: RunCmd{Profile: "full"}, want: runOptions{profile: "full"}},
	}
	for _, c := range cases {
		got, err := resolveOptions(&c.run, cfg, func(string) string { return "" })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	withConfig := &config.Config{File: config.File{Loop: config.Loop{Profile: "careful"}}}
	if got, _ := resolveOptions(&RunCmd{}, withConfig, nil); got.profile != "careful" {
		t.Errorf("the config's profile was not used: %+v", got)
	}
}

// Outside sandbox mode / and the home directory are refused; in sandbox
// mode they are allowed; a credential or nodwyn directory never is.
func TestCheckFolder(t *testing.T) {
	home := t.TempDir()
	dirs := config.Dirs{Config: home + "/.config/nodwyn", Data: home + "/.local/share/nodwyn"}
	cases := []struct {
		folder  string
		sandbox bool
		ok      bool
	}{
		{"/", false, false}, {"/", true, true},
		{home, false, false}, {home, true, true},
		{home + "/src/p", false, true},
		{home + "/.ssh", true, false}, {home + "/.ssh/keys", true, false},
		{dirs.Data + "/sessions", true, false}, {dirs.Config, false, false},
	}
	for _, c := range cases {
		err := checkFolder(c.folder, home, dirs, c.sandbox)
		if (err == nil) != c.ok {
			t.Errorf("folder %s sandbox=%v: err=%v, want ok=%v", c.folder, c.sandbox, err, c.ok)
		}
	}
}

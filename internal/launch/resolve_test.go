package launch

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
		run  Spec
		want runOptions
		err  string
	}{
		{name: "default", run: Spec{}, want: runOptions{}},
		{name: "sandbox implies yolo and unattended", run: Spec{Sandbox: "container"}, want: runOptions{sandbox: true, unattended: true, yolo: true}},
		{name: "only container", run: Spec{Sandbox: "vm"}, err: "the only value is 'container'"},
		{name: "sandbox excludes judge", run: Spec{Sandbox: "container", Judge: true}, err: "excludes --judge"},
		{name: "no-confirm excludes judge", run: Spec{NoConfirm: true, Judge: true}, err: "--no-confirm excludes --judge"},
		{name: "yolo excludes judge", run: Spec{Yolo: true, Judge: true}, err: "--yolo excludes --judge"},
		{name: "sandbox excludes no-confirm", run: Spec{Sandbox: "container", NoConfirm: true}, err: "excludes --no-confirm"},
		{name: "judge implies unattended", run: Spec{Judge: true}, want: runOptions{unattended: true, judge: true}},
		{name: "judge with a model", run: Spec{Unattended: true, Judge: true, JudgeModel: "small"}, want: runOptions{unattended: true, judge: true, judgeModel: "small"}},
		{name: "a judge model alone is a judge", run: Spec{JudgeModel: "small"}, want: runOptions{unattended: true, judge: true, judgeModel: "small"}},
		{name: "no-confirm alone", run: Spec{NoConfirm: true}, want: runOptions{noConfirm: true}},
		{name: "unattended without yolo", run: Spec{Unattended: true}, want: runOptions{unattended: true}},
		{name: "flag profile over config", run: Spec{Profile: "full"}, want: runOptions{profile: "full"}},
	}
	for _, c := range cases {
		got, err := resolveOptions(&c.run, cfg)
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
	if got, _ := resolveOptions(&Spec{}, withConfig); got.profile != "careful" {
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
		err := CheckFolder(c.folder, home, dirs, c.sandbox)
		if (err == nil) != c.ok {
			t.Errorf("folder %s sandbox=%v: err=%v, want ok=%v", c.folder, c.sandbox, err, c.ok)
		}
	}
}

package session

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/nodwyn/nodwyn/internal/config"
	"github.com/nodwyn/nodwyn/internal/provider"
	"github.com/nodwyn/nodwyn/internal/store"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

type (
	configDirs = config.Dirs
	storeT     = store.Store
)

func mkdirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

func openDirs(home string) (config.Dirs, *store.Store, error) {
	dirs := config.ResolveDirs(os.Getenv, home)
	st, err := store.Open(dirs.Data)
	return dirs, st, err
}

// lastMessage is the last message of a request: what the model was answering.
func lastMessage(req provider.Request) provider.Message {
	return req.Messages[len(req.Messages)-1]
}

// modelSaw returns the first system prompt or message of any request that
// contains one of texts: what the model was shown that it must not see.
func modelSaw(reqs []provider.Request, texts ...string) (string, bool) {
	for _, req := range reqs {
		for _, part := range append([]string{req.System}, contents(req.Messages)...) {
			for _, text := range texts {
				if strings.Contains(part, text) {
					return part, true
				}
			}
		}
	}
	return "", false
}

func contents(msgs []provider.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

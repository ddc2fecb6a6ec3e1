package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles writes each path (relative to root) with its text.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// systemPrompt runs a session that answers at once and returns the system
// prompt the model was sent.
func systemPrompt(t *testing.T, opts Options) (string, *run) {
	t.Helper()
	r := runSession(t, opts, "> reply\nDone.\n")
	reqs := r.model.Requests()
	if len(reqs) == 0 {
		t.Fatalf("the model was never asked (%s: %s)", r.out.Status, r.out.Text)
	}
	return reqs[0].System, r
}

// Issue 27: a cloned repository's AGENTS.md or CLAUDE.md that is a link to
// the person's files (~/.docker/config.json, ~/.bash_history,
// ~/.config/rclone/rclone.conf) put them in the system prompt sent to the
// provider. A link that leads out of the repository is not followed, and a
// note says where it leads; so is a link from the person's own AGENTS.md
// out of the configuration directory.
func TestInstructionLinksOutOfTheRepositoryAreNotFollowed(t *testing.T) {
	opts := baseOpts(t)
	home := filepath.Dir(filepath.Dir(opts.Dirs.Config)) // <home>/.config/nodwyn
	writeFiles(t, home, map[string]string{
		".docker/config.json":        `{"auths": {"ghcr.io": {"auth": "YWxpY2U6aHVudGVyMnB3"}}} DOCKER-MARK`,
		".bash_history":              "mysql -uroot -pS3cretPw shop\nHISTORY-MARK\n",
		".config/rclone/rclone.conf": "[box]\ntype = sftp\npass = nBkRPCj1Hf4gTyHydKcPYb8H0V3L8g\nRCLONE-MARK\n",
		"notes/agents.md":            "NOTES-MARK: plain rules kept outside the repository\n",
		"notes/person.md":            "PERSON-MARK: the person's rules kept outside the config directory\n",
	})
	repo := opts.Folder
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{ // link → target
		filepath.Join(repo, "AGENTS.md"):                filepath.Join(home, ".docker/config.json"),
		filepath.Join(repo, "a", "CLAUDE.md"):           filepath.Join(home, ".bash_history"),
		filepath.Join(repo, "a", "b", "AGENTS.md"):      "../../../home/.config/rclone/rclone.conf",
		filepath.Join(repo, "a", "b", "c", "AGENTS.md"): filepath.Join(home, "notes/agents.md"),
		filepath.Join(opts.Dirs.Config, "AGENTS.md"):    filepath.Join(home, "notes/person.md"),
	}
	for link, target := range links {
		symlink(t, target, link)
	}
	opts.Folder = filepath.Join(repo, "a", "b", "c")
	system, r := systemPrompt(t, opts)
	for _, mark := range []string{"DOCKER-MARK", "HISTORY-MARK", "RCLONE-MARK", "NOTES-MARK", "PERSON-MARK", "YWxpY2U6", "S3cretPw", "nBkRPCj1"} {
		if strings.Contains(system, mark) {
			t.Errorf("the system prompt holds %s:\n%s", mark, system)
		}
	}
	notes := strings.Join(r.notes("project instructions:"), "\n")
	for link := range links {
		if !strings.Contains(notes, "project instructions: "+link+" not read: ") {
			t.Errorf("no note says %s was not read; the notes:\n%s", link, notes)
		}
	}
	// Where nothing else refuses it, the note says where the link leads
	// and what to do.
	for _, want := range []string{
		filepath.Join(repo, "a", "b", "c", "AGENTS.md") + " not read: it is a link to " + filepath.Join(home, "notes/agents.md") + ", outside the repository " + repo,
		filepath.Join(opts.Dirs.Config, "AGENTS.md") + " not read: it is a link to " + filepath.Join(home, "notes/person.md") + ", outside nodwyn's configuration directory " + opts.Dirs.Config,
		"replace the link with a copy of the text",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("no note says %q; the notes:\n%s", want, notes)
		}
	}
}

// The ordinary work the refusal must not block: a link to another file of
// the repository is followed, from the folder up to the root, and a
// repository reached through a link is still the repository; the person's
// own file may be a link inside the configuration directory.
func TestInstructionLinksInsideTheRepositoryAreFollowed(t *testing.T) {
	opts := baseOpts(t)
	repo := opts.Folder
	writeFiles(t, repo, map[string]string{
		"docs/agents.md":     "ROOT-RULES: use tabs.\n",
		"sub/docs/claude.md": "SUB-RULES: run make test.\n",
	})
	writeFiles(t, opts.Dirs.Config, map[string]string{"rules/mine.md": "PERSON-RULES: answer in English.\n"})
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, "docs/agents.md", filepath.Join(repo, "AGENTS.md"))
	symlink(t, filepath.Join(repo, "sub", "docs", "claude.md"), filepath.Join(repo, "sub", "CLAUDE.md"))
	symlink(t, "../../AGENTS.md", filepath.Join(repo, "sub", "deeper", "AGENTS.md")) // a link to a link, both inside
	symlink(t, "rules/mine.md", filepath.Join(opts.Dirs.Config, "AGENTS.md"))
	// The folder as the person names it: through a link to the repository.
	via := filepath.Join(filepath.Dir(repo), "via")
	symlink(t, repo, via)
	opts.Folder = filepath.Join(via, "sub", "deeper")
	system, r := systemPrompt(t, opts)
	for _, want := range []string{
		"## " + filepath.Join(opts.Dirs.Config, "AGENTS.md") + "\nPERSON-RULES",
		"## " + filepath.Join(via, "AGENTS.md") + "\nROOT-RULES",
		"## " + filepath.Join(via, "sub", "CLAUDE.md") + "\nSUB-RULES",
		"## " + filepath.Join(via, "sub", "deeper", "AGENTS.md") + "\nROOT-RULES",
	} {
		if !strings.Contains(system, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, system)
		}
	}
	if notes := r.notes("project instructions:"); len(notes) != 0 {
		t.Errorf("notes: %q", notes)
	}
}

// The person's own AGENTS.md may not be a link to a credential-shaped file
// beside it in the configuration directory (credentials.toml holds the
// provider keys).
func TestPersonalInstructionsNeverReadACredentialFile(t *testing.T) {
	opts := baseOpts(t)
	writeFiles(t, opts.Dirs.Config, map[string]string{"credentials.toml": "[keys]\nopenai = \"CRED-MARK\"\n"})
	symlink(t, "credentials.toml", filepath.Join(opts.Dirs.Config, "AGENTS.md"))
	system, r := systemPrompt(t, opts)
	if strings.Contains(system, "CRED-MARK") {
		t.Fatalf("the system prompt holds the credentials file:\n%s", system)
	}
	notes := strings.Join(r.notes("project instructions:"), "\n")
	if !strings.Contains(notes, "AGENTS.md not read: it is "+filepath.Join(opts.Dirs.Config, "credentials.toml")+", which has a credential-shaped name") {
		t.Errorf("the notes:\n%s", notes)
	}
}

// What instruction files say passes the same redaction as a tool's result
// before it reaches the prompt: a password on a command line, a docker
// auth, an AWS key id, as ~/.bash_history or a config file holds them.
func TestInstructionTextIsRedactedAsAToolResult(t *testing.T) {
	opts := baseOpts(t)
	text := "Deploy with:\n  mysql -uroot -pS3cretPw shop\n  curl -u alice:hunter2pw https://api.example.com\n" +
		`  {"auths": {"ghcr.io": {"auth": "YWxpY2U6aHVudGVyMnB3"}}}` + "\n  AKIAIOSFODNN7EXAMPLE\n  mkdir -p build && ssh -p 22 host\n"
	writeFiles(t, opts.Folder, map[string]string{"AGENTS.md": text})
	system, r := systemPrompt(t, opts)
	for _, secret := range []string{"S3cretPw", "hunter2pw", "YWxpY2U6aHVudGVyMnB3", "AKIAIOSFODNN7EXAMPLE"} {
		if strings.Contains(system, secret) {
			t.Errorf("the system prompt holds %s:\n%s", secret, system)
		}
	}
	if want := strings.TrimRight(r.s.guard.Redact(text), "\n"); !strings.Contains(system, want) {
		t.Errorf("the system prompt does not hold the file as a tool result would show it:\n%s\nwant in it:\n%s", system, want)
	}
	if !strings.Contains(system, "mkdir -p build && ssh -p 22 host") {
		t.Errorf("ordinary commands were changed:\n%s", system)
	}
}

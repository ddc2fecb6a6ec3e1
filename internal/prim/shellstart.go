package prim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nodwyn/nodwyn/internal/roles"
	"github.com/nodwyn/nodwyn/internal/sandbox"
)

// shell-start {command}: a background process the session owns, in a
// process group of its own, its output (stdout and stderr) going to a file
// in the scratch directory. It gets an id ("bg1"); shell-read {id, tail}
// shows its output so far and whether it still runs, shell-stop {id} stops
// it. Close stops every one of them, in every mode.

type bgProc struct {
	id      string
	command string
	pgid    int
	outPath string
	outID   [2]uint64 // the output file's device and inode, as made
	proc    *sandbox.Process
}

func (t *Tools) findBg(id string) (*bgProc, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []string
	for _, b := range t.bg {
		if b.id == id {
			return b, ""
		}
		ids = append(ids, b.id)
	}
	if len(ids) == 0 {
		return nil, fmt.Sprintf("no process %q: nothing was started with shell-start in this session", id)
	}
	return nil, fmt.Sprintf("no process %q; the ids are: %s", id, strings.Join(ids, ", "))
}

func (t *Tools) outDir() (string, error) {
	if t.opts.Scratch != "" {
		return t.opts.Scratch, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bgDir == "" {
		d, err := os.MkdirTemp("", "nodwyn-bg-")
		if err != nil {
			return "", err
		}
		t.bgDir = d
	}
	return t.bgDir, nil
}

func init() {
	idParam := Param{Name: "id", Type: String, Required: true}
	Register(Tool{Name: "shell-start", Order: 20, Run: (*Tools).shellStart, Params: []Param{
		{Name: "command", Type: String, Role: roles.Command, Required: true},
	}})
	Register(Tool{Name: "shell-read", Order: 21, Run: (*Tools).shellRead, Params: []Param{
		idParam,
		{Name: "tail", Type: Integer},
	}})
	Register(Tool{Name: "shell-stop", Order: 22, Run: (*Tools).shellStop, Params: []Param{idParam}})
}

func (t *Tools) shellStart(_ context.Context, a Args) (Result, error) {
	command := a.Str("command")
	if strings.TrimSpace(command) == "" {
		return failf("shell-start: the command is empty"), nil
	}
	dir, err := t.outDir()
	if err != nil {
		return Result{}, fmt.Errorf("prim: shell-start: %w", err)
	}
	t.mu.Lock()
	t.bgSeq++
	id := "bg" + strconv.Itoa(t.bgSeq)
	t.mu.Unlock()
	outPath := filepath.Join(dir, "shell-"+id+".out")
	// The directory is in the scratch directory, which commands may write:
	// a new file only (never through a link put there), known after by its
	// device and inode.
	f, err := os.OpenFile(outPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		os.Remove(outPath) // a link or a file a command put there: not ours
		f, err = os.OpenFile(outPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	}
	if err != nil {
		return failf("shell-start: could not make the output file: %v", err), nil
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return Result{}, fmt.Errorf("prim: shell-start: %w", err)
	}
	p, err := t.sb.Start(t.command(command, 0, false), f)
	f.Close()
	if err != nil {
		return failf("shell-start: %v", err), nil
	}
	b := &bgProc{id: id, command: command, pgid: p.Pgid, outPath: outPath, outID: [2]uint64{uint64(st.Dev), st.Ino}, proc: p}
	t.mu.Lock()
	t.bg = append(t.bg, b)
	t.mu.Unlock()
	return Result{Output: fmt.Sprintf("started %s (pid %d); its output goes to %s\nread it with shell-read {\"id\": %q}, stop it with shell-stop {\"id\": %q}", id, b.pgid, outPath, id, id)}, nil
}

// status says whether b still runs, or how it ended.
func (b *bgProc) status() (string, int) {
	st := b.proc.State()
	if st == nil {
		return fmt.Sprintf("%s is running (pid %d, for %v)", b.id, b.pgid, time.Since(b.proc.Started).Round(time.Second)), 0
	}
	how := ""
	if b.proc.StoppedByUs() {
		how = ", stopped by shell-stop"
	}
	return fmt.Sprintf("%s has ended: %s%s", b.id, sandbox.ExitText(st), how), sandbox.ExitCode(st)
}

func (t *Tools) shellRead(_ context.Context, a Args) (Result, error) {
	id := a.Str("id")
	tail, hasTail := a.Int("tail")
	if hasTail && tail <= 0 {
		return failf("shell-read: tail must be a positive number of lines, not %d", tail), nil
	}
	b, msg := t.findBg(id)
	if b == nil {
		return failf("shell-read: %s", msg), nil
	}
	status, code := b.status() // before reading, so output after "ended" is complete
	// Opened as nodwyn made it, or not at all: a command may have put a
	// link, or another file, in its place (nodwyn reads unrestricted).
	f, err := os.OpenFile(b.outPath, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return failf("shell-read: %s's output file %s was replaced by a link since it was made; nothing of it was read", id, b.outPath), nil
	}
	if err != nil {
		return failf("shell-read: could not open %s's output %s: %v", id, b.outPath, err), nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Result{}, fmt.Errorf("prim: shell-read: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || [2]uint64{uint64(st.Dev), st.Ino} != b.outID {
		return failf("shell-read: %s's output file %s was replaced since it was made; nothing of it was read", id, b.outPath), nil
	}
	size := fi.Size()
	from := max(0, size-int64(t.opts.MaxOutput))
	data, err := io.ReadAll(io.NewSectionReader(f, from, size-from))
	if err != nil {
		return Result{}, fmt.Errorf("prim: shell-read: %w", err)
	}
	out := string(data)
	left := from
	if from > 0 { // start at a whole line
		if i := strings.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
			left += int64(i + 1)
		}
	}
	if hasTail {
		lines := strings.SplitAfter(out, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > tail {
			for _, l := range lines[:len(lines)-tail] {
				left += int64(len(l))
			}
			out = strings.Join(lines[len(lines)-tail:], "")
		}
	}
	out = toValid(out)
	if left > 0 {
		out = fmt.Sprintf("[... the first %d bytes of output left out; the whole output is in %s ...]\n", left, b.outPath) + out
	}
	if size == 0 {
		out = "[no output yet]"
	}
	return Result{Output: sandbox.WithTrailer(out, "["+status+"]"), ExitCode: code}, nil
}

func (t *Tools) shellStop(_ context.Context, a Args) (Result, error) {
	id := a.Str("id")
	b, msg := t.findBg(id)
	if b == nil {
		return failf("shell-stop: %s", msg), nil
	}
	if b.proc.State() != nil {
		status, code := b.status()
		return Result{Output: "[" + status + "; nothing to stop]", ExitCode: code}, nil
	}
	b.proc.Stop()
	status, code := b.status()
	return Result{Output: "[" + status + "]", ExitCode: code}, nil
}

package prim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/nodwyn/nodwyn/internal/fsview"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/nodwyn/nodwyn/internal/roles"
	"golang.org/x/sys/unix"
)

// fs-read {path, offset, limit}: a file's lines, numbered ("     1\tline"),
// from offset (1-based, default 1), limit lines (default 2000), with a note
// saying how to read on when there are more; a line longer than
// maxReadLine characters is cut. A binary file is refused with a message; a
// directory gives its listing.

const (
	defaultReadLimit = 2000
	maxReadLine      = 2000
	maxListing       = 1000
)

var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

func init() {
	Register(Tool{Name: "fs-read", Order: 30, Run: (*Tools).fsRead, Params: []Param{
		{Name: "path", Type: String, Role: roles.PathRead, Required: true},
		{Name: "offset", Type: Integer},
		{Name: "limit", Type: Integer},
	}})
}

func (t *Tools) fsRead(_ context.Context, a Args) (Result, error) {
	p := a.Str("path")
	offset, hasOffset := a.Int("offset")
	limit, hasLimit := a.Int("limit")
	if hasOffset && offset < 1 {
		return failf("fs-read: offset is the first line to read, counting from 1, not %d", offset), nil
	}
	if hasLimit && limit < 1 {
		return failf("fs-read: limit is a number of lines, at least 1, not %d", limit), nil
	}
	if p == "" {
		return failf("fs-read: the path is empty"), nil
	}
	if !hasOffset {
		offset = 1
	}
	if !hasLimit {
		limit = defaultReadLimit
	}
	abs := Resolve(t.opts.Folder, p)
	return t.floored("fs-read", func() Result { return t.readFile(abs, p, offset, limit) }), nil
}

// readFile is fs-read's work, under the kernel floor: abs is the path p
// resolved.
func (t *Tools) readFile(abs, p string, offset, limit int) Result {
	// The guard's analysis reads a path the same way (fsview.OpenRead): a
	// FIFO opens at once instead of waiting for a writer, and is then
	// refused as not a regular file.
	f, fi, err := fsview.OpenRead(abs)
	if err != nil {
		return failf("fs-read: %s", cleanErr(err))
	}
	defer f.Close()
	if real := t.deniedOpen(f); real != "" {
		return t.deniedResult("fs-read", abs, real)
	}
	if fi.IsDir() {
		return t.listDir(f, abs)
	}
	if !fi.Mode().IsRegular() {
		return failf("fs-read: %s is not a regular file (%s)", t.rel(abs), fi.Mode().Type())
	}
	br := readers.Get().(*bufio.Reader)
	br.Reset(f)
	defer func() { br.Reset(nil); readers.Put(br) }()
	if head, _ := br.Peek(8000); isBinary(head) {
		return failf("fs-read: %s is a binary file (%d bytes); fs-read shows text only. Look at it with a command, e.g. shell-exec \"file %s\" or \"xxd %s | head\"", t.rel(abs), fi.Size(), p, p)
	}

	var b strings.Builder
	b.Grow(min(int(fi.Size())+int(fi.Size())/4, 4<<20) + 64)
	var num []byte
	n, shown, cut := 0, 0, 0
	var long []byte // the start of a line longer than the reader's buffer
	for {
		line, err := readLine(br, &long)
		if err != nil && line == nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return failf("fs-read: %s: %v", t.rel(abs), err)
		}
		n++
		if n < offset || shown >= limit {
			continue
		}
		shown++
		num = strconv.AppendInt(num[:0], int64(n), 10)
		for i := len(num); i < 6; i++ {
			b.WriteByte(' ')
		}
		b.Write(num)
		b.WriteByte('\t')
		if len(line) > maxReadLine {
			cut++
			b.WriteString(toValid(string(line[:maxReadLine])))
			b.WriteString("… [line cut]")
		} else if isASCII(line) {
			b.Write(line)
		} else {
			b.WriteString(toValid(string(line)))
		}
		b.WriteByte('\n')
	}
	rel := t.rel(abs)
	switch {
	case n == 0:
		return Result{Output: fmt.Sprintf("[%s is empty]", rel)}
	case offset > n:
		return failf("fs-read: %s has %d lines; offset %d is past its end", rel, n, offset)
	}
	last := offset + shown - 1
	if last < n {
		fmt.Fprintf(&b, "[lines %d-%d of %d; read on with offset %d]\n", offset, last, n, last+1)
	}
	if cut > 0 {
		fmt.Fprintf(&b, "[%d lines longer than %d characters were cut; use shell-exec to see them whole]\n", cut, maxReadLine)
	}
	return Result{Output: strings.TrimSuffix(b.String(), "\n")}
}

// readLine returns the next line without its "\n" (and "\r"). Of a line
// longer than the reader's buffer only the first maxReadLine+utf8.UTFMax
// bytes come back (in *long, reused), enough to show it cut: the rest is
// read and dropped, so a line of a gigabyte is never held.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		*long = append((*long)[:0], line[:min(len(line), maxReadLine+utf8.UTFMax)]...)
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n')
		}
		return *long, nilIfEOF(err)
	}
	if len(line) == 0 {
		return nil, err
	}
	if line[len(line)-1] == '\n' {
		line = line[:len(line)-1]
	}
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, nilIfEOF(err)
}

func nilIfEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func (t *Tools) listDir(f *os.File, abs string) Result {
	ents, err := f.ReadDir(-1)
	if err != nil {
		return failf("fs-read: %s", cleanErr(err))
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.IsDir():
			name += "/"
		case e.Type()&os.ModeSymlink != 0:
			if target, err := readlinkIn(f, e.Name()); err == nil {
				name += " -> " + target
			}
		}
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "[directory %s: %d entries]\n", t.rel(abs), len(names))
	for i, n := range names {
		if i == maxListing {
			fmt.Fprintf(&b, "[%d more not shown; use fs-find or shell-exec \"ls\" to see them]\n", len(names)-maxListing)
			break
		}
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return Result{Output: strings.TrimSuffix(b.String(), "\n")}
}

// readlinkIn is the target of the link name in the directory dir, read
// from dir itself rather than by its name.
func readlinkIn(dir *os.File, name string) (string, error) {
	sc, err := dir.SyscallConn()
	if err != nil {
		return "", err
	}
	var target string
	cerr := sc.Control(func(fd uintptr) {
		for size := 256; ; size *= 2 {
			buf := make([]byte, size)
			n, rerr := unix.Readlinkat(int(fd), name, buf)
			if rerr != nil {
				err = rerr
				return
			}
			if n < size {
				target = string(buf[:n])
				return
			}
		}
	})
	if cerr != nil {
		return "", cerr
	}
	return target, err
}

// ReadHead reads the first max bytes of the regular file at path (absolute,
// or relative to the folder) as fs-read reads a file: under the kernel
// floor, judged again where it really is after the open (Options.Deny), a
// FIFO or device refused without waiting. It is for what the runtime reads
// for the model without a tool call (the project's AGENTS.md). size is the
// file's whole size.
func (t *Tools) ReadHead(path string, max int64) (head []byte, size int64, err error) {
	abs := Resolve(t.opts.Folder, path)
	ferr := t.opts.Floor.Do(func() error {
		f, fi, err := fsview.OpenRead(abs)
		if err != nil {
			return err
		}
		defer f.Close()
		if real := t.deniedOpen(f); real != "" {
			return fmt.Errorf("%s is %s, a denied path, where it really is", abs, real)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file (%s)", abs, fi.Mode().Type())
		}
		size = fi.Size()
		head, err = io.ReadAll(io.LimitReader(f, max))
		return err
	})
	return head, size, ferr
}

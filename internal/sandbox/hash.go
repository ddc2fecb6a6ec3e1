package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"syscall"
)

// emptySHA256 is the sha256 of no bytes, the content of a directory's and
// another type's entry.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// HashDir returns the work-dir hash of dir: "sha256:<hex>" over one line
// per entry under dir (not dir itself), in the bytewise order of their
// slash-separated relative paths:
//
//	<type> <perm> <len(path)>:<path> <len(content)>:<sha256 hex of content>\n
//
// type is f (regular file), l (symbolic link), d (directory) or o (any
// other: FIFO, socket, device); perm is the permission bits (mode & 0777)
// as four octal digits for f and d, 0000 for l and o; content is a file's
// bytes, a link's target text (never followed), nothing for d and o. The
// lengths are decimal byte counts. Modification times, owners and inodes
// play no part, so two copies of the same tree have the same hash wherever
// they are. docs/sandbox.md has a Python script that recomputes it.
// Files are opened without following a link and without blocking; one that
// is no longer a regular file when opened is an error.
func HashDir(dir string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("sandbox: hashing: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("sandbox: hashing %s: not a directory", dir)
	}
	var rels []string
	if err := listTree(dir, ".", &rels); err != nil {
		return "", err
	}
	slices.Sort(rels)
	h := sha256.New()
	content := sha256.New()
	buf := make([]byte, 64<<10)
	for _, rel := range rels {
		full := filepath.Join(dir, rel)
		fi, err := os.Lstat(full)
		if err != nil {
			return "", fmt.Errorf("sandbox: hashing: %w", err)
		}
		typ, perm, size, sum := "o", fs.FileMode(0), int64(0), emptySHA256
		switch {
		case fi.Mode().IsRegular():
			typ, perm = "f", fi.Mode().Perm()
			if size, sum, err = hashFile(full, content, buf); err != nil {
				return "", err
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return "", fmt.Errorf("sandbox: hashing: %w", err)
			}
			s := sha256.Sum256([]byte(target))
			typ, size, sum = "l", int64(len(target)), hex.EncodeToString(s[:])
		case fi.IsDir():
			typ, perm = "d", fi.Mode().Perm()
		}
		fmt.Fprintf(h, "%s %04o %d:%s %d:%s\n", typ, uint32(perm), len(rel), rel, size, sum)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// listTree appends to rels the slash-separated paths of everything under
// the directory rel of root, not descending into links.
func listTree(root, rel string, rels *[]string) error {
	entries, err := os.ReadDir(filepath.Join(root, rel))
	if err != nil {
		return fmt.Errorf("sandbox: hashing: %w", err)
	}
	for _, e := range entries {
		sub := path.Join(rel, e.Name())
		*rels = append(*rels, sub)
		if e.IsDir() {
			if err := listTree(root, sub, rels); err != nil {
				return err
			}
		}
	}
	return nil
}

// hashFile returns the size and sha256 hex of the regular file at full,
// using h (reset) and buf.
func hashFile(full string, h hash.Hash, buf []byte) (int64, string, error) {
	f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, "", fmt.Errorf("sandbox: hashing: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0, "", fmt.Errorf("sandbox: hashing %s: no longer a regular file", full)
	}
	h.Reset()
	n, err := io.CopyBuffer(h, struct{ io.Reader }{f}, buf) // our buffer, not File.WriteTo's
	if err != nil {
		return 0, "", fmt.Errorf("sandbox: hashing: %w", err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

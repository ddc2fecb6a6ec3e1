package journal

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Key is the machine's journal key: an ed25519 private key kept in
// <data>/journal/key.
type Key struct {
	path string
	priv ed25519.PrivateKey
}

// KeyPath is where the journal key of the data directory dataDir lives,
// <data>/journal/key.
func KeyPath(dataDir string) string { return filepath.Join(dataDir, "journal", "key") }

// LoadOrCreateKey returns the journal key of the data directory dataDir,
// making it on first use: 32 random bytes, the ed25519 seed, written as 64 hex
// digits and a newline to <data>/journal/key (mode 0600, in a directory made
// 0700). Two processes making it at once end with the same key: the file is
// written under another name and linked into place, which never replaces a
// key that is there. A key file that exists is never replaced: one that does
// not hold a key is an error naming it, and so is one that its group or other
// users may read or write (the fix is chmod 600).
func LoadOrCreateKey(dataDir string) (*Key, error) {
	if dataDir == "" {
		return nil, errors.New("journal key: no data directory given")
	}
	k, err := LoadKey(dataDir)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	path := KeyPath(dataDir)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal key: %w", err)
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, fmt.Errorf("journal key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".key-*")
	if err != nil {
		return nil, fmt.Errorf("journal key: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600.
	_, err = tmp.WriteString(hex.EncodeToString(seed) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("journal key: write %s: %w", tmp.Name(), err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("journal key: %w", err)
	}
	syncDir(dir)
	// Whoever linked first made the key; read the one that is there.
	return LoadKey(dataDir)
}

// LoadKey reads the journal key of the data directory dataDir without making
// one. When there is none the error wraps fs.ErrNotExist.
func LoadKey(dataDir string) (*Key, error) {
	path := KeyPath(dataDir)
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("journal key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("journal key %s is not a regular file (%s); nodwyn keeps the key in a plain file it made, mode 0600", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("journal key %s has mode %04o: its group or other users may read or change it; run chmod 600 %s", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("journal key: %w", err)
	}
	text := strings.TrimSuffix(string(b), "\n")
	seed, err := hex.DecodeString(text)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("journal key %s is corrupt: it must hold 64 hex digits (an ed25519 seed) and a newline; nodwyn does not replace it, since the journals it signed are checked against it — move it away to make a new key (old journals then fail verify as signed by another key)", path)
	}
	return &Key{path: path, priv: ed25519.NewKeyFromSeed(seed)}, nil
}

// Public is the key's public half, the "key" field of every entry it signs.
func (k *Key) Public() ed25519.PublicKey { return k.priv.Public().(ed25519.PublicKey) }

// Path is the key file.
func (k *Key) Path() string { return k.path }

// Fingerprint is a public key's short name for people: the first 16 hex
// digits of the key, which is how the "key" field of its entries starts.
func Fingerprint(pub ed25519.PublicKey) string {
	h := hex.EncodeToString(pub)
	if len(h) > 16 {
		h = h[:16]
	}
	return h
}

// syncDir makes a new name in dir durable; errors are ignored, as some file
// systems cannot sync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

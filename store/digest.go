package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
)

// Files is one remixlet version's files by name: manifest.json, script.js and optionally
// style.css and rules.json. The store keeps names and contents exactly as given; it does
// not check them (save-time checks live in package sandbox). An empty file is a file:
// Files{"style.css": nil} differs from a Files without style.css.
type Files map[string][]byte

// filesTag starts every canonical encoding; a new encoding gets a new tag.
const filesTag = "remixproxy-files-v1\x00"

// EncodeFiles returns the canonical encoding of f, which Digest hashes and the store keeps:
//
//	"remixproxy-files-v1" 0x00
//	then, for each file in ascending byte order of its name:
//	  uint64 big-endian len(name)    name bytes
//	  uint64 big-endian len(content) content bytes
//
// Equal sets of files always encode to equal bytes, and each encoding decodes to exactly
// one set of files, so the digest identifies the set.
func EncodeFiles(f Files) []byte {
	names := make([]string, 0, len(f))
	size := len(filesTag)
	for name, content := range f {
		names = append(names, name)
		size += 16 + len(name) + len(content)
	}
	sort.Strings(names)
	b := make([]byte, 0, size)
	b = append(b, filesTag...)
	for _, name := range names {
		b = binary.BigEndian.AppendUint64(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.BigEndian.AppendUint64(b, uint64(len(f[name])))
		b = append(b, f[name]...)
	}
	return b
}

// DecodeFiles parses a canonical encoding made by EncodeFiles. It refuses anything
// EncodeFiles would not produce (wrong tag, short or trailing bytes, names out of order
// or repeated).
func DecodeFiles(b []byte) (Files, error) {
	if len(b) < len(filesTag) || string(b[:len(filesTag)]) != filesTag {
		return nil, fmt.Errorf("decoding files: missing %q tag: %w", filesTag[:len(filesTag)-1], ErrCorrupt)
	}
	b = b[len(filesTag):]
	f := Files{}
	prev := ""
	for i := 0; len(b) > 0; i++ {
		name, rest, err := readChunk(b)
		if err != nil {
			return nil, fmt.Errorf("decoding files: name %d: %w", i, err)
		}
		content, rest, err := readChunk(rest)
		if err != nil {
			return nil, fmt.Errorf("decoding files: content of %q: %w", name, err)
		}
		if i > 0 && string(name) <= prev {
			return nil, fmt.Errorf("decoding files: %q after %q is out of order: %w", name, prev, ErrCorrupt)
		}
		prev = string(name)
		f[prev] = content
		b = rest
	}
	return f, nil
}

func readChunk(b []byte) (chunk, rest []byte, err error) {
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("short length: %w", ErrCorrupt)
	}
	n := binary.BigEndian.Uint64(b)
	b = b[8:]
	if n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("length %d past the end: %w", n, ErrCorrupt)
	}
	return b[:n:n], b[n:], nil
}

// Digest returns "sha256:" followed by the lowercase hex SHA-256 of EncodeFiles(f).
func Digest(f Files) string { return digestOf(EncodeFiles(f)) }

func digestOf(encoded []byte) string {
	sum := sha256.Sum256(encoded)
	return "sha256:" + hex.EncodeToString(sum[:])
}

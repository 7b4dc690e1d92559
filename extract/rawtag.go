package extract

import (
	"bytes"

	"golang.org/x/net/html/atom"
)

// The tokenizer's TagName and TagAttr copy every name and value they return
// (to replace NUL bytes) and the value again to unescape it. Most tags have
// neither NUL, '&' nor CR in them, and for those the raw bytes of the tag
// already are the names and values: rawTag reads them in place, following
// the HTML tokenizer's tag states (HTML §13.2.5.8-13.2.5.42). Tags with any
// of those bytes go through TagAttr, which applies the standard's
// attribute-value character-reference rules.

// rawIsPlain reports whether a raw tag can be read in place.
func rawIsPlain(raw []byte) bool {
	for _, c := range raw {
		if c == '&' || c == 0 || c == '\r' {
			return false
		}
	}
	return true
}

func isTagSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// rawTagAtom returns the atom of the tag name in raw ("<name ..." or
// "</name ..."), or 0 for names that are not atoms.
func rawTagAtom(raw []byte) atom.Atom {
	i := 1
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	start := i
	for i < len(raw) && !isTagSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++
	}
	name := raw[start:i]
	var buf [16]byte
	if len(name) > len(buf) {
		return 0
	}
	for j, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[j] = c
	}
	return atom.Lookup(buf[:len(name)])
}

// lowerKey returns an attribute name in lower case: the name itself when it
// has no upper-case ASCII letter (nearly always), else a lower-cased copy,
// because raw may be the caller's document, which is never written.
func lowerKey(key []byte) []byte {
	for j, c := range key {
		if 'A' <= c && c <= 'Z' {
			low := bytes.Clone(key)
			for k := j; k < len(low); k++ {
				if c := low[k]; 'A' <= c && c <= 'Z' {
					low[k] = c + 'a' - 'A'
				}
			}
			return low
		}
	}
	return key
}

// eachRawAttr calls fn for every attribute of a plain raw start tag, with
// the name lower-cased (raw is read, never written). As in the tokenizer, a repeated name is ignored
// (HTML §13.2.5.33: "the complete attribute's name must be compared to the
// other attributes on the same token"); the check covers the first 16
// names, which keeps hostile tags with thousands of attributes linear.
func eachRawAttr(raw []byte, fn func(key, val []byte)) {
	var seen [16][]byte
	nSeen := 0
	i := 1
	for i < len(raw) && !isTagSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++
	}
	for i < len(raw) {
		for i < len(raw) && (isTagSpace(raw[i]) || raw[i] == '/') {
			i++
		}
		if i >= len(raw) || raw[i] == '>' {
			return
		}
		// Attribute name; a leading '=' belongs to it.
		ks := i
		i++
		for i < len(raw) && !isTagSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' && raw[i] != '=' {
			i++
		}
		key := lowerKey(raw[ks:i])
		for i < len(raw) && isTagSpace(raw[i]) {
			i++
		}
		var val []byte
		if i < len(raw) && raw[i] == '=' {
			i++
			for i < len(raw) && isTagSpace(raw[i]) {
				i++
			}
			if i < len(raw) && (raw[i] == '"' || raw[i] == '\'') {
				q := raw[i]
				i++
				vs := i
				for i < len(raw) && raw[i] != q {
					i++
				}
				val = raw[vs:i]
				if i < len(raw) {
					i++
				}
			} else {
				vs := i
				for i < len(raw) && !isTagSpace(raw[i]) && raw[i] != '>' {
					i++
				}
				val = raw[vs:i]
			}
		}
		dup := false
		for _, k := range seen[:nSeen] {
			if bytes.Equal(k, key) {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if nSeen < len(seen) {
			seen[nSeen] = key
			nSeen++
		}
		fn(key, val)
	}
}

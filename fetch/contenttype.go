package fetch

import (
	"net/http"
	"strings"
)

// ParseContentType extracts the MIME type essence (lower-case "type/subtype")
// and charset parameter from a Content-Type header value, following the
// Fetch standard's "extract a MIME type" (fetch.spec.whatwg.org §3.1.6,
// using the MIME Sniffing standard's MIME type parser, §4.4): a value may
// hold several comma-separated types, the last valid one wins, and a
// charset survives only while the essence stays the same. ok is false when
// no valid type is present ("*/*" is not a valid type here).
func ParseContentType(v string) (essence, charset string, ok bool) {
	if strings.IndexByte(v, ',') < 0 {
		// One type, the usual case: no need to split.
		ess, cs, valid := parseMIMEType(v)
		if !valid || ess == "*/*" {
			return "", "", false
		}
		return ess, cs, true
	}
	for _, part := range splitOutsideQuotes(v, ',') {
		ess, cs, valid := parseMIMEType(part)
		if !valid || ess == "*/*" {
			continue
		}
		if ess != essence {
			charset = ""
		}
		essence, ok = ess, true
		if cs != "" {
			charset = cs
		}
	}
	return essence, charset, ok
}

// parseMIMEType is the MIME Sniffing standard's "parse a MIME type" (§4.4),
// keeping only the charset parameter.
func parseMIMEType(s string) (essence, charset string, ok bool) {
	s = strings.Trim(s, httpWhitespace)
	slash := strings.IndexByte(s, '/')
	if slash <= 0 {
		return "", "", false
	}
	typ := s[:slash]
	rest := s[slash+1:]
	semi := strings.IndexByte(rest, ';')
	sub := rest
	params := ""
	if semi >= 0 {
		sub, params = rest[:semi], rest[semi+1:]
	}
	sub = strings.TrimRight(sub, httpWhitespace)
	if !isToken(typ) || !isToken(sub) {
		return "", "", false
	}
	if ess := s[:len(typ)+1+len(sub)]; isLowerASCII(ess) {
		essence = ess // already canonical; avoid building a new string
	} else {
		essence = strings.ToLower(typ) + "/" + strings.ToLower(sub)
	}
	for params != "" {
		params = strings.TrimLeft(params, httpWhitespace)
		end := strings.IndexAny(params, ";=")
		if end < 0 {
			break
		}
		name := strings.ToLower(params[:end])
		if params[end] == ';' {
			params = params[end+1:]
			continue
		}
		params = params[end+1:]
		var value string
		if strings.HasPrefix(params, `"`) {
			value, params = collectQuoted(params)
			if i := strings.IndexByte(params, ';'); i >= 0 {
				params = params[i+1:]
			} else {
				params = ""
			}
		} else {
			if i := strings.IndexByte(params, ';'); i >= 0 {
				value, params = params[:i], params[i+1:]
			} else {
				value, params = params, ""
			}
			value = strings.TrimRight(value, httpWhitespace)
			if value == "" {
				continue
			}
		}
		if name == "charset" && charset == "" && isToken(name) && validParamValue(value) {
			charset = strings.ToLower(value)
		}
	}
	return essence, charset, true
}

const httpWhitespace = " \t\r\n"

func isLowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return false
		}
	}
	return true
}

// collectQuoted reads an HTTP quoted string (MIME Sniffing §4.4 step 11.8,
// Fetch "collect an HTTP quoted string" with the extract-value flag) from s,
// which starts with a quote; it returns the unescaped value and the rest.
func collectQuoted(s string) (value, rest string) {
	var b strings.Builder
	i := 1
	for i < len(s) {
		c := s[i]
		i++
		switch c {
		case '"':
			return b.String(), s[i:]
		case '\\':
			if i >= len(s) {
				b.WriteByte('\\')
				return b.String(), ""
			}
			b.WriteByte(s[i])
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ""
}

// splitOutsideQuotes splits s at sep bytes that are not inside a quoted
// string.
func splitOutsideQuotes(s string, sep byte) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			quoted = !quoted
		case c == '\\' && quoted:
			i++
		case c == sep && !quoted:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// isToken reports whether s is a non-empty HTTP token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c <= ' ' || c == 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validParamValue reports whether v uses only HTTP quoted-string token code
// points (tab, printable ASCII and bytes 0x80–0xFF).
func validParamValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\t' && (c < 0x20 || c == 0x7f) {
			return false
		}
	}
	return true
}

// genericTypes are declared types that say nothing about the content, so the
// body is sniffed instead (MIME Sniffing §7.1 step 1 treats the same values
// as "unknown").
var genericTypes = map[string]bool{
	"application/octet-stream": true,
	"application/unknown":      true,
	"unknown/unknown":          true,
	"binary/octet-stream":      true,
}

// SniffContentType decides the effective type of a body given its
// Content-Type header. It returns the header's type unless the header is
// missing, invalid or generic, or declares text (or XML/HTML/JSON) while the
// body starts with a binary signature (an image, PDF, archive, font, audio
// or video): then it returns the type the body shows, as
// http.DetectContentType (the MIME Sniffing standard's algorithm) finds it
// in the first 512 bytes. sniffed reports that the body decided. charset is
// the header's charset when its type is used.
func SniffContentType(header string, body []byte) (essence, charset string, sniffed bool) {
	declared, cs, ok := ParseContentType(header)
	return sniffParsed(declared, cs, ok, body)
}

// sniffParsed is SniffContentType after the header has been parsed.
func sniffParsed(declared, cs string, ok bool, body []byte) (essence, charset string, sniffed bool) {
	if ok && !genericTypes[declared] && !textual(declared) {
		return declared, cs, false
	}
	if ok && declared != "text/plain" && !genericTypes[declared] && !hasBinarySignature(body) {
		// The common case, a text type over text, needs no full sniff.
		return declared, cs, false
	}
	detected, _, _ := ParseContentType(http.DetectContentType(body))
	switch {
	case !ok || genericTypes[declared]:
		if len(body) == 0 && ok {
			return declared, cs, false
		}
		return detected, "", true
	case declared == "text/plain" && detected == "application/octet-stream":
		// MIME Sniffing §7.2: text/plain that holds binary bytes is binary.
		return detected, "", true
	case detected != "application/octet-stream" && !textual(detected):
		return detected, "", true
	}
	return declared, cs, false
}

// binarySignatures are the leading bytes of the binary formats the MIME
// Sniffing standard recognizes (§6.1 images, §6.2 audio and video, §6.3
// fonts, §6.4 archives, plus PDF and PostScript from §7.1), used as a fast
// pre-check before the full algorithm. A false positive only costs a call
// to http.DetectContentType.
var binarySignatures = []string{
	"\x89PNG", "\xff\xd8\xff", "GIF8", "RIFF", "BM", "\x00\x00\x01\x00", "\x00\x00\x02\x00",
	"%PDF-", "%!PS-Adobe-", "PK\x03\x04", "\x1f\x8b\x08", "Rar!\x1a\x07", "OggS\x00", "ID3", "FORM",
	"\x1aE\xdf\xa3", "wOFF", "wOF2", "OTTO", "\x00\x01\x00\x00", "ttcf", "\x00asm", "MThd", "\xff\xfb",
}

// hasBinarySignature reports whether body may start with a binary format
// (including signatures at an offset: MP4's "ftyp" box and EOT's magic).
func hasBinarySignature(body []byte) bool {
	for _, sig := range binarySignatures {
		if len(body) >= len(sig) && string(body[:len(sig)]) == sig {
			return true
		}
	}
	return len(body) >= 8 && string(body[4:8]) == "ftyp" || // MP4 family
		len(body) >= 36 && string(body[34:36]) == "LP" // Embedded OpenType
}

// textual reports whether a type is text that a binary signature can
// contradict.
func textual(essence string) bool {
	return strings.HasPrefix(essence, "text/") || strings.HasSuffix(essence, "+xml") ||
		essence == "application/xml" || essence == "application/xhtml+xml" || essence == "application/json"
}

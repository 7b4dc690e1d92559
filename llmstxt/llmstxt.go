// Package llmstxt parses llms.txt files (https://llmstxt.org): a Markdown
// file at a site's root that names the site (an H1), summarises it (a
// block quote) and lists, under H2 sections, links to the pages a language
// model should read. A crawler reads it for those links.
package llmstxt

import (
	"bufio"
	"bytes"
	"strings"
)

// Limits: input past MaxBytes is ignored, and at most MaxLinks links are
// returned.
const (
	MaxBytes = 1 << 20
	MaxLinks = 10_000
)

// File is a parsed llms.txt.
type File struct {
	Title   string // the H1
	Summary string // the block quote after it
	Links   []Link // in file order
}

// Link is one item of a section's list: "- [Title](url): notes".
type Link struct {
	Section string // the H2 above it; "Optional" marks links that may be skipped
	Title   string
	URL     string // as written; resolve it against the file's URL
	Notes   string
}

// Parse reads an llms.txt. It never fails: lines that are not what the
// format expects are skipped.
func Parse(b []byte) *File {
	if len(b) > MaxBytes {
		b = b[:MaxBytes]
	}
	f := &File{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, MaxBytes+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "# ") && f.Title == "":
			f.Title = strings.TrimSpace(line[2:])
		case strings.HasPrefix(line, "## "):
			section = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, ">") && f.Summary == "" && section == "":
			f.Summary = strings.TrimSpace(line[1:])
		case (strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "* ")) && len(f.Links) < MaxLinks:
			if l, ok := parseItem(line[2:]); ok {
				l.Section = section
				f.Links = append(f.Links, l)
			}
		}
	}
	return f
}

// parseItem reads "[Title](url)" and optional ": notes".
func parseItem(s string) (Link, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") {
		return Link{}, false
	}
	end := strings.Index(s, "](")
	if end < 0 {
		return Link{}, false
	}
	rest := s[end+2:]
	rp := strings.IndexByte(rest, ')')
	if rp < 0 {
		return Link{}, false
	}
	u := strings.TrimSpace(rest[:rp])
	u = strings.TrimSuffix(strings.TrimPrefix(u, "<"), ">")
	if i := strings.IndexAny(u, " \t"); i >= 0 {
		u = u[:i] // a link title follows the destination
	}
	if u == "" {
		return Link{}, false
	}
	notes := strings.TrimSpace(rest[rp+1:])
	notes = strings.TrimSpace(strings.TrimPrefix(notes, ":"))
	return Link{Title: s[1:end], URL: u, Notes: notes}, true
}
